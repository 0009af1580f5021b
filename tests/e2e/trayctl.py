"""Reads and clicks the app's tray menu as a panel does: the item registered
with fake_tray_host.py, its `Menu` property, and com.canonical.dbusmenu
(GetLayout, Event "clicked"). Blocking D-Bus calls, no main loop needed."""

import json
import os
import time

import dbus

import notifyctl as nc

HERE = os.path.dirname(os.path.abspath(__file__))
HOST = os.path.join(HERE, "fake_tray_host.py")
ITEM_IFACE = "org.kde.StatusNotifierItem"
MENU_IFACE = "com.canonical.dbusmenu"


def start_host(log_path, timeout=10.0):
    """Start fake_tray_host on the current session bus; return once READY
    (stop it with notifyctl.stop_server)."""
    return nc.start_ready([nc.DEBIAN_PYTHON, HOST, "--log", log_path], timeout)


def registered(log_path):
    try:
        with open(log_path, encoding="utf-8") as f:
            rows = [json.loads(x) for x in f.read().split("\n")[:-1] if x]
    except FileNotFoundError:
        return []
    return [r for r in rows if r["call"] == "RegisterStatusNotifierItem"]


class Menu:
    """The menu of the last item registered in `log_path`."""

    def __init__(self, log_path, timeout=20.0):
        deadline = time.monotonic() + timeout
        while not registered(log_path):
            if time.monotonic() > deadline:
                raise AssertionError("no tray item registered within %.0fs" % timeout)
            time.sleep(0.05)
        item = registered(log_path)[-1]
        self.bus = dbus.SessionBus()
        self.name = item["service"]
        obj = self.bus.get_object(self.name, item["path"])
        path = obj.Get(ITEM_IFACE, "Menu", dbus_interface="org.freedesktop.DBus.Properties")
        self.menu = dbus.Interface(self.bus.get_object(self.name, path), MENU_IFACE)

    def items(self):
        """{label: (id, enabled)} of every item, submenus included."""
        _rev, layout = self.menu.GetLayout(0, -1, dbus.Array([], signature="s"))
        out = {}

        def walk(node):
            nid, props, children = node
            if "label" in props:
                out[str(props["label"]).replace("_", "")] = (int(nid), bool(props.get("enabled", True)))
            for c in children:
                walk(c)
        walk(layout)
        return out

    def click(self, label):
        items = self.items()
        assert label in items, "no tray item %r in %s" % (label, sorted(items))
        nid, enabled = items[label]
        assert enabled, "tray item %r is disabled" % label
        self.menu.Event(dbus.Int32(nid), "clicked", dbus.Int32(0, variant_level=1),
                        dbus.UInt32(int(time.time())))
