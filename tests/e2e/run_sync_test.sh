#!/usr/bin/env bash
# Runs sync_test.py: the real app on a paired database, a real kairos-server
# and the kairos CLI as the second device, on one private session bus (the
# fake notification server, the app, WebKitWebDriver) and one Xvfb display.
# Usage: tests/e2e/run_sync_test.sh [APP_BINARY]   (kairos and kairos-server
# are taken from beside it)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
app=${1:-${CARGO_TARGET_DIR:-$here/../../target}/debug/kairos-desktop}
dir=$(dirname "$app")
for b in "$app" "$dir/kairos" "$dir/kairos-server"; do
  [[ -x $b ]] || { echo "run_sync_test: no binary at $b (cargo build -p kairos-desktop -p kairos-cli -p kairos-server)" >&2; exit 1; }
done
exec timeout 300 dbus-run-session -- xvfb-run -a -s "-screen 0 1280x860x24" \
  /usr/bin/python3 "$here/sync_test.py" "$app"
