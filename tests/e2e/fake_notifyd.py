#!/usr/bin/python3
"""A fake org.freedesktop.Notifications server for end-to-end tests.

Why: the reminder path ends in a desktop notification (notify-rust over the
XDG D-Bus interface). Tests need a server that (a) records exactly what the app
sent and (b) can act like the person in front of the screen: click an action,
dismiss, let a notification expire. python3-dbusmock can do neither properly
(see /work/shared/FINDINGS.md), so this is a small real server.

Run with Debian's /usr/bin/python3 (needs python3-dbus and python3-gi), on the
session bus of a `dbus-run-session`:

    /usr/bin/python3 fake_notifyd.py --log /tmp/n.jsonl [--no-actions]

It prints "READY" (flushed) once it owns the bus name and exits 0 on SIGTERM
or SIGINT. Every call is one JSON line appended to --log and flushed.

Control interface (the "person"), same connection and bus name:
    path /org/kairos/Test, interface org.kairos.Test
    InvokeAction(u id, s key)  -> ActionInvoked(id, key), then NotificationClosed(id, 2)
    Dismiss(u id)              -> NotificationClosed(id, 2)
    Expire(u id)               -> NotificationClosed(id, 1)
    OpenIds() -> au            ids currently shown
Signals are emitted from a GLib timeout (--delay-ms, default 50): notify-rust
only listens after Notify has returned, and a 0 ms signal is lost.
Control calls on a notification that is not open (or an action key the
notification does not offer) fail with org.kairos.Test.Error, because a person
could not have done that either.
"""
import argparse
import json
import signal
import sys
import time

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

BUS_NAME = "org.freedesktop.Notifications"
NOTIFY_PATH = "/org/freedesktop/Notifications"
NOTIFY_IFACE = "org.freedesktop.Notifications"
TEST_PATH = "/org/kairos/Test"
TEST_IFACE = "org.kairos.Test"

# NotificationClosed reasons (Desktop Notifications spec 1.2)
EXPIRED, DISMISSED, CLOSED_BY_CALL = 1, 2, 3


class TestError(dbus.DBusException):
    _dbus_error_name = "org.kairos.Test.Error"


def now_ms():
    return int(time.time() * 1000)


def plain(value):
    """A hint value as JSON: scalars as themselves, containers as a tag."""
    if isinstance(value, dbus.Boolean):
        return bool(value)
    if isinstance(value, (dbus.Byte, dbus.Int16, dbus.Int32, dbus.Int64,
                          dbus.UInt16, dbus.UInt32, dbus.UInt64)):
        return int(value)
    if isinstance(value, dbus.Double):
        return float(value)
    if isinstance(value, (dbus.String, dbus.ObjectPath, dbus.Signature)):
        return str(value)
    return "<%s>" % type(value).__name__  # image-data structs, arrays, ...


class Recorder:
    def __init__(self, path):
        self.file = open(path, "a", encoding="utf-8") if path else None

    def write(self, **record):
        record["t"] = now_ms()
        if self.file:
            self.file.write(json.dumps(record, sort_keys=True) + "\n")
            self.file.flush()


class Notifications(dbus.service.Object):
    """The XDG interface the app talks to."""

    def __init__(self, bus, recorder, capabilities):
        super().__init__(bus, NOTIFY_PATH)
        self.recorder = recorder
        self.capabilities = capabilities
        self.next_id = 1
        self.open = {}  # id -> list of action keys

    @dbus.service.method(NOTIFY_IFACE, in_signature="", out_signature="as")
    def GetCapabilities(self):
        self.recorder.write(call="GetCapabilities")
        return self.capabilities

    @dbus.service.method(NOTIFY_IFACE, in_signature="", out_signature="ssss")
    def GetServerInformation(self):
        self.recorder.write(call="GetServerInformation")
        return ("kairos-fake-notifyd", "Kairos", "1.0", "1.2")

    @dbus.service.method(NOTIFY_IFACE, in_signature="susssasa{sv}i",
                         out_signature="u")
    def Notify(self, app_name, replaces_id, app_icon, summary, body, actions,
               hints, expire_timeout):
        if replaces_id:
            nid = int(replaces_id)
            self.next_id = max(self.next_id, nid + 1)
        else:
            nid = self.next_id
            self.next_id += 1
        actions = [str(a) for a in actions]
        keys = actions[0::2] if "actions" in self.capabilities else []
        self.open[nid] = keys
        self.recorder.write(
            call="Notify", id=nid, replaces_id=int(replaces_id),
            app_name=str(app_name), app_icon=str(app_icon),
            summary=str(summary), body=str(body), actions=actions,
            hints={str(k): plain(v) for k, v in hints.items()},
            expire_timeout=int(expire_timeout))
        return dbus.UInt32(nid)

    @dbus.service.method(NOTIFY_IFACE, in_signature="u", out_signature="")
    def CloseNotification(self, nid):
        nid = int(nid)
        was_open = nid in self.open
        self.recorder.write(call="CloseNotification", id=nid, was_open=was_open)
        if was_open:
            del self.open[nid]
            self.emit_later(lambda: self.NotificationClosed(nid, CLOSED_BY_CALL),
                            signal="NotificationClosed", id=nid,
                            reason=CLOSED_BY_CALL)

    @dbus.service.signal(NOTIFY_IFACE, signature="uu")
    def NotificationClosed(self, nid, reason):
        pass

    @dbus.service.signal(NOTIFY_IFACE, signature="us")
    def ActionInvoked(self, nid, action_key):
        pass

    def emit_later(self, emit, **record):
        """Emit a signal after the delay, from the main loop, and log it."""
        def fire():
            emit()
            self.recorder.write(call="emit", **record)
            return False
        GLib.timeout_add(self.delay_ms, fire)


class Control(dbus.service.Object):
    """What a test uses to act like the person at the screen."""

    def __init__(self, bus, recorder, notifications):
        super().__init__(bus, TEST_PATH)
        self.recorder = recorder
        self.n = notifications

    def take(self, nid, call, **extra):
        nid = int(nid)
        self.recorder.write(call=call, id=nid, **extra)
        if nid not in self.n.open:
            raise TestError("notification %d is not open (open: %s)"
                            % (nid, sorted(self.n.open)))
        return nid

    @dbus.service.method(TEST_IFACE, in_signature="us", out_signature="")
    def InvokeAction(self, nid, key):
        key = str(key)
        nid = self.take(nid, "InvokeAction", action_key=key)
        if key not in self.n.open[nid]:
            raise TestError("notification %d offers actions %s, not %r"
                            % (nid, self.n.open[nid], key))
        del self.n.open[nid]

        def both():
            self.n.ActionInvoked(nid, key)
            self.n.NotificationClosed(nid, DISMISSED)
        self.n.emit_later(both, signal="ActionInvoked+NotificationClosed",
                          id=nid, action_key=key, reason=DISMISSED)

    @dbus.service.method(TEST_IFACE, in_signature="u", out_signature="")
    def Dismiss(self, nid):
        self.close(self.take(nid, "Dismiss"), DISMISSED)

    @dbus.service.method(TEST_IFACE, in_signature="u", out_signature="")
    def Expire(self, nid):
        self.close(self.take(nid, "Expire"), EXPIRED)

    @dbus.service.method(TEST_IFACE, in_signature="", out_signature="au")
    def OpenIds(self):
        return dbus.Array(sorted(self.n.open), signature="u")

    def close(self, nid, reason):
        del self.n.open[nid]
        self.n.emit_later(lambda: self.n.NotificationClosed(nid, reason),
                          signal="NotificationClosed", id=nid, reason=reason)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--log", help="append one JSON line per call here")
    ap.add_argument("--no-actions", action="store_true",
                    help='leave "actions" out of GetCapabilities')
    ap.add_argument("--delay-ms", type=int, default=50,
                    help="delay before emitting signals (>= 10, see FINDINGS)")
    args = ap.parse_args()

    DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    recorder = Recorder(args.log)
    caps = ["body", "body-markup"] if args.no_actions else \
        ["actions", "body", "body-markup"]
    notifications = Notifications(bus, recorder, caps)
    notifications.delay_ms = args.delay_ms
    control = Control(bus, recorder, notifications)
    code = serve(bus, BUS_NAME, "fake_notifyd")
    del control
    return code


def serve(bus, bus_name, who):
    """Owns `bus_name`, prints READY and runs the GLib loop until SIGTERM or
    SIGINT (0); 2 when another connection owns the name. The objects to
    serve must exist already (shared with fake_tray_host.py)."""
    try:
        name = dbus.service.BusName(bus_name, bus, do_not_queue=True)
    except dbus.exceptions.NameExistsException:
        print("%s: %s is already owned on this bus" % (who, bus_name), file=sys.stderr)
        return 2
    loop = GLib.MainLoop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        GLib.unix_signal_add(GLib.PRIORITY_HIGH, sig, loop.quit)
    print("READY", flush=True)
    loop.run()
    del name
    return 0


if __name__ == "__main__":
    sys.exit(main())
