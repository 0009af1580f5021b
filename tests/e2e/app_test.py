"""End-to-end test of the real Kairos desktop binary in a real webview.

Run under one session bus and one X display (tests/e2e/run_app_test.sh):
the fake notification server, WebKitWebDriver, the app and this script.

Scenario (issue #4):
1. create an event with a reminder through the editor;
2. its notification reaches the (test-owned) notification server with
   Snooze and Dismiss; Snooze -> it fires again after the snooze;
   Dismiss -> it is acknowledged in the database and does not fire again;
3. a reminder dismissed in the in-app reminder window has its OS
   notification closed (CloseNotification);
4. a task made in the task editor: its reminder fires, and ticking the
   task off in the sidebar's tasks list acknowledges the reminder and
   closes its notification;
5. a reminder in flight when the app is SIGKILLed is delivered again after
   the restart as a repeat that replaces its notification (`replaces_id`),
   so one notification stays open for it (crash_repeat.py, issue #20);
   then the app is SIGKILLed while a reminder is about to fall due, relaunched
   "later" (a test clock offset, never minutes of sleeping), and the reminder
   is delivered as missed and listed as missed in the reminder window;
6. closing the window ends WebKit's web process but not the app, and a
   second launch makes the running app open a new window;
7. the tray, through a fake StatusNotifierWatcher (what a panel is): its
   menu, pause/resume, Open after closing the window, Quit;
8. (between 4 and 5) an ICS feed from a test-owned HTTP server added
   through "Add calendar -> From URL...": its event in the agenda view, a
   change through "Refresh now", an HTML page shown as the feed's error
   beside the calendar with the last good copy kept, and the host's retry
   after the backoff reaching the open view without a reload
   (feeds_step.py);
9. (after 8) a CalDAV account on a real Radicale added through "Add
   calendar -> CalDAV account...": the calendar list, one chosen, the
   first sync in the background, the account's status, the server's event
   in the week view and its reminder firing (caldav_step.py).

Time: the app's clock is shifted (KAIROS_TEST_CLOCK_OFFSET_SECS) so that a
whole minute - where minute-resolution reminders fall - is a few seconds
ahead; a snooze lasts KAIROS_TEST_SNOOZE_SECS. Every wait is on an event
(a log record, a DOM condition) with a timeout.
"""

import datetime as dt
import os
import signal
import sqlite3
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import caldav_step  # noqa: E402
import caldav_edit_step  # noqa: E402
import crash_repeat  # noqa: E402
import feeds_step  # noqa: E402
import notifyctl as nc  # noqa: E402
import webdriver as wd  # noqa: E402
import window_step as win  # noqa: E402
from window_step import step, until  # noqa: E402
import trayctl  # noqa: E402
import x11  # noqa: E402

APP = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/debug/kairos-desktop")
WORK = tempfile.mkdtemp(prefix="kairos-e2e-")
LOG = os.path.join(WORK, "notify.jsonl")
TRAY_LOG = os.path.join(WORK, "tray.jsonl")
DB = os.path.join(WORK, "kairos.db")
SHOTS = os.environ.get("E2E_SHOTS")  # directory for screenshots, optional
LEAD = 25  # seconds from launch until the app's clock reaches a whole minute
SNOOZE = 4


def offset_for_next_minute(extra_minutes=0):
    """Clock offset making the app's 'now' LEAD s before a whole minute."""
    now = time.time()
    target = (int(now) // 60 + 2 + extra_minutes) * 60 - LEAD
    return int(target - now), target + LEAD  # offset, the whole minute (app time)


def wall(ts):
    return dt.datetime.fromtimestamp(ts, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M")


def set_value(s, css, value):
    s.execute(
        "const e = document.querySelector(arguments[0]); e.value = arguments[1];"
        "e.dispatchEvent(new Event('input', {bubbles: true}));"
        "e.dispatchEvent(new Event('change', {bubbles: true}));",
        css, value)


def app_env(offset):
    return dict(os.environ, KAIROS_DB=DB, HOME=WORK, TZ="UTC", LANG="en_US.UTF-8",
                KAIROS_TEST_CLOCK_OFFSET_SECS=str(offset), KAIROS_TEST_SNOOZE_SECS=str(SNOOZE),
                # No Secret Service on the test's private bus: CalDAV
                # passwords in the 0600 file beside the database, as the
                # CLI's tests do.
                KAIROS_SECRET_STORE="file")


def launch(offset):
    env = app_env(offset)
    drv = wd.Driver(env=env, log_path=os.path.join(WORK, "driver.log"))
    drv.start()
    s = drv.new_session(APP)
    s.wait_until(lambda: s.execute("return document.body.dataset.ready") == "1", timeout=30,
                 message="UI ready (body[data-ready=1])")
    return drv, s


def create_event(s, title, start_ts, minutes_before):
    s.wait_for("#new-event").click()
    s.wait_for("#editor")
    set_value(s, "#ev-title", title)
    set_value(s, "#ev-start", wall(start_ts))
    set_value(s, "#ev-end", wall(start_ts + 1800))
    s.find("#ev-add-alarm").click()
    s.wait_for(".alarm-row")
    set_value(s, ".alarm-row:last-child .alarm-kind", "before")
    set_value(s, ".alarm-row:last-child .alarm-minutes", str(minutes_before))
    set_value(s, ".alarm-row:last-child .alarm-related", "start")
    s.find("#ev-save").click()
    s.wait_until(lambda: not s.execute("const e = document.querySelector('#editor');"
                                       "return !!e && e.open"),
                 timeout=10, message="editor closed after save (error: %s)"
                 % s.execute("const e = document.querySelector('#ev-error'); return e && e.textContent"))


def create_task(s, title, due_ts, minutes_before):
    s.wait_for("#add-task").click()
    s.wait_for("#ev-task-done")
    set_value(s, "#ev-title", title)
    set_value(s, "#ev-start", wall(due_ts))
    s.find("#ev-add-alarm").click()
    s.wait_for(".alarm-row")
    set_value(s, ".alarm-row:last-child .alarm-kind", "before")
    set_value(s, ".alarm-row:last-child .alarm-minutes", str(minutes_before))
    s.find("#ev-save").click()
    s.wait_until(lambda: not s.execute("const e = document.querySelector('#editor');"
                                       "return !!e && e.open"),
                 timeout=10, message="task editor closed after save (error: %s)"
                 % s.execute("const e = document.querySelector('#ev-error'); return e && e.textContent"))


# The done checkbox of the listed task titled arguments[0], or null.
TASK_BOX_JS = ("const r = [...document.querySelectorAll('#task-list .task-row')]"
               ".find((x) => x.querySelector('.task-title')?.textContent === arguments[0]);"
               "return r ? r.querySelector('.task-done') : null;")


def open_panel(s):
    """Opens the reminder panel unless it is open already."""
    if not s.execute("const p = document.querySelector('#reminders-panel');"
                     "return !!p && p.offsetParent !== null"):
        s.find("#reminders-btn").click()
    s.wait_until(lambda: s.execute("const p = document.querySelector('#reminders-panel');"
                                   "return !!p && p.offsetParent !== null"),
                 timeout=10, message="reminder panel open")


def states(title):
    with sqlite3.connect(DB) as c:
        return [r[0] for r in c.execute(
            "SELECT state FROM instances WHERE payload->>'summary' = ? ORDER BY id", (title,))]


def shot(s, name):
    """Best effort (a failing test must not fail again here): the X screen,
    not WebKit's automation snapshot, which does not answer while the
    webview renders without hardware acceleration (the app's default) and
    holds the test up until it times out."""
    del s  # the screen shows the session's window
    if SHOTS:
        try:
            xshot(name)
        except Exception as e:  # noqa: BLE001
            step("screenshot %s not taken: %s" % (name, e))


def xshot(name):
    """The X screen (the real app's window) to SHOTS/name."""
    os.makedirs(SHOTS, exist_ok=True)
    display = os.environ["DISPLAY"]
    x11.screenshot(display, os.path.join(SHOTS, name), x11.window_rect(display))
    step("screenshot %s" % name)


def app_pids():
    return win.app_pids(APP)


def close_and_reopen(env):
    win.close_and_reopen(APP, env)


def start_at_login(s):
    win.start_at_login(s, WORK)


def tray_menu():
    win.tray_menu(APP, TRAY_LOG)


def kill_app(drv):
    """SIGKILLs the app, stops its driver, waits until it is gone."""
    pids = app_pids()
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    drv.stop()
    until(lambda: not app_pids(), 10, "killed app gone")
    return len(pids)


def main():
    srv = nc.start_server(LOG)
    tray = trayctl.start_host(TRAY_LOG)
    try:
        srv = run(srv)
    finally:
        nc.stop_server(srv)
        nc.stop_server(tray)
    step("PASS")


def run(srv):
    offset, minute = offset_for_next_minute()
    drv, s = launch(offset)
    try:
        step("create an event whose reminder is due at the next whole minute")
        create_event(s, "E2E standup", minute + 15 * 60, 15)
        first = nc.wait_for_call(LOG, "Notify", timeout=LEAD + 30, summary="E2E standup")
        assert "snooze" in first["actions"] and "dismiss" in first["actions"], first
        step("notified (id %d); Snooze" % first["id"])
        n = len(nc.read_log(LOG))
        nc.invoke_action(first["id"], "snooze")
        again = nc.wait_for_call(LOG, "Notify", timeout=SNOOZE + 20, after=n, summary="E2E standup")
        step("fired again after the snooze (id %d); Dismiss" % again["id"])
        nc.invoke_action(again["id"], "dismiss")
        deadline = time.monotonic() + 10
        while states("E2E standup")[-1:] != ["acknowledged"]:
            assert time.monotonic() < deadline, states("E2E standup")
            time.sleep(0.05)
        assert states("E2E standup") == ["snoozed", "acknowledged"], states("E2E standup")
        n = len(nc.read_log(LOG))
        try:
            nc.wait_for_call(LOG, "Notify", timeout=SNOOZE + 3, after=n, summary="E2E standup")
            raise AssertionError("a dismissed reminder fired again")
        except TimeoutError:
            step("dismissed: no further notification")

        step("a reminder dismissed in the reminder window closes its notification")
        minute2 = minute + 60
        create_event(s, "E2E review", minute2 + 10 * 60, 10)
        note = nc.wait_for_call(LOG, "Notify", timeout=90, summary="E2E review")
        open_panel(s)
        s.wait_until(lambda: s.execute("return document.querySelectorAll('.reminder-row').length") >= 1,
                     timeout=15, message="reminder row listed")
        shot(s, "reminder-window.png")
        s.find(".reminder-row .dismiss-btn").click()
        nc.wait_for_call(LOG, "CloseNotification", timeout=10, id=note["id"])
        step("notification %d closed by the app" % note["id"])

        step("a task's reminder fires; ticking it off in the tasks list closes it")
        minute3 = minute2 + 60
        create_task(s, "E2E task", minute3 + 10 * 60, 10)
        s.wait_until(lambda: s.execute(TASK_BOX_JS, "E2E task") is not None,
                     timeout=10, message="task listed")
        tnote = nc.wait_for_call(LOG, "Notify", timeout=90, summary="E2E task")
        s.execute("const b = (() => {" + TASK_BOX_JS + "})(); b.click();", "E2E task")
        nc.wait_for_call(LOG, "CloseNotification", timeout=10, id=tnote["id"])
        s.wait_until(lambda: s.execute(TASK_BOX_JS, "E2E task") is None,
                     timeout=10, message="done task left the list")
        assert states("E2E task") == ["acknowledged"], states("E2E task")
        step("task done: notification %d closed, reminder acknowledged" % tnote["id"])

        feeds_step.run(s, set_value, step, time.time() + offset)
        caldav_step.run(s, set_value, step, time.time() + offset, LOG, xshot if SHOTS else None,
                        then=lambda dav: caldav_edit_step.run(s, set_value, step, time.time() + offset, dav,
                                                              xshot if SHOTS else None))

        start_at_login(s)

        step("a reminder in flight at a SIGKILL replaces its notification after the restart")
        # The feeds step waits for the host's own retry (about a minute), so
        # minute3 + 60 may be gone: the next whole minute of the app's clock
        # at least 15 s ahead.
        minute4 = max(minute3 + 60, int(-(-(time.time() + offset + 15) // 60) * 60))
        create_event(s, "E2E in flight", minute4 + 5 * 60, 5)
        shown = nc.wait_for_call(LOG, "Notify", timeout=90, summary="E2E in flight")
        key = crash_repeat.key_of(DB, "E2E in flight")
        until(lambda: crash_repeat.recorded(DB, key, shown["id"]), 10,
              "delivery of %s recorded, id %d in <db>-notified" % (key, shown["id"]))
    except BaseException:
        shot(s, "failure-1.png")
        drv.stop()
        raise
    assert kill_app(drv) >= 1, "app process not found"
    crash_repeat.rewind_to_in_flight(DB, key)
    n = len(nc.read_log(LOG))
    drv, s = launch(offset)
    try:
        again = nc.wait_for_call(LOG, "Notify", timeout=30, after=n, summary="E2E in flight")
        assert again["replaces_id"] == shown["id"] == again["id"], (shown, again)
        open_now = crash_repeat.open_notes(nc.read_log(LOG), nc.open_ids(), "E2E in flight")
        assert open_now == [shown["id"]], open_now
        until(lambda: states("E2E in flight") == ["delivered"], 10, states("E2E in flight"))
        step("repeat replaced notification %d: one open for the reminder" % shown["id"])

        step("SIGKILL while a reminder is about to fall due")
        create_event(s, "E2E while down", minute4 + 60 + 5 * 60, 5)
        until(lambda: states("E2E while down") == ["pending"], 10, "planned before the kill")
    except BaseException:
        shot(s, "failure-2.png")
        drv.stop()
        raise
    assert kill_app(drv) >= 1, "app process not found"
    assert states("E2E while down") == ["pending"], states("E2E while down")
    # Relaunch 10 minutes "later": the reminder fell due while Kairos was
    # down. This time the notification service shows no buttons, so the
    # reminder window must come forward by itself.
    nc.stop_server(srv)
    srv = nc.start_server(LOG, no_actions=True)
    offset2 = offset + 10 * 60
    drv, s = launch(offset2)
    try:
        note = nc.wait_for_call(LOG, "Notify", timeout=30, summary="E2E while down")
        assert note["body"].startswith("Missed"), note
        assert note["actions"] == [], note
        s.wait_until(lambda: s.execute(
            "return document.querySelectorAll('.reminder-row.missed').length") >= 1,
            timeout=15, message="missed reminder listed without opening the panel")
        shot(s, "missed.png")
        step("missed reminder delivered and listed after the restart")
        close_and_reopen(app_env(offset2))
        tray_menu()
    finally:
        drv.stop()
    return srv


if __name__ == "__main__":
    main()
