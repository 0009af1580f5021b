"""End to end: the real desktop app on a paired database, a real
`kairos-server` process on 127.0.0.1 and a second device that is the
`kairos` CLI (issue #18, the part that works today).

1. a server (port 0, its address read from the line it prints); the app
   starts on a database that is not paired; in Settings → Sync a Join
   against a listener that accepts and never answers ends with "did not
   answer" within 15 s while the dialog stays usable; then the app joins
   with an invite through the same form, and "Add a device" gives the
   code the second database (the CLI device) joins with;
2. with no restart, the app's engine host starts the live sync
   connection (the status bar says "synced");
3. an event imported on the CLI device reaches the app over sync and its
   reminder fires there (the test's notification server gets the Notify);
4. `kairos dismiss KEY` on the CLI device -> the app closes that
   notification (CloseNotification), pushed, never polled;
5. the app's database records the reminder as acknowledged by the other
   device;
5b. "Dismiss here only", in the reminder window and as the notification's
   action: hidden in the app (its notification closed), but the CLI device
   still has the reminder pending, after a plain Dismiss made in the app
   later has reached it (ops arrive in order, so the barrier shows nothing
   of the here-only ones was sent);
6. the status bar's sync indicator (read from the DOM through the
   WebDriver session): "synced" from the start; the server is killed ->
   "offline" within 60 s; an event made in the app meanwhile waits in the
   outbox and the indicator counts it; the server restarted on the same
   port -> "synced" again with nothing waiting. The tray's menu (through
   the fake StatusNotifierWatcher) has the same line each time;
7. Leave in Settings → Sync (confirmed): the indicator goes, and the CLI
   device's list shows the app's device revoked.

Run under one session bus and one X display (tests/e2e/run_app_test.sh
sync_test.py APP): KAIROS_BIN and KAIROS_SERVER_BIN name the CLI and the
server (default: beside APP). Every wait is on an event with a timeout.
"""

import datetime as dt
import json
import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import app_test as app  # noqa: E402  (its launch/env helpers; main() does not run)
import notifyctl as nc  # noqa: E402
import trayctl  # noqa: E402

BIN_DIR = os.path.dirname(app.APP)
KAIROS = os.environ.get("KAIROS_BIN", os.path.join(BIN_DIR, "kairos"))
SERVER = os.environ.get("KAIROS_SERVER_BIN", os.path.join(BIN_DIR, "kairos-server"))
OTHER = os.path.join(app.WORK, "laptop.db")
DATA = os.path.join(app.WORK, "server")


def kairos(db, *args):
    out = subprocess.run([KAIROS, "--db", db, *args], capture_output=True, text=True,
                         timeout=60, env=dict(os.environ, TZ="UTC"))
    assert out.returncode == 0, "kairos %s: %s" % (args, out.stderr)
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def start_server(listen="127.0.0.1:0"):
    proc = subprocess.Popen([SERVER, "--data", DATA, "--listen", listen],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    got = {}

    def read():
        line = proc.stdout.readline()
        got["line"] = line
        for _ in proc.stdout:
            pass

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(20)
    assert "line" in got, "kairos-server announced no address within 20 s"
    return proc, json.loads(got["line"])["listening"]


def invite(account):
    out = subprocess.run([SERVER, "--data", DATA, "invite", account], capture_output=True,
                         text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["code"]


def ics(uid, summary, start):
    at = start.strftime("%Y%m%dT%H%M%SZ")
    return ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:e2e\r\nBEGIN:VEVENT\r\nUID:%s\r\n"
            "DTSTART:%s\r\nSUMMARY:%s\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:PT0S\r\n"
            "DESCRIPTION:x\r\nEND:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n" % (uid, at, summary))


def state(key):
    with sqlite3.connect(app.DB) as c:
        row = c.execute("SELECT state FROM instances WHERE key = ?", (key,)).fetchone()
    return row and row[0]


SYNC_JS = ("const e = document.querySelector('#status-sync');"
           "return e ? [e.dataset.state, e.textContent] : ['hidden', ''];")


def indicator(s, state, timeout, why):
    """Waits until the status bar's sync indicator is in `state`; returns its text."""
    got = s.wait_until(lambda: (lambda v: v[0] == state and v)(s.execute(SYNC_JS)), timeout=timeout,
                       message="sync indicator %r (%s)" % (state, why))
    return got[1]


def tray_line(prefix, timeout=20, having=""):
    """Waits until the tray menu has an item starting with `prefix` (and
    containing `having`); returns it."""
    found = {}

    def seen():
        found["items"] = trayctl.Menu(app.TRAY_LOG).items()
        return next((k for k in found["items"] if k.startswith(prefix) and having in k), None)
    deadline = time.monotonic() + timeout
    while not seen():
        assert time.monotonic() < deadline, "no tray item %r in %s" % (prefix, sorted(found["items"]))
        time.sleep(0.05)
    return seen()


def why(db, key):
    """`kairos why KEY`'s first line: "KEY: STATE (due …)"."""
    out = subprocess.run([KAIROS, "--db", db, "why", key], capture_output=True, text=True,
                         timeout=60, env=dict(os.environ, TZ="UTC"))
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()[0]


def check_here_only(s):
    """Step 5b: "Dismiss here only" (window and notification) stays on this device."""
    start = dt.datetime.now(dt.timezone.utc).replace(microsecond=0) + dt.timedelta(seconds=15)
    titles = {"window": "E2E here only (window)", "action": "E2E here only (notification)",
              "barrier": "E2E dismissed everywhere"}
    keys, notes = {}, {}
    for n, title in titles.items():
        path = os.path.join(app.WORK, "%s.ics" % n)
        with open(path, "w") as f:
            f.write(ics("here-%s@kairos" % n, title, start))
        kairos(OTHER, "import", path, "--tz", "UTC")
    for r in kairos(OTHER, "upcoming"):
        for n, title in titles.items():
            if r.get("summary") == title:
                keys[n] = r["key"]
    for n, title in titles.items():
        notes[n] = nc.wait_for_call(app.LOG, "Notify", timeout=60, summary=title)
        assert "dismiss_here" in notes[n]["actions"], notes[n]["actions"]
    app.step("three reminders fired in the app; the notifications offer %r"
             % notes["window"]["actions"][1::2])

    app.open_panel(s)
    row = '.reminder-row[data-key="%s"]' % keys["window"]
    s.wait_for(row, timeout=15)
    s.find(row + " .dismiss-here-btn").click()
    nc.wait_for_call(app.LOG, "CloseNotification", timeout=10, id=notes["window"]["id"])
    s.wait_until(lambda: not s.execute("return !!document.querySelector(arguments[0])", row),
                 timeout=10, message="the row left the reminder window")
    app.step("Dismiss here only in the reminder window: the app closed notification %d"
             % notes["window"]["id"])

    nc.invoke_action(notes["action"]["id"], "dismiss_here")
    app.until(lambda: state(keys["action"]) == "acknowledged", 10,
              "the notification's Dismiss here only acknowledged it in the app")
    app.step("Dismiss here only on the notification: acknowledged in the app")

    row = '.reminder-row[data-key="%s"]' % keys["barrier"]
    s.wait_for(row, timeout=15)
    s.find(row + " .dismiss-btn").click()

    def barrier_arrived():
        kairos(OTHER, "sync", "now", "--tz", "UTC")
        return why(OTHER, keys["barrier"]).split(": ")[1].startswith("acknowledged")
    app.until(barrier_arrived, 30, "the app's plain Dismiss reached the CLI device")
    for n in ("window", "action"):
        line = why(OTHER, keys[n])
        assert line.split(": ")[1].startswith("pending"), line
        assert state(keys[n]) == "acknowledged", state(keys[n])
    app.step("the plain Dismiss reached the CLI device; the two dismissed here only are "
             "still pending there: %r" % why(OTHER, keys["window"]))


def check_indicator(s, server, url):
    """Step 6: synced -> server killed -> offline (< 60 s), a change waits -> synced."""
    app.step("indicator: %r" % indicator(s, "synced", 30, "connected after start"))
    app.step("tray: %r" % tray_line("Synced "))
    t0 = time.monotonic()
    server.kill()
    server.wait()
    text = indicator(s, "offline", 60, "within 60 s of the server's death")
    assert text.startswith("Offline since "), text
    app.step("server killed: the indicator said %r %.2f s later" % (text, time.monotonic() - t0))
    start = time.time() + 3600
    app.create_event(s, "Made offline", start, 5)
    text = s.wait_until(lambda: (lambda v: v[0] == "offline" and "waiting" in v[1] and v[1])(
        s.execute(SYNC_JS)), timeout=30, message="the offline change counted as waiting")
    app.step("an event made offline waits in the outbox: %r" % text)
    # The tray is refreshed after the UI's indicator: wait for its count.
    app.step("tray: %r" % tray_line("Offline since ", having="waiting"))
    t0 = time.monotonic()
    server, again = start_server(url[len("ws://"):])
    assert again == url, (again, url)
    try:
        # The client retries with backoff of at most 30 s (+25 % jitter).
        text = indicator(s, "synced", 60, "after the server came back on the same port")
        assert "waiting" not in text, text
    except BaseException:
        server.kill()
        raise
    app.step("server back on %s: %r %.2f s later" % (url, text, time.monotonic() - t0))
    assert "waiting" not in tray_line("Synced "), "the tray's line follows"
    return server


PANEL_JS = "const e = document.querySelector('#sync-panel'); return e && e.dataset.state;"


def open_sync(s, want):
    """Opens Settings → Sync and waits for the panel in state `want`."""
    s.wait_for("#settings-btn", timeout=10).click()
    s.wait_for("#set-tab-sync", timeout=10).click()
    s.wait_until(lambda: s.execute(PANEL_JS) == want, timeout=20, message="sync panel %r" % want)


def fill(s, css, text):
    e = s.wait_for(css, timeout=10)
    e.clear()
    e.send_keys(text)


def join_in_app(s, url):
    """Step 1 in the app: a silent server first, then the real join and a code."""
    open_sync(s, "unpaired")
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # accepted by the kernel, never read
    try:
        fill(s, "#sync-server", "ws://127.0.0.1:%d" % silent.getsockname()[1])
        fill(s, "#sync-code", invite("me"))
        fill(s, "#sync-name", "desktop")
        t0 = time.monotonic()
        s.find("#sync-join").click()
        # The dialog stays usable while the request waits.
        s.find("#set-tab-general").click()
        assert s.execute("return document.querySelector('#set-general').hidden") is False
        s.find("#set-tab-sync").click()
        s.wait_for("#sync-error:not([hidden])", timeout=15)
        text = s.find("#sync-error").text()
        assert "did not answer in time" in text, text
        app.step("a server that never answers: %r after %.1f s" % (text, time.monotonic() - t0))
    finally:
        silent.close()
    fill(s, "#sync-server", url)
    fill(s, "#sync-code", invite("me"))
    s.find("#sync-join").click()
    s.wait_until(lambda: s.execute(PANEL_JS) == "paired", timeout=20, message="joined in the app")
    assert s.find("#sync-account-id").text() == "me"
    s.find("#sync-add").click()
    code = s.wait_for("#sync-new-code", timeout=20).text()
    app.step("joined through Settings → Sync; Add a device gave %s" % code)
    s.find("#settings .dialog-actions .ghost").click()
    return code


def leave_in_app(s):
    """Step 7: Leave (confirmed) stops the live connection."""
    open_sync(s, "paired")
    s.find("#sync-leave").click()
    s.wait_for("#sync-leave-confirm", timeout=10).click()
    s.wait_until(lambda: s.execute(PANEL_JS) == "unpaired", timeout=20, message="left in the app")
    s.find("#settings .dialog-actions .ghost").click()
    indicator(s, "hidden", 20, "no sync after Leave")
    app.step("left in Settings → Sync: the indicator is gone")


def main():
    notifyd = nc.start_server(app.LOG)
    tray = trayctl.start_host(app.TRAY_LOG)
    server, url = start_server()
    drv = None
    try:
        app.step("server at %s; the app starts on a database that is not paired" % url)
        drv, s = app.launch(0)
        indicator(s, "hidden", 10, "not paired")
        code = join_in_app(s, url)
        laptop = kairos(OTHER, "sync", "join", url, code, "--name", "laptop")[0]
        app.step("the CLI device joined with the app's code: %s" % laptop["device"])
        app.step("app synced with no restart: %r" % indicator(s, "synced", 30, "after the join"))
        app.step("importing on the CLI device")
        start = dt.datetime.now(dt.timezone.utc).replace(microsecond=0) + dt.timedelta(seconds=20)
        path = os.path.join(app.WORK, "standup.ics")
        with open(path, "w") as f:
            f.write(ics("sync-e2e@kairos", "E2E synced standup", start))
        kairos(OTHER, "import", path, "--tz", "UTC")
        key = next(r["key"] for r in kairos(OTHER, "upcoming")
                   if r.get("summary") == "E2E synced standup")

        note = nc.wait_for_call(app.LOG, "Notify", timeout=60, summary="E2E synced standup")
        app.step("the event came over sync and its reminder fired in the app (id %d)" % note["id"])

        t0 = time.monotonic()
        kairos(OTHER, "dismiss", key)
        nc.wait_for_call(app.LOG, "CloseNotification", timeout=15, id=note["id"])
        app.step("dismissed on the CLI device: the app closed the notification %.2f s later"
                 % (time.monotonic() - t0))
        app.until(lambda: state(key) == "acknowledged", 10, "acknowledged in the app's database")
        check_here_only(s)
        server = check_indicator(s, server, url)
        leave_in_app(s)
        listed = {d["name"]: d for d in kairos(OTHER, "sync", "devices")}
        assert listed["desktop"]["revoked"], listed
        app.step("PASS")
    finally:
        if drv is not None:
            drv.stop()
        for pid in app.app_pids():
            os.kill(pid, 9)
        server.kill()
        server.wait()
        nc.stop_server(notifyd)
        nc.stop_server(tray)


if __name__ == "__main__":
    main()
