"""Screenshots of the real Kairos app for docs/screenshots/ (issue #4).

Usage (from the repository root, after `make ui` and a debug build):
    dbus-run-session -- xvfb-run -a -s "-screen 0 1280x860x24" \
        /usr/bin/python3 scripts/screenshots.py [APP] [KAIROS_CLI]

Builds a demo database relative to today (events this week, one reminder
that fell due while "the app was closed" so the reminder window has a
missed row), then for each shot launches the app through WebKitWebDriver
with the settings it needs (theme, language) and saves the webview as PNG.
`SHOTS_ONLY=reminders.png,reminders-dark.png` takes only the shots named.
Look at every PNG before committing: a screenshot nobody looked at proves
nothing.
"""

import contextlib
import datetime as dt
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
import webdriver as wd  # noqa: E402

TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
APP = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(TARGET, "debug", "kairos-desktop"))
CLI = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else os.path.join(TARGET, "debug", "kairos"))
OUT = os.path.join(ROOT, "docs", "screenshots")
TZ = "Europe/Berlin"


def ics(events):
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Kairos//screenshots//EN"]
    for uid, summary, start, end, extra in events:
        lines += ["BEGIN:VEVENT", "UID:" + uid, "DTSTAMP:20260101T000000Z", "SUMMARY:" + summary]
        if len(start) == 8:
            lines += ["DTSTART;VALUE=DATE:" + start, "DTEND;VALUE=DATE:" + end]
        elif start.endswith("Z"):
            lines += ["DTSTART:" + start, "DTEND:" + end]
        else:
            lines += ["DTSTART;TZID=%s:%s" % (TZ, start), "DTEND;TZID=%s:%s" % (TZ, end)]
        lines += extra
        lines.append("END:VEVENT")
    lines.append("END:VCALENDAR")
    return "\r\n".join(lines) + "\r\n"


def alarm(minutes):
    return ["BEGIN:VALARM", "ACTION:DISPLAY", "DESCRIPTION:Reminder", "TRIGGER:-PT%dM" % minutes,
            "END:VALARM"]


def demo(today):
    monday = today - dt.timedelta(days=today.weekday())

    def at(day, hm):
        d = monday + dt.timedelta(days=day)
        return d.strftime("%Y%m%d") + "T" + hm.replace(":", "") + "00"

    def date(day):
        return (monday + dt.timedelta(days=day)).strftime("%Y%m%d")

    work = [
        ("standup", "Stand-up", at(0, "09:30"), at(0, "09:45"),
         ["RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"] + alarm(5)),
        ("one-one", "1:1 with Mei", at(1, "14:00"), at(1, "14:30"), ["RRULE:FREQ=WEEKLY"] + alarm(10)),
        ("review", "Design review", at(2, "11:00"), at(2, "12:30"), ["LOCATION:Room Kepler"] + alarm(15)),
        ("ny-sync", "Sync with New York", at(3, "16:00"), at(3, "17:00"), alarm(10)),
        ("renewal", "Contract renewal due", date(4), date(5), alarm(30 * 24 * 60)),
        ("retro", "Sprint retro", at(4, "15:00"), at(4, "16:00"), ["RRULE:FREQ=WEEKLY;INTERVAL=2"]),
    ]
    personal = [
        ("dentist", "Dentist", at(1, "08:00"), at(1, "08:45"), ["LOCATION:Main St 12"] + alarm(60)),
        ("lunch", "Lunch with Ana", at(3, "12:30"), at(3, "13:30"), alarm(15)),
        ("trip", "Weekend in Lisbon", date(5), date(7), []),
        ("pill", "Vitamin D", at(0, "08:00"), at(0, "08:05"), ["RRULE:FREQ=DAILY"] + alarm(0)),
        ("gym", "Gym", at(2, "18:30"), at(2, "19:30"), ["RRULE:FREQ=WEEKLY;BYDAY=WE,SA"]),
    ]
    # Due five minutes from now: the reminders shot starts the app "ten
    # minutes later", so it fires as missed at start.
    soon = dt.datetime.now(dt.timezone.utc) + dt.timedelta(minutes=20)
    s, e = soon.strftime("%Y%m%dT%H%M%SZ"), (soon + dt.timedelta(minutes=30)).strftime("%Y%m%dT%H%M%SZ")
    personal.append(("bank", "Call the bank", s, e, alarm(15)))
    return {"Work": work, "Personal": personal}


def build_db(path, today):
    tmp = tempfile.mkdtemp(prefix="kairos-shots-ics-")
    for name, events in demo(today).items():
        f = os.path.join(tmp, name + ".ics")
        with open(f, "w") as fh:
            fh.write(ics(events))
        subprocess.run([CLI, "--db", path, "import", f, "--calendar", name, "--tz", TZ], check=True,
                       stdout=subprocess.DEVNULL)
    # Closed explicitly: the database is in WAL mode, and the shots copy the
    # main file only, so the last connection must checkpoint before that.
    with contextlib.closing(sqlite3.connect(path)) as c, c:
        c.execute("UPDATE calendars SET color = '#3465a4' WHERE name = 'Work'")
        c.execute("UPDATE calendars SET color = '#c4432b' WHERE name = 'Personal'")
    shutil.rmtree(tmp)


def settings(path, **over):
    s = {"language": "en", "theme": "light", "time_zone": TZ, "week_start": 1,
         "snooze_choices": [5, 10, 15, 30, 60, 1440], "default_snooze": 10, "quiet_hours": None,
         "start_at_login": False, "default_calendar": None}
    s.update(over)
    with contextlib.closing(sqlite3.connect(path)) as c, c:
        c.execute("INSERT INTO meta (k, v) VALUES ('app.settings', ?) "
                  "ON CONFLICT (k) DO UPDATE SET v = excluded.v", (json.dumps(s),))


def shoot(base_db, name, actions, offset=0, crop=None, **over):
    """Launches the app on a copy of base_db with settings `over`, runs the
    actions and saves the window (or crop(session) -> (x, y, w, h) of it)."""
    only = os.environ.get("SHOTS_ONLY")
    if only and name not in only.split(","):
        return
    work = tempfile.mkdtemp(prefix="kairos-shot-")
    db = os.path.join(work, "kairos.db")
    shutil.copy(base_db, db)
    settings(db, **over)
    env = dict(os.environ, KAIROS_DB=db, HOME=work, TZ=TZ, LANG="en_US.UTF-8",
               KAIROS_TEST_CLOCK_OFFSET_SECS=str(offset))
    with wd.Driver(env=env) as drv, drv.new_session(APP) as s:
        s.wait_until(lambda: s.execute("return document.body.dataset.ready") == "1", timeout=30)
        s.execute("window.resizeTo && window.resizeTo(1200, 800)")
        for a in actions:
            a(s)
        # Let FullCalendar finish its layout of what the last action changed.
        s.execute_async("const done = arguments[arguments.length - 1];"
                        "requestAnimationFrame(() => requestAnimationFrame(() => done(1)));")
        path = os.path.join(OUT, name)
        grab(path, region=crop(s) if crop else None)
        print("screenshots: " + path, flush=True)
    shutil.rmtree(work, ignore_errors=True)


def grab(path, width=1200, height=800, region=None):
    """The app's window as the X server shows it. Not WebDriver's screenshot:
    with the webview's hardware acceleration off (the app's default) WebKit's
    automation snapshot never answers (measured with WebKitGTK 2.50.6), while
    the window paints normally. Under bare Xvfb the window sits at (0, 0)."""
    import gi
    gi.require_version("Gdk", "3.0")
    from gi.repository import Gdk
    root = Gdk.get_default_root_window()
    pb = Gdk.pixbuf_get_from_window(root, 0, 0, min(width, root.get_width()),
                                    min(height, root.get_height()))
    if pb is None:
        raise RuntimeError("could not read the X screen")
    if region:
        x, y, w, h = region
        pb = pb.new_subpixbuf(x, y, min(w, pb.get_width() - x), min(h, pb.get_height() - y))
    pb.savev(path, "png", [], [])


def click(css):
    return lambda s: s.wait_for(css, timeout=10).click()


def ensure_panel(s):
    """Opens the reminder panel unless a fired reminder opened it already."""
    visible = "const p = document.querySelector('#reminders-panel'); return !!p && p.offsetParent !== null"
    s.wait_until(lambda: s.execute("return document.querySelectorAll('.reminder-row').length") > 0
                 or s.execute(visible), timeout=20)
    if not s.execute(visible):
        s.find("#reminders-btn").click()


def main():
    os.makedirs(OUT, exist_ok=True)
    base = tempfile.mkdtemp(prefix="kairos-shots-")
    db = os.path.join(base, "kairos.db")
    build_db(db, dt.date.today())
    week = click('[data-view="week"]')
    open_event = click('.fc-event[data-uid="review"]')
    shoot(db, "month.png", [click('[data-view="month"]')])
    shoot(db, "week.png", [week])
    shoot(db, "editor.png", [week, open_event, lambda s: s.wait_for("#ev-title")])
    listed = [ensure_panel, lambda s: s.wait_until(
        lambda: s.execute("return document.querySelectorAll('.reminder-row').length") > 0, timeout=20)]
    shoot(db, "reminders.png", listed, offset=600)
    shoot(db, "reminders-dark.png", listed, offset=600, theme="dark")
    shoot(db, "reminders-zh-CN.png", listed, offset=600, language="zh-CN")
    shoot(db, "dark.png", [week], theme="dark")
    shoot(db, "zh-CN.png", [click('[data-view="month"]')], language="zh-CN")
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
