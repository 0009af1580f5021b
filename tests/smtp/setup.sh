#!/usr/bin/env bash
# The e-mail tests (aiosmtpd)'s Python venv (default target/smtp-pyenv, or $KAIROS_SMTP_PYENV) with
# requirements.txt installed: scripts/pyenv.sh (idempotent).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
exec "$root/scripts/pyenv.sh" "${KAIROS_SMTP_PYENV:-$root/target/smtp-pyenv}" "$here/requirements.txt"
