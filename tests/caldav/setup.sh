#!/usr/bin/env bash
# The CalDAV tests (Radicale, Xandikos, vdirsyncer)'s Python venv (default target/caldav-pyenv, or $KAIROS_CALDAV_PYENV) with
# requirements.txt installed: scripts/pyenv.sh (idempotent).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
exec "$root/scripts/pyenv.sh" "${KAIROS_CALDAV_PYENV:-$root/target/caldav-pyenv}" "$here/requirements.txt"
