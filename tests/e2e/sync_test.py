"""End to end: the real desktop app on a paired database, a real
`kairos-server` process on 127.0.0.1 and a second device that is the
`kairos` CLI (issue #18, the part that works today).

1. a server (port 0, its address read from the line it prints), an invite;
   the app's database joins the account, a second database (the CLI device)
   joins with a code the first one made;
2. the app starts: its engine host holds the live sync connection;
3. an event imported on the CLI device reaches the app over sync and its
   reminder fires there (the test's notification server gets the Notify);
4. `kairos dismiss KEY` on the CLI device -> the app closes that
   notification (CloseNotification), pushed, never polled;
5. the app's database records the reminder as acknowledged by the other
   device.

Run under one session bus and one X display (tests/e2e/run_app_test.sh
sync_test.py APP): KAIROS_BIN and KAIROS_SERVER_BIN name the CLI and the
server (default: beside APP). Every wait is on an event with a timeout.
"""

import datetime as dt
import json
import os
import sqlite3
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import app_test as app  # noqa: E402  (its launch/env helpers; main() does not run)
import notifyctl as nc  # noqa: E402

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


def start_server():
    proc = subprocess.Popen([SERVER, "--data", DATA, "--listen", "127.0.0.1:0"],
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


def main():
    notifyd = nc.start_server(app.LOG)
    server, url = start_server()
    drv = None
    try:
        app.step("server at %s; pairing the app's database and a CLI device" % url)
        desk = kairos(app.DB, "sync", "join", url, invite("me"), "--name", "desktop")[0]
        code = kairos(app.DB, "sync", "pair")[0]["code"]
        laptop = kairos(OTHER, "sync", "join", url, code, "--name", "laptop")[0]
        assert desk["device"] != laptop["device"], (desk, laptop)

        drv, s = app.launch(0)
        app.step("app up on the paired database; importing on the CLI device")
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
        app.step("PASS")
    finally:
        if drv is not None:
            drv.stop()
        for pid in app.app_pids():
            os.kill(pid, 9)
        server.kill()
        server.wait()
        nc.stop_server(notifyd)


if __name__ == "__main__":
    main()
