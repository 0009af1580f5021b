#!/usr/bin/env bash
# Self-test of the e2e test tools (fake_notifyd.py, notifyctl.py, webdriver.py).
#
# Why: app tests will trust these tools to tell them what the app sent and to
# click for the user; this proves the tools themselves on this machine first,
# with no Kairos code involved. Runs everything under its own dbus-run-session
# (and xvfb-run for the WebDriver part), bounded by timeouts throughout.
#
#   tests/e2e/selftest.sh            # exit 0 = all passed, 1 = a check failed
#   SKIP_WEBDRIVER=1 tests/e2e/selftest.sh
# The WebDriver part uses MiniBrowser (libwebkit2gtk-4.1-0) and is skipped,
# with a message, when it or xvfb-run is missing.
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
PY=/usr/bin/python3  # Debian's: has python3-dbus and python3-gi
export PYTHONDONTWRITEBYTECODE=1

if [ -z "${_KAIROS_SELFTEST_TMP:-}" ]; then
  _KAIROS_SELFTEST_TMP="$(mktemp -d /tmp/kairos-e2e-selftest.XXXXXX)" || exit 1
  export _KAIROS_SELFTEST_TMP
  # The bus daemon and what it activates (portal and a11y services, noisy under
  # WebKitGTK) write to session.{out,err}; this script itself keeps the terminal.
  exec 3>&1 4>&2
  exec timeout -k 5 240 dbus-run-session -- bash "$0" "$@" \
    >"$_KAIROS_SELFTEST_TMP/session.out" 2>"$_KAIROS_SELFTEST_TMP/session.err"
fi
exec 1>&3 2>&4 3>&- 4>&-

T0=$(date +%s%N)
TMP="$_KAIROS_SELFTEST_TMP"
LOG="$TMP/notify.jsonl"
SIGS="$TMP/signals.jsonl"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; echo "(files in $TMP)" >&2; exit 1; }
ok() { echo "  ok  $*"; }

# wait_line FILE REGEX [SECONDS]: bounded poll (20 ms steps) for a line in FILE.
wait_line() {
  local deadline=$(( $(date +%s%N) + ${3:-5} * 1000000000 ))
  until grep -qE -- "$2" "$1" 2>/dev/null; do
    [ "$(date +%s%N)" -lt "$deadline" ] || return 1
    sleep 0.02
  done
}

n() { # n METHOD ARGS...: call the notification server like an app would
  timeout 10 gdbus call --session --dest org.freedesktop.Notifications \
    --object-path /org/freedesktop/Notifications --timeout 5 \
    --method "org.freedesktop.Notifications.$1" -- "${@:2}"
}
ctl() { timeout 15 "$PY" "$HERE/notifyctl.py" "$@"; }

echo "== fake_notifyd + notifyctl ($TMP)"
"$PY" "$HERE/fake_notifyd.py" --log "$LOG" >"$TMP/server.out" 2>"$TMP/server.err" &
SERVER=$!
PIDS+=("$SERVER")
wait_line "$TMP/server.out" '^READY$' 10 || fail "server not READY: $(cat "$TMP/server.err")"
ok "server READY"

"$PY" "$HERE/fake_notifyd.py" --log "$TMP/second.jsonl" >/dev/null 2>"$TMP/second.err"
[ $? -eq 2 ] && grep -q 'already owned' "$TMP/second.err" || fail "second server did not refuse"
ok "a second server refuses (name already owned, exit 2)"

"$PY" "$HERE/notifyctl.py" listen --count 5 --timeout 60 >"$SIGS" 2>"$TMP/listen.err" &
PIDS+=("$!")
wait_line "$SIGS" '^LISTENING$' 10 || fail "listener not ready: $(cat "$TMP/listen.err")"

[ "$(n GetServerInformation)" = "('kairos-fake-notifyd', 'Kairos', '1.0', '1.2')" ] ||
  fail "GetServerInformation"
[ "$(n GetCapabilities)" = "(['actions', 'body', 'body-markup'],)" ] || fail "GetCapabilities"
ok "GetServerInformation, GetCapabilities"

# 1: a reminder with actions; the person clicks "snooze"
out=$(n Notify kairos 0 '' 'Standup' 'in 5 min' \
  "['default', 'Open', 'snooze', 'Snooze 5 min']" "{'urgency': <byte 1>}" 5000)
[ "$out" = "(uint32 1,)" ] || fail "Notify returned $out"
ctl wait "$LOG" Notify id=1 summary=Standup body="in 5 min" app_name=kairos \
  'actions=["default","Open","snooze","Snooze 5 min"]' 'hints={"urgency":1}' \
  expire_timeout=5000 --timeout 5 >/dev/null || fail "Notify not logged as sent"
ok "Notify -> id 1, logged with actions and hints"
[ "$(ctl open-ids)" = "1" ] || fail "open-ids is not '1'"
ctl invoke 1 snooze || fail "invoke"
wait_line "$SIGS" '"signal": "ActionInvoked", "args": \[1, "snooze"\]' 5 ||
  fail "no ActionInvoked(1, snooze): $(cat "$SIGS")"
wait_line "$SIGS" '"signal": "NotificationClosed", "args": \[1, 2\]' 5 ||
  fail "no NotificationClosed(1, 2) after the action"
"$PY" - "$SIGS" "$LOG" <<'EOF' || fail "signal order/delay"
import json, sys
sig = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
log = [json.loads(l) for l in open(sys.argv[2])]
names = [s["signal"] for s in sig[:2]]
assert names == ["ActionInvoked", "NotificationClosed"], names
click = next(r["t"] for r in log if r["call"] == "InvokeAction")
assert sig[0]["t"] - click >= 10, "action signal only %d ms after the click" % (sig[0]["t"] - click)
EOF
ok "InvokeAction -> ActionInvoked(1, snooze) then NotificationClosed(1, 2), >= 10 ms later"
ctl invoke 1 snooze 2>"$TMP/err" && fail "clicking a closed notification succeeded"
grep -q 'not open' "$TMP/err" || fail "unclear error: $(cat "$TMP/err")"
ok "InvokeAction on a closed notification fails: $(grep -o "notification 1 is not open.*" "$TMP/err")"

# 2: replaces_id, CloseNotification (reason 3), unknown key refused
[ "$(n Notify kairos 0 '' A a '[]' '{}' -1)" = "(uint32 2,)" ] || fail "second id"
[ "$(n Notify kairos 2 '' A2 a2 "['default', '']" '{}' -1)" = "(uint32 2,)" ] ||
  fail "replaces_id not honoured"
ctl wait "$LOG" Notify id=2 replaces_id=2 summary=A2 >/dev/null || fail "replacement not logged"
ctl invoke 2 nosuchkey 2>"$TMP/err" && fail "unknown action key accepted"
grep -q 'offers actions' "$TMP/err" || fail "unclear error: $(cat "$TMP/err")"
n CloseNotification 2 >/dev/null || fail "CloseNotification"
wait_line "$SIGS" '"signal": "NotificationClosed", "args": \[2, 3\]' 5 || fail "no closed(2, 3)"
ctl wait "$LOG" CloseNotification id=2 was_open=true >/dev/null || fail "close not logged"
ok "replaces_id keeps id 2; unknown key refused; CloseNotification -> closed(2, 3)"

# 3: the person dismisses one, another expires
[ "$(n Notify kairos 0 '' B b '[]' '{}' -1)" = "(uint32 3,)" ] || fail "third id"
[ "$(n Notify kairos 0 '' C c '[]' '{}' -1)" = "(uint32 4,)" ] || fail "fourth id"
[ "$(ctl open-ids)" = "3 4" ] || fail "open-ids: $(ctl open-ids)"
ctl dismiss 3 && ctl expire 4 || fail "dismiss/expire"
wait_line "$SIGS" '"signal": "NotificationClosed", "args": \[3, 2\]' 5 || fail "no closed(3, 2)"
wait_line "$SIGS" '"signal": "NotificationClosed", "args": \[4, 1\]' 5 || fail "no closed(4, 1)"
[ -z "$(ctl open-ids)" ] || fail "something still open"
ok "Dismiss -> closed(3, 2); Expire -> closed(4, 1); nothing left open"

# 4: clean exit on SIGTERM
kill -TERM "$SERVER"
timeout 5 tail --pid="$SERVER" -f /dev/null || fail "server ignored SIGTERM"
wait "$SERVER"; rc=$?
[ $rc -eq 0 ] || fail "server exit code $rc after SIGTERM"
ok "SIGTERM -> exit 0"
# 5: the notifyctl library API, from the python3 on PATH (it needs no dbus module)
timeout 30 python3 - "$HERE" "$TMP/noact.jsonl" <<'EOF' || fail "notifyctl library / --no-actions"
import subprocess, sys
sys.path.insert(0, sys.argv[1])
import notifyctl as nc
proc = nc.start_server(sys.argv[2], no_actions=True, timeout=10)
def call(method, *args):
    return subprocess.run(["gdbus", "call", "--session", "--dest", "org.freedesktop.Notifications",
        "--object-path", "/org/freedesktop/Notifications", "--timeout", "5",
        "--method", "org.freedesktop.Notifications." + method, "--", *args],
        capture_output=True, text=True, timeout=10, check=True).stdout.strip()
assert call("GetCapabilities") == "(['body', 'body-markup'],)"
assert call("Notify", "kairos", "0", "", "D", "d", "['default', 'Open']", "{}", "-1") == "(uint32 1,)"
rec = nc.wait_for_call(sys.argv[2], "Notify", timeout=5, summary="D")
assert rec["actions"] == ["default", "Open"], rec
try:
    nc.invoke_action(1, "default")
    raise SystemExit("--no-actions server invoked an action")
except RuntimeError as e:
    assert "offers actions [], not 'default'" in str(e), e
assert nc.open_ids() == [1]
nc.dismiss(1)
nc.wait_for_call(sys.argv[2], "emit", timeout=5, id=1, reason=2)
assert nc.open_ids() == []
try:
    nc.wait_for_call(sys.argv[2], "Notify", timeout=0.1, summary="never")
    raise SystemExit("wait_for did not time out")
except TimeoutError:
    pass
assert nc.stop_server(proc) == 0
EOF
ok "library: start_server, wait_for_call, invoke_action/dismiss/open_ids, stop_server; --no-actions"
[ "$(grep -c . "$LOG")" -ge 15 ] || fail "log has fewer lines than calls"
echo "  notifications part: $(( ($(date +%s%N) - T0) / 1000000 )) ms"

echo "== webdriver.py against WebKitWebDriver + MiniBrowser"
MB=/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser
if [ -n "${SKIP_WEBDRIVER:-}" ]; then
  echo "  SKIPPED (SKIP_WEBDRIVER set)"
elif ! command -v WebKitWebDriver >/dev/null || ! command -v xvfb-run >/dev/null || [ ! -x "$MB" ]; then
  echo "  SKIPPED: needs WebKitWebDriver (webkit2gtk-driver), xvfb-run (xvfb) and $MB"
else
  T1=$(date +%s%N)
  timeout -k 5 120 xvfb-run -a "$PY" "$HERE/selftest_webdriver.py" --browser "$MB" \
    --out "$TMP/webdriver" >"$TMP/webdriver.out" 2>"$TMP/webdriver.err"
  rc=$?
  grep -E '^  ok|passed|FAIL|SKIP' "$TMP/webdriver.out"
  [ $rc -eq 0 ] || fail "webdriver selftest exit $rc (stderr in $TMP/webdriver.err)"
  echo "  webdriver part: $(( ($(date +%s%N) - T1) / 1000000 )) ms"
fi
echo "selftest passed in $(( ($(date +%s%N) - T0) / 1000000 )) ms"
rm -rf "$TMP"
