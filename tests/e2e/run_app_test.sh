#!/usr/bin/env bash
# Runs app_test.py against the real app binary: one private session bus
# (fake notification server, the app, WebKitWebDriver) and one Xvfb display.
# Usage: tests/e2e/run_app_test.sh [APP_BINARY]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
app=${1:-${CARGO_TARGET_DIR:-$here/../../target}/debug/kairos-desktop}
[[ -x $app ]] || { echo "run_app_test: no app binary at $app (cargo build -p kairos-desktop)" >&2; exit 1; }
# Debian's python3 has python3-dbus and python3-gi (the fake server needs them).
exec timeout 600 dbus-run-session -- xvfb-run -a -s "-screen 0 1280x860x24" \
  /usr/bin/python3 "$here/app_test.py" "$app"
