#!/usr/bin/python3
"""A fake StatusNotifierWatcher (the tray host of KDE, GNOME's AppIndicator
extension, waybar ...) for end-to-end tests of the app's tray.

Why: Xvfb has no panel, so nothing would show the tray icon and nothing
could click its menu. The app's tray goes through libayatana-appindicator,
which registers a StatusNotifierItem with this watcher and exports its menu
over D-Bus (com.canonical.dbusmenu). A test can then read that menu and click
its items exactly as a panel does (`trayctl.py`).

Run with Debian's /usr/bin/python3 (python3-dbus, python3-gi) on the session
bus of a `dbus-run-session`:

    /usr/bin/python3 fake_tray_host.py --log /tmp/tray.jsonl

Prints "READY" once it owns org.kde.StatusNotifierWatcher; exits 0 on
SIGTERM/SIGINT. Every registration is one JSON line in --log:
{"call": "RegisterStatusNotifierItem", "service": BUS_NAME, "path": PATH}.
"""
import argparse
import json
import sys
import time

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop

from fake_notifyd import serve

BUS_NAME = "org.kde.StatusNotifierWatcher"
PATH = "/StatusNotifierWatcher"
IFACE = "org.kde.StatusNotifierWatcher"
PROPS = "org.freedesktop.DBus.Properties"


class Watcher(dbus.service.Object):
    def __init__(self, bus, log):
        super().__init__(bus, PATH)
        self.items = []
        self.log = open(log, "a", encoding="utf-8") if log else None

    def record(self, **r):
        r["t"] = int(time.time() * 1000)
        if self.log:
            self.log.write(json.dumps(r, sort_keys=True) + "\n")
            self.log.flush()

    @dbus.service.method(IFACE, in_signature="s", out_signature="", sender_keyword="sender")
    def RegisterStatusNotifierItem(self, service, sender=None):
        # The argument is a bus name, or (libayatana-appindicator) an object
        # path on the caller's connection.
        if service.startswith("/"):
            name, path = sender, service
        else:
            name, path = service, "/StatusNotifierItem"
        self.items.append(name + path)
        self.record(call="RegisterStatusNotifierItem", service=str(name), path=str(path))
        self.StatusNotifierItemRegistered(name + path)

    @dbus.service.method(IFACE, in_signature="s", out_signature="")
    def RegisterStatusNotifierHost(self, service):
        self.record(call="RegisterStatusNotifierHost", service=str(service))

    @dbus.service.signal(IFACE, signature="s")
    def StatusNotifierItemRegistered(self, item):
        pass

    @dbus.service.signal(IFACE, signature="")
    def StatusNotifierHostRegistered(self):
        pass

    def props(self):
        return {
            "RegisteredStatusNotifierItems": dbus.Array(self.items, signature="s"),
            "IsStatusNotifierHostRegistered": dbus.Boolean(True),
            "ProtocolVersion": dbus.Int32(0),
        }

    @dbus.service.method(PROPS, in_signature="ss", out_signature="v")
    def Get(self, iface, prop):
        return self.props()[prop]

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, iface):
        return self.props()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--log", help="append one JSON line per registration here")
    args = ap.parse_args()
    DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    watcher = Watcher(bus, args.log)
    code = serve(bus, BUS_NAME, "fake_tray_host")
    del watcher
    return code


if __name__ == "__main__":
    sys.exit(main())
