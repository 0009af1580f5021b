#!/usr/bin/env bash
# The differential test's Python venv (default target/pyenv, or $KAIROS_PYENV) with
# requirements.txt installed: scripts/pyenv.sh (idempotent).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
exec "$root/scripts/pyenv.sh" "${KAIROS_PYENV:-$root/target/pyenv}" "$here/requirements.txt"
