#!/usr/bin/env bash
# Usage: scripts/pyenv.sh VENV REQUIREMENTS
# Creates the Python venv VENV and installs REQUIREMENTS into it (the test
# harnesses' real servers and oracles: tests/*/setup.sh). Idempotent: a
# stamp with the requirements' hash makes a second run return at once.
set -euo pipefail
venv=${1:?usage: scripts/pyenv.sh VENV REQUIREMENTS}
req=${2:?usage: scripts/pyenv.sh VENV REQUIREMENTS}
stamp="$venv/.requirements.sha256"
want="$( (sha256sum "$req" 2>/dev/null || shasum -a 256 "$req") | cut -d' ' -f1)"
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    exit 0
fi
"${PYTHON:-python3}" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
echo "$want" > "$stamp"
echo "pyenv.sh: installed $req into $venv"
