#!/usr/bin/env bash
# Checks deploy/kairos-server.service with `systemd-analyze verify`.
# verify needs ExecStart's binary to exist: the unit is verified from a
# copy whose ExecStart names the freshly built binary (argument 1),
# everything else unchanged. A warning is a failure.
set -euo pipefail
bin=${1:?usage: deploy/check.sh PATH/TO/kairos-server}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed "s|^ExecStart=/usr/local/bin/kairos-server|ExecStart=$(realpath "$bin")|" \
  "$here/kairos-server.service" >"$tmp/kairos-server.service"
grep -q "^ExecStart=$(realpath "$bin") " "$tmp/kairos-server.service"
out=$(SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no "$tmp/kairos-server.service" 2>&1) || {
  echo "$out" >&2
  exit 1
}
if [[ -n $out ]]; then
  echo "systemd-analyze verify: $out" >&2
  exit 1
fi
echo "deploy/kairos-server.service: systemd-analyze verify passed"
