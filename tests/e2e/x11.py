"""Closing a window the way a window manager does, under bare Xvfb (no
window manager): shared by tests/e2e/app_test.py and scripts/bench_app.py.
Standard library only (ctypes); `xdotool` finds the windows."""

import ctypes
import ctypes.util
import os
import subprocess

WINDOW_TITLE = "Kairos"


class X11:
    """Just enough Xlib (through ctypes) to send WM_DELETE_WINDOW, which is
    what a window manager does when the user clicks the close button. Under
    bare Xvfb there is no window manager, so `wmctrl -c` has nobody to ask."""

    class ClientMessage(ctypes.Structure):
        _fields_ = [
            ("type", ctypes.c_int),
            ("serial", ctypes.c_ulong),
            ("send_event", ctypes.c_int),
            ("display", ctypes.c_void_p),
            ("window", ctypes.c_ulong),
            ("message_type", ctypes.c_ulong),
            ("format", ctypes.c_int),
            ("data", ctypes.c_long * 5),
        ]

    class Event(ctypes.Union):
        pass

    Event._fields_ = [("xclient", ClientMessage), ("pad", ctypes.c_long * 24)]

    def __init__(self, display):
        name = ctypes.util.find_library("X11") or "libX11.so.6"
        self.x = ctypes.CDLL(name)
        self.x.XOpenDisplay.restype = ctypes.c_void_p
        self.x.XOpenDisplay.argtypes = [ctypes.c_char_p]
        self.x.XInternAtom.restype = ctypes.c_ulong
        self.x.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        self.x.XSendEvent.argtypes = [
            ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_long, ctypes.c_void_p]
        self.x.XFlush.argtypes = [ctypes.c_void_p]
        self.x.XCloseDisplay.argtypes = [ctypes.c_void_p]
        self.d = self.x.XOpenDisplay(display.encode())
        if not self.d:
            raise RuntimeError(f"cannot open X display {display}")

    def close_window(self, wid):
        ev = self.Event()
        cm = ev.xclient
        cm.type = 33  # ClientMessage
        cm.send_event = 1
        cm.display = self.d
        cm.window = wid
        cm.message_type = self.x.XInternAtom(self.d, b"WM_PROTOCOLS", 0)
        cm.format = 32
        cm.data[0] = self.x.XInternAtom(self.d, b"WM_DELETE_WINDOW", 0)
        cm.data[1] = 0  # CurrentTime
        ev.xclient = cm
        ok = self.x.XSendEvent(self.d, wid, 0, 0, ctypes.byref(ev))
        self.x.XFlush(self.d)
        return ok != 0

    def shut(self):
        if self.d:
            self.x.XCloseDisplay(self.d)
            self.d = None


def visible_windows(display, title=WINDOW_TITLE):
    try:
        r = subprocess.run(
            ["xdotool", "search", "--onlyvisible", "--name", f"^{title}$"],
            env={**os.environ, "DISPLAY": display},
            capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [int(w) for w in r.stdout.split()]


def close_all(display, wins=None):
    """WM_DELETE_WINDOW to each of `wins` (default: every visible Kairos
    window); returns the windows asked to close."""
    wins = visible_windows(display) if wins is None else wins
    x = X11(display)
    try:
        for w in wins:
            x.close_window(w)
    finally:
        x.shut()
    return wins
