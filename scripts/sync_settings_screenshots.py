"""Screenshots of Settings → Sync in the real app, for
docs/screenshots/sync-settings*.png (issue #18).

Usage (from the repository root, after `make ui` and a debug build of
kairos-desktop, kairos and kairos-server; APP and KAIROS_CLI as for
scripts/screenshots.py, kairos-server beside the CLI):
    dbus-run-session -- xvfb-run -a -s "-screen 0 1280x860x24" \\
        /usr/bin/python3 scripts/sync_settings_screenshots.py [APP] [KAIROS_CLI]

On a real kairos-server on 127.0.0.1: the join form of a database that is
not paired, with the answer to a port where nothing listens; the app
joined through that form (the status bar turns "Synced" with no restart);
a paired database ("Desk", joined with the CLI, with a "Laptop" beside it)
with "Add a device" pressed (a new code, its expiry and its QR) and the
device list, in light, dark and Chinese. Look at every PNG before
committing.
"""

import datetime as dt
import json
import os
import shutil
import socket
import subprocess
import tempfile

import screenshots as sh

SERVER = os.path.join(os.path.dirname(sh.CLI), "kairos-server")
STATE_JS = "const e = document.querySelector('#sync-panel'); return e && e.dataset.state;"


def kairos(db, *args):
    out = subprocess.run([sh.CLI, "--db", db, *args], check=True, capture_output=True, text=True,
                         timeout=60)
    return out.stdout


def open_sync(state):
    def act(s):
        s.wait_for("#settings-btn", timeout=10).click()
        s.wait_for("#set-tab-sync", timeout=10).click()
        s.wait_until(lambda: s.execute(STATE_JS) == state, timeout=20,
                     message="sync panel %r" % state)
    return act


def fill(css, text):
    def act(s):
        e = s.wait_for(css, timeout=10)
        e.clear()
        e.send_keys(text)
    return act


def wait(css, timeout=20):
    return lambda s: s.wait_for(css, timeout=timeout)


def indicator(state):
    js = "const e = document.querySelector('#status-sync'); return e && e.dataset.state;"
    return lambda s: s.wait_until(lambda: s.execute(js) == state, timeout=60,
                                  message="sync indicator %r" % state)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    base = tempfile.mkdtemp(prefix="kairos-sync-settings-shots-")
    plain, desk, laptop = (os.path.join(base, n) for n in ("plain.db", "desk.db", "laptop.db"))
    data = os.path.join(base, "server")
    sh.build_db(plain, dt.date.today())
    shutil.copy(plain, desk)
    server = subprocess.Popen([SERVER, "--data", data, "--listen", "127.0.0.1:0"],
                              stdout=subprocess.PIPE, text=True)

    def invite():
        out = subprocess.run([SERVER, "--data", data, "invite", "me"], check=True,
                             capture_output=True, text=True).stdout
        return json.loads(out)["code"]

    try:
        url = json.loads(server.stdout.readline())["listening"]
        # Not paired: the form, after a Join against a port nobody listens on.
        nobody = "ws://127.0.0.1:%d" % free_port()
        sh.shoot(plain, "sync-settings-error.png",
                 [open_sync("unpaired"), fill("#sync-server", nobody), fill("#sync-code", "ABCD-EFGH-JKLM"),
                  fill("#sync-name", "Study"), lambda s: s.find("#sync-join").click(),
                  wait("#sync-error:not([hidden])")])
        # Joined through the form: the live connection starts at once.
        sh.shoot(plain, "sync-settings-joined.png",
                 [open_sync("unpaired"), fill("#sync-server", url), fill("#sync-code", invite()),
                  fill("#sync-name", "Study"), lambda s: s.find("#sync-join").click(),
                  lambda s: s.wait_until(lambda: s.execute(STATE_JS) == "paired", timeout=20),
                  wait(".device-row"), indicator("synced")])
        # Paired with the CLI, a second device beside it.
        kairos(desk, "sync", "join", url, invite(), "--name", "Desk")
        code = json.loads(kairos(desk, "sync", "pair"))["code"]
        kairos(laptop, "sync", "join", url, code, "--name", "Laptop")
        add = [open_sync("paired"), wait('.device-row[data-this="1"]'),
               lambda s: s.find("#sync-add").click(), wait(".sync-qr svg")]
        sh.shoot(desk, "sync-settings.png", add)
        sh.shoot(desk, "sync-settings-dark.png", add, theme="dark")
        sh.shoot(desk, "sync-settings-zh-CN.png", add, language="zh-CN")
    finally:
        server.kill()
        server.wait()
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
