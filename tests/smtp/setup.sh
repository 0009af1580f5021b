#!/usr/bin/env bash
# Create the SMTP test sink's Python venv (default target/smtp-pyenv: aiosmtpd) and install
# requirements.txt into it. Idempotent: a stamp with the requirements' hash makes a
# second run return at once.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${KAIROS_SMTP_PYENV:-$root/target/smtp-pyenv}"
req="$here/requirements.txt"
stamp="$venv/.requirements.sha256"
want="$( (sha256sum "$req" 2>/dev/null || shasum -a 256 "$req") | cut -d' ' -f1)"
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    exit 0
fi
"${PYTHON:-python3}" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
echo "$want" > "$stamp"
echo "setup.sh: installed requirements.txt into $venv"
