"""Screenshots of the status bar's sync indicator in the real app, for
docs/screenshots/sync-status*.png (issue #18).

Usage (from the repository root, after `make ui` and a debug build of
kairos-desktop, kairos and kairos-server):
    dbus-run-session -- xvfb-run -a -s "-screen 0 1280x860x24" \\
        /usr/bin/python3 scripts/sync_screenshots.py

The demo database of scripts/screenshots.py joins an account on a real
kairos-server on 127.0.0.1; the app is shot synced (light, Chinese), then
the server is stopped, an import made meanwhile waits in the outbox, and
the app is shot offline (light, dark). Each PNG is the bottom of the
window: the calendar's last row and the status bar. Look at every PNG
before committing.
"""

import datetime as dt
import json
import os
import shutil
import subprocess
import tempfile

import screenshots as sh

SERVER = os.path.join(os.path.dirname(sh.CLI), "kairos-server")
SYNC_JS = "const e = document.querySelector('#status-sync'); return e && e.dataset.state;"
BAR_JS = "const r = document.querySelector('#statusbar').getBoundingClientRect(); return [r.top, r.bottom];"


def indicator(state):
    return lambda s: s.wait_until(lambda: s.execute(SYNC_JS) == state, timeout=60,
                                  message="sync indicator %r" % state)


def bottom(s):
    top, end = s.execute(BAR_JS)
    return 0, max(0, int(top) - 60), 1200, int(end - top) + 60


def kairos(db, *args):
    subprocess.run([sh.CLI, "--db", db, *args], check=True, capture_output=True, timeout=60)


def main():
    base = tempfile.mkdtemp(prefix="kairos-sync-shots-")
    db, data = os.path.join(base, "kairos.db"), os.path.join(base, "server")
    sh.build_db(db, dt.date.today())
    server = subprocess.Popen([SERVER, "--data", data, "--listen", "127.0.0.1:0"],
                              stdout=subprocess.PIPE, text=True)
    try:
        url = json.loads(server.stdout.readline())["listening"]
        code = json.loads(subprocess.run([SERVER, "--data", data, "invite", "me"], check=True,
                                         capture_output=True, text=True).stdout)["code"]
        kairos(db, "sync", "join", url, code, "--name", "desktop")
        sh.shoot(db, "sync-status.png", [indicator("synced")], crop=bottom)
        sh.shoot(db, "sync-status-zh-CN.png", [indicator("synced")], crop=bottom, language="zh-CN")
    finally:
        server.kill()
        server.wait()
    # A change made while the server is away waits in the outbox.
    ics = os.path.join(base, "offline.ics")
    with open(ics, "w") as f:
        f.write(sh.ics([("offline", "Made offline", "20300101T090000", "20300101T100000", [])]))
    kairos(db, "import", ics, "--calendar", "Work", "--tz", sh.TZ)
    sh.shoot(db, "sync-status-offline.png", [indicator("offline")], crop=bottom)
    sh.shoot(db, "sync-status-dark.png", [indicator("offline")], crop=bottom, theme="dark")
    sh.shoot(db, "sync-status-offline-zh-CN.png", [indicator("offline")], crop=bottom,
             language="zh-CN")
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
