"""The CalDAV-account step of the real-app test (issue #19 §2, desktop):
a real Radicale on 127.0.0.1 (the venv of tests/caldav/setup.sh) holds a
calendar with an event whose reminder falls due in about half a minute;
the account is added through "Add calendar -> CalDAV account..." (sign in,
the calendar list, one calendar chosen), the host's first sync runs in the
background, the account's status says it synced, the server's event shows
in the week view, and its reminder fires as a notification.
"""

import base64
import datetime as dt
import os
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request

import notifyctl as nc

USER, PASSWORD = "erin", "e2e-app-password"
HERE = os.path.dirname(os.path.abspath(__file__))


def venv_python():
    root = os.path.abspath(os.path.join(HERE, "..", ".."))
    venv = os.environ.get("KAIROS_CALDAV_PYENV") or os.path.join(root, "target", "caldav-pyenv")
    py = os.path.join(venv, "bin", "python")
    assert os.path.exists(py), "%s is missing: run tests/caldav/setup.sh first" % py
    return py


class Radicale:
    """Radicale on a free port with one user (plain htpasswd), its storage
    in a temp dir; started when it says it listens (bounded)."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="kairos-e2e-dav-")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        users = os.path.join(self.dir, "users")
        with open(users, "w") as f:
            f.write("%s:%s\n" % (USER, PASSWORD))
        config = os.path.join(self.dir, "config")
        with open(config, "w") as f:
            f.write("[server]\nhosts = 127.0.0.1:%d\n[auth]\ntype = htpasswd\nhtpasswd_filename = %s\n"
                    "htpasswd_encryption = plain\n[storage]\nfilesystem_folder = %s\n[logging]\nlevel = info\n"
                    % (self.port, users, os.path.join(self.dir, "collections")))
        self.proc = subprocess.Popen([venv_python(), "-m", "radicale", "--config", config],
                                     env=dict(os.environ, PYTHONUNBUFFERED="1"),
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        listening = threading.Event()
        self.said = []

        def drain():
            for line in self.proc.stdout:
                if len(self.said) < 200:
                    self.said.append(line)
                if "Listening on" in line:
                    listening.set()
        threading.Thread(target=drain, daemon=True).start()
        if not listening.wait(60):
            self.stop()
            raise AssertionError("Radicale did not start within 60 s: %s" % "".join(self.said))
        self.url = "http://127.0.0.1:%d/" % self.port

    def request(self, method, path, body=b"", headers=None):
        req = urllib.request.Request(self.url.rstrip("/") + path, data=body, method=method)
        token = base64.b64encode(("%s:%s" % (USER, PASSWORD)).encode()).decode()
        req.add_header("Authorization", "Basic " + token)
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status

    def mkcalendar(self, name, display, color):
        body = ('<?xml version="1.0"?><C:mkcalendar xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav" '
                'xmlns:I="http://apple.com/ns/ical/"><D:set><D:prop><D:displayname>%s</D:displayname>'
                '<I:calendar-color>%s</I:calendar-color></D:prop></D:set></C:mkcalendar>' % (display, color))
        assert self.request("MKCALENDAR", "/%s/%s/" % (USER, name), body.encode()) == 201

    def put_event(self, calendar, uid, summary, start, minutes_before):
        stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        ics = "\r\n".join([
            "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//kairos e2e//EN", "BEGIN:VEVENT", "UID:" + uid,
            "DTSTAMP:" + stamp, "DTSTART:" + start.strftime("%Y%m%dT%H%M%SZ"), "DURATION:PT30M",
            "SUMMARY:" + summary, "BEGIN:VALARM", "ACTION:DISPLAY", "DESCRIPTION:" + summary,
            "TRIGGER:-PT%dM" % minutes_before, "END:VALARM", "END:VEVENT", "END:VCALENDAR", ""])
        status = self.request("PUT", "/%s/%s/%s.ics" % (USER, calendar, uid), ics.encode(),
                              {"Content-Type": "text/calendar"})
        assert status in (201, 204), status

    def stop(self):
        self.proc.kill()
        self.proc.wait(10)


TITLES_JS = "return [...document.querySelectorAll('.fc-event-title, .fc-list-event-title')].map((e) => e.textContent)"
ACCOUNT_JS = ("const r = document.querySelector('.dav-account'); if (!r) return null;"
              "const e = r.querySelector('.dav-error');"
              "return {name: r.querySelector('.dav-name').textContent, when: r.querySelector('.dav-when').textContent,"
              " error: e ? e.textContent : null};")
TITLE = "E2E CalDAV review"


def shown_in_agenda(s, title, timeout):
    """Waits until `title` is in the agenda (the next 30 days from today),
    then goes back to the week view. Not the week view itself: an event an
    hour ahead is in next week's view late on a Sunday."""
    s.find('[data-view="agenda"]').click()
    s.wait_until(lambda: title in (s.execute(TITLES_JS) or []), timeout=timeout,
                 message="%r in the agenda: %r" % (title, s.execute(TITLES_JS)))
    s.find('[data-view="week"]').click()


def settings(s, set_value, **values):
    """Saves the settings dialog with `values` (css id -> value)."""
    s.wait_for("#settings-btn").click()
    s.wait_for("#set-save")
    for css, value in values.items():
        set_value(s, "#" + css.replace("_", "-"), value)
    s.find("#set-save").click()
    s.wait_until(lambda: not s.execute("const d = document.querySelector('#settings'); return !!d && d.open"),
                 timeout=10, message="settings saved")


def quiet(s):
    """Before a screenshot: the reminder panel closed and no toast left
    (they go by themselves within 3.5 s)."""
    s.execute("const p = document.querySelector('#reminders-panel');"
              "if (p && p.offsetParent !== null) document.querySelector('#reminders-close').click();")
    s.wait_until(lambda: not s.execute("return document.querySelectorAll('.toast').length"), timeout=15,
                 message="toasts gone")


def open_choices(s, set_value, dav):
    """The dialog at its calendar list (E2E Team ticked)."""
    s.wait_for("#add-calendar").click()
    s.wait_for("#add-calendar-caldav").click()
    s.wait_for("#caldav-dialog")
    set_value(s, "#dav-url", dav.url)
    set_value(s, "#dav-user", USER)
    set_value(s, "#dav-password", PASSWORD)
    s.find("#dav-next").click()
    s.wait_until(lambda: s.execute("return document.querySelector('#caldav-dialog')?.dataset.step") == "choose",
                 timeout=30, message="the calendar list")


def themed_shots(s, set_value, dav, shot):
    """Dark and 简体中文 screenshots of the status and the calendar list
    (only when screenshots are asked for); English and light again after."""
    for suffix, values, theme in (("-dark", {"set_theme": "dark"}, "dark"),
                                  ("-zh-CN", {"set_theme": "light", "set_language": "zh-CN"}, "light")):
        settings(s, set_value, **values)
        s.wait_until(lambda: s.execute("return document.documentElement.dataset.theme") == theme
                     and s.execute("return !!document.querySelector('.dav-account .dav-when')"),
                     timeout=10, message="theme %s applied" % theme)
        quiet(s)
        shot("caldav-status%s.png" % suffix)
        open_choices(s, set_value, dav)
        shot("caldav-choose%s.png" % suffix)
        s.execute("document.querySelector('#caldav-dialog').close()")
    settings(s, set_value, set_language="en", set_theme="system")


def run(s, set_value, step, app_now, log, shot=None, then=None):
    """Runs the step in session `s`; `app_now` is the app's clock (epoch
    s), `log` the fake notification server's log; `shot(name)`, when
    given, takes a screenshot (light, then dark and 简体中文 at the end);
    `then(dav)`, when given, runs next while Radicale still runs."""
    shots = shot is not None
    shot = shot or (lambda name: None)
    t0 = time.monotonic()
    dav = Radicale()
    try:
        dav.mkcalendar("team", "E2E Team", "#e76f51ff")
        dav.mkcalendar("home", "E2E Home", "#2a9d8fff")
        # Due about 35 s from now on the app's clock: time to add the
        # account and for the first sync (the reminder is 10 min before).
        start = dt.datetime.fromtimestamp(app_now + 35 + 600, dt.timezone.utc).replace(microsecond=0)
        dav.put_event("team", "e2e-dav-1", TITLE, start, 10)
        step("Radicale on %s with two calendars, one event in E2E Team" % dav.url)

        s.wait_for("#add-calendar").click()
        s.wait_for("#add-calendar-caldav").click()
        s.wait_for("#caldav-dialog")
        set_value(s, "#dav-url", dav.url)
        set_value(s, "#dav-user", USER)
        set_value(s, "#dav-password", PASSWORD)
        s.find("#dav-next").click()
        s.wait_until(lambda: s.execute("return document.querySelector('#caldav-dialog')?.dataset.step") == "choose",
                     timeout=30, message="the calendar list (error: %s)"
                     % s.execute("const e = document.querySelector('#dav-error'); return e && e.textContent"))
        names = s.execute("return [...document.querySelectorAll('.dav-cal-name')].map((e) => e.textContent)")
        assert sorted(names) == ["E2E Home", "E2E Team"], names
        # Only E2E Team.
        s.execute("document.querySelectorAll('input.dav-pick').forEach((b) => {"
                  " if (b.checked !== (b.value === 'E2E Team')) b.click(); })")
        if shots:
            quiet(s)
        shot("caldav-choose.png")
        s.find("#dav-next").click()
        s.wait_until(lambda: not s.execute("return !!document.querySelector('#caldav-dialog')"), timeout=30,
                     message="dialog closed after Add (error: %s)"
                     % s.execute("const e = document.querySelector('#dav-error'); return e && e.textContent"))
        step("account added through Add calendar -> CalDAV account (E2E Team chosen)")

        s.wait_until(lambda: (s.execute(ACCOUNT_JS) or {}).get("when", "").startswith("Synced"), timeout=30,
                     message="the account's status after the first sync: %r" % s.execute(ACCOUNT_JS))
        acc = s.execute(ACCOUNT_JS)
        assert acc["error"] is None and acc["name"] == "%s · 127.0.0.1:%d" % (USER, dav.port), acc
        shown_in_agenda(s, TITLE, 15)
        cals = s.execute("return [...document.querySelectorAll('.cal-row:has(.cal-dav-badge) .cal-name')]"
                         ".map((e) => e.textContent)")
        assert cals == ["E2E Team"], cals
        if shots:
            quiet(s)
        shot("caldav-status.png")
        step("first sync in the background: %r; the event in the agenda" % acc["when"])

        note = nc.wait_for_call(log, "Notify", timeout=90, summary=TITLE)
        step("the server event's reminder fired (notification %d)" % note["id"])
        if shots:
            themed_shots(s, set_value, dav, shot)
        if then is not None:
            then(dav)
    finally:
        dav.stop()
    step("CalDAV step took %.0f s" % (time.monotonic() - t0))
