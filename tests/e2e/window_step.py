"""The app's window and tray as a person meets them, for app_test.py: close
and reopen (the web process goes, the app stays), start at login, the tray's
menu. Every wait is bounded."""

import os
import subprocess
import time

import procs
import trayctl
import x11


def step(msg):
    print("e2e: " + msg, flush=True)


def app_pids(app_path):
    """PIDs whose executable is the app binary. Not `pgrep -f APP`: the
    command lines of this script, xvfb-run, dbus-run-session and timeout all
    contain the app's path too, and SIGKILL would take the test down."""
    want = os.path.realpath(app_path)
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            exe = os.readlink("/proc/%s/exe" % d)
        except OSError:
            continue
        if exe == want:
            pids.append(int(d))
    return pids


def web_processes(app):
    return [p for p in procs.descendants(app)
            if (procs.proc_stat(p) or ("",))[0].startswith("WebKitWebProces")]


def network_processes(app):
    return [p for p in procs.descendants(app)
            if (procs.proc_stat(p) or ("",))[0].startswith("WebKitNetworkP")]


# What src-tauri/src/webkit_env.rs gives WebKit's processes by restarting
# the app once (the test's environment sets none of them).
WEBKIT_ENV = {"WEBKIT_DISABLE_DMABUF_RENDERER": "1"}


def environ(pid):
    with open("/proc/%d/environ" % pid, "rb") as f:
        pairs = [kv.partition(b"=") for kv in f.read().split(b"\0") if kv]
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, _, v in pairs}


def check_webkit_env(app):
    """The web process runs with webkit_env.rs's variables."""
    for pid in web_processes(app):
        got = {k: environ(pid).get(k) for k in WEBKIT_ENV}
        assert got == WEBKIT_ENV, "web process %d environment %s, want %s" % (pid, got, WEBKIT_ENV)
    step("web process runs with %s" % WEBKIT_ENV)


def shows_ui(display):
    """The window shows a rendered page (a blank webview is one colour)."""
    rect = x11.window_rect(display)
    return rect is not None and x11.distinct_rows(display, rect) > 20


def until(cond, timeout, message):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, message
        time.sleep(0.05)


def close_and_reopen(app_path, env):
    """Closing the window ends WebKit's web and network processes (their
    memory) but not the app; a second launch hands over to the first, which
    makes a new window, and WebKit starts both processes again. (The
    WebDriver session ends with the network process: use it no more.)"""
    display = os.environ["DISPLAY"]
    [app] = app_pids(app_path)
    assert web_processes(app), "a web process while the window is open"
    check_webkit_env(app)
    assert network_processes(app), "a network process while the window is open"
    assert x11.close_all(display), "the window is visible"
    until(lambda: not x11.visible_windows(display) and not web_processes(app)
          and not network_processes(app), 15,
          "window, web and network process gone after closing (%s)"
          % [procs.proc_stat(p) for p in procs.descendants(app)])
    assert app_pids(app_path) == [app], "the app lives on in the tray"
    step("window closed: web and network process gone, the app lives on")
    second = subprocess.run([app_path], env=env, timeout=30, capture_output=True, text=True)
    assert second.returncode == 0, second.stderr[-2000:]
    until(lambda: x11.visible_windows(display) and web_processes(app)
          and network_processes(app), 20,
          "a new window, web and network process after a second launch")
    until(lambda: shows_ui(display), 20, "the new window shows the calendar, not a blank page")
    assert app_pids(app_path) == [app], "the second launch handed over and exited"
    step("second launch: the running app opened a new window showing the calendar")


def close_window():
    display = os.environ["DISPLAY"]
    x11.close_all(display)
    until(lambda: not x11.visible_windows(display), 15, "window closed")


def autostart_entries(work):
    d = os.path.join(work, ".config", "autostart")
    return sorted(f for f in os.listdir(d) if f.endswith(".desktop")) if os.path.isdir(d) else []


def start_at_login(s, work):
    """Settings > Start at login writes an XDG autostart entry and removes it."""
    assert autostart_entries(work) == [], autostart_entries(work)
    for on in (True, False):
        s.wait_for("#settings-btn").click()
        s.wait_for("#set-login")
        if s.execute("return document.querySelector('#set-login').checked") != on:
            s.find("#set-login").click()
        s.find("#set-save").click()
        until(lambda: bool(autostart_entries(work)) == on, 10,
              "autostart entry %s (%s)" % ("written" if on else "removed", autostart_entries(work)))
        if on:
            with open(os.path.join(work, ".config", "autostart", autostart_entries(work)[0])) as f:
                entry = f.read()
            assert "Exec=" in entry and "kairos-desktop" in entry, entry
        s.wait_until(lambda: not s.execute("const d = document.querySelector('#settings');"
                                           "return !!d && d.open"), timeout=10,
                     message="settings dialog closed after save")
    step("settings: start at login writes and removes the autostart entry")


def tray_menu(app_path, tray_log):
    """The tray, through a fake StatusNotifierWatcher (a panel): its menu,
    pause and resume, Open after the window was closed, and Quit."""
    [app] = app_pids(app_path)
    items = trayctl.Menu(tray_log).items()
    for label in ("Open Kairos", "Reminders…", "Pause for 1 hour", "Pause until tomorrow", "Quit Kairos"):
        assert label in items, (label, sorted(items))
    assert items["Reminders on"][1] is False and items["Resume reminders"][1] is False, items
    trayctl.Menu(tray_log).click("Pause for 1 hour")
    until(lambda: any(k.startswith("Paused until") for k in trayctl.Menu(tray_log).items()), 10,
          "tray shows the pause")
    assert trayctl.Menu(tray_log).items()["Resume reminders"][1], "resume enabled while paused"
    trayctl.Menu(tray_log).click("Resume reminders")
    until(lambda: "Reminders on" in trayctl.Menu(tray_log).items(), 10, "tray shows reminders on")
    step("tray: pause for 1 hour, then resume")
    close_window()
    until(lambda: not web_processes(app) and not network_processes(app), 15,
          "web and network process gone")
    trayctl.Menu(tray_log).click("Open Kairos")
    display = os.environ["DISPLAY"]
    until(lambda: x11.visible_windows(display) and web_processes(app), 20, "tray Open made a window")
    until(lambda: shows_ui(display), 20, "the window from tray Open shows the calendar")
    step("tray: Open after the window was closed")
    trayctl.Menu(tray_log).click("Quit Kairos")
    until(lambda: not app_pids(app_path), 15, "Quit ends the app")
    step("tray: Quit ends the app")
