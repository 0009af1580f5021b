"""Closing a window the way a window manager does, under bare Xvfb (no
window manager), and a screenshot of the screen: shared by
tests/e2e/app_test.py and scripts/bench_app.py.
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


def window_rect(display, title=WINDOW_TITLE):
    """(x, y, width, height) of the first visible window called `title`,
    or None."""
    wins = visible_windows(display, title)
    if not wins:
        return None
    r = subprocess.run(["xdotool", "getwindowgeometry", "--shell", str(wins[0])],
                       env={**os.environ, "DISPLAY": display}, capture_output=True, text=True, timeout=5)
    g = dict(line.split("=", 1) for line in r.stdout.split() if "=" in line)
    try:
        return int(g["X"]), int(g["Y"]), int(g["WIDTH"]), int(g["HEIGHT"])
    except (KeyError, ValueError):
        return None


def grab(display, rect=None):
    """(width, height, rows): the X screen (or `rect`: x, y, width, height)
    as RGB rows (XGetImage through ctypes)."""
    class XImage(ctypes.Structure):
        _fields_ = [("width", ctypes.c_int), ("height", ctypes.c_int), ("xoffset", ctypes.c_int),
                    ("format", ctypes.c_int), ("data", ctypes.POINTER(ctypes.c_ubyte)),
                    ("byte_order", ctypes.c_int), ("bitmap_unit", ctypes.c_int),
                    ("bitmap_bit_order", ctypes.c_int), ("bitmap_pad", ctypes.c_int),
                    ("depth", ctypes.c_int), ("bytes_per_line", ctypes.c_int),
                    ("bits_per_pixel", ctypes.c_int)]

    x = X11(display)
    try:
        lib = x.x
        lib.XDefaultRootWindow.restype = ctypes.c_ulong
        lib.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
        lib.XDisplayWidth.argtypes = lib.XDisplayHeight.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.XGetImage.restype = ctypes.POINTER(XImage)
        lib.XGetImage.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_int,
                                  ctypes.c_uint, ctypes.c_uint, ctypes.c_ulong, ctypes.c_int]
        root = lib.XDefaultRootWindow(x.d)
        left, top = 0, 0
        w, h = lib.XDisplayWidth(x.d, 0), lib.XDisplayHeight(x.d, 0)
        if rect:
            left, top = max(rect[0], 0), max(rect[1], 0)
            w, h = min(rect[2], w - left), min(rect[3], h - top)
        img = lib.XGetImage(x.d, root, left, top, w, h, 0xFFFFFFFF, 2)  # ZPixmap
        if not img:
            raise RuntimeError("XGetImage failed")
        im = img.contents
        if im.bits_per_pixel != 32:
            raise RuntimeError("unsupported X image depth %d" % im.bits_per_pixel)
        raw = ctypes.string_at(im.data, im.bytes_per_line * h)
        rows = []
        for y in range(h):
            line = raw[y * im.bytes_per_line:y * im.bytes_per_line + w * 4]
            rgb = bytearray(w * 3)
            rgb[0::3], rgb[1::3], rgb[2::3] = line[2::4], line[1::4], line[0::4]  # BGRX -> RGB
            rows.append(bytes(rgb))
    finally:
        x.shut()
    return w, h, rows


def distinct_rows(display, rect=None):
    """How many different pixel rows the screen (or `rect`) shows: a page
    that rendered shows many, a blank webview one."""
    _, _, rows = grab(display, rect)
    return len(set(rows))


def screenshot(display, path, rect=None):
    """Writes the X screen (or `rect`) to `path` as a PNG (`grab`, zlib for
    the PNG; the WebDriver snapshot does not answer for a webview without
    hardware acceleration, and no ImageMagick is needed)."""
    import struct
    import zlib

    w, h, rows = grab(display, rect)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(b"".join(b"\x00" + r for r in rows), 6)) + chunk(b"IEND", b""))
    with open(path, "wb") as f:
        f.write(png)
