#!/usr/bin/env python3
"""Talk to fake_notifyd.py from a test: start it, read its log, click for the user.

Why: end-to-end tests must wait for "the app sent this notification" and then
act on it (click an action, dismiss, expire) without sleeping blindly. The log
is polled in 20 ms steps with a hard timeout; control calls go through `gdbus`
so this module works from any Python 3 (only `listen` and the server itself
need Debian's /usr/bin/python3 with python3-dbus).

Library:
    start_server(log_path, no_actions=False, delay_ms=50, timeout=10.0) -> Popen
    stop_server(proc, timeout=5.0) -> int
    read_log(path) -> list[dict]
    wait_for(path, predicate, timeout=5.0, after=0) -> dict
    wait_for_call(path, call, timeout=5.0, after=0, **fields) -> dict
    invoke_action(nid, key), dismiss(nid), expire(nid), open_ids() -> list[int]
CLI:
    notifyctl.py log PATH
    notifyctl.py wait PATH CALL [--timeout S] [--after N] [FIELD=VALUE ...]
    notifyctl.py invoke ID KEY | dismiss ID | expire ID | open-ids
    notifyctl.py listen [--count N] [--timeout S]   (JSON line per signal)
"""
import argparse
import json
import os
import re
import select
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "fake_notifyd.py")
DEBIAN_PYTHON = "/usr/bin/python3"
STEP = 0.02


def start_server(log_path, no_actions=False, delay_ms=50, timeout=10.0):
    """Start fake_notifyd on the current session bus; return once it is READY."""
    cmd = [DEBIAN_PYTHON, SERVER, "--log", log_path, "--delay-ms", str(delay_ms)]
    if no_actions:
        cmd.append("--no-actions")
    return start_ready(cmd, timeout)


def start_ready(cmd, timeout=10.0):
    """Start a fake service (`cmd`); return once it prints READY, or stop it
    and raise. Shared with trayctl.py."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], STEP * 5)
        if ready:
            line = proc.stdout.readline()
            if line.strip() == "READY":
                return proc
            if line == "":  # EOF: it died
                break
    stop_server(proc)
    raise RuntimeError("%s did not print READY within %.1fs (exit %s)"
                       % (os.path.basename(cmd[1]), timeout, proc.returncode))


def stop_server(proc, timeout=5.0):
    """SIGTERM, wait (bounded), SIGKILL if needed. Returns the exit code."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)
    if proc.stdout:
        proc.stdout.close()
    return proc.returncode


def read_log(path):
    """All complete records so far (a half-written last line is skipped)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in text.split("\n")[:-1] if line]


def wait_for(path, predicate, timeout=5.0, after=0):
    """First record at index >= after with predicate(record) true.

    Polls every 20 ms; raises TimeoutError listing the records it saw."""
    deadline = time.monotonic() + timeout
    while True:
        records = read_log(path)
        for record in records[after:]:
            if predicate(record):
                return record
        if time.monotonic() >= deadline:
            seen = "\n  ".join(json.dumps(r) for r in records[after:]) or "(none)"
            raise TimeoutError("no matching record in %s after %.1fs; records:\n  %s"
                               % (path, timeout, seen))
        time.sleep(STEP)


def wait_for_call(path, call, timeout=5.0, after=0, **fields):
    """wait_for a record with record["call"] == call and the given fields."""
    def match(r):
        return r.get("call") == call and all(r.get(k) == v for k, v in fields.items())
    return wait_for(path, match, timeout, after)


def gvariant_str(s):
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _control(method, *args, timeout=5.0):
    cmd = ["gdbus", "call", "--session", "--dest", "org.freedesktop.Notifications",
           "--object-path", "/org/kairos/Test", "--timeout", str(int(timeout)),
           "--method", "org.kairos.Test." + method, *args]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout + 2)
    if res.returncode != 0:
        raise RuntimeError("%s%s failed: %s" % (method, args, res.stderr.strip()))
    return res.stdout.strip()


def invoke_action(nid, key, timeout=5.0):
    """Click action `key` on notification nid (ActionInvoked, then closed/2)."""
    _control("InvokeAction", str(int(nid)), gvariant_str(key), timeout=timeout)


def dismiss(nid, timeout=5.0):
    _control("Dismiss", str(int(nid)), timeout=timeout)


def expire(nid, timeout=5.0):
    _control("Expire", str(int(nid)), timeout=timeout)


def open_ids(timeout=5.0):
    out = _control("OpenIds", timeout=timeout)  # "(@au [],)" or "([uint32 1, 2],)"
    return [int(n) for n in re.findall(r"\d+", out.replace("uint32", ""))]


def listen(count, timeout):
    """Print one JSON line per Notifications signal; needs /usr/bin/python3."""
    import dbus
    from dbus.mainloop.glib import DBusGMainLoop
    from gi.repository import GLib
    DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    loop = GLib.MainLoop()
    got = []

    def on_signal(*args, member=None):
        got.append(member)
        print(json.dumps({"signal": member, "args": [a if isinstance(a, str)
                          else int(a) for a in args], "t": int(time.time() * 1000)}),
              flush=True)
        if count and len(got) >= count:
            loop.quit()
    bus.add_signal_receiver(on_signal, dbus_interface="org.freedesktop.Notifications",
                            member_keyword="member")
    dbus.Interface(bus.get_object("org.freedesktop.DBus", "/org/freedesktop/DBus"),
                   "org.freedesktop.DBus").GetId()  # AddMatch is in effect now
    print("LISTENING", flush=True)
    GLib.timeout_add(int(timeout * 1000), loop.quit)
    loop.run()
    return 0 if not count or len(got) >= count else 1


def main(argv=None):
    ap = argparse.ArgumentParser(description="control fake_notifyd.py")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("log").add_argument("path")
    w = sub.add_parser("wait")
    w.add_argument("path")
    w.add_argument("call")
    w.add_argument("fields", nargs="*", help="FIELD=VALUE (VALUE parsed as JSON if it can be)")
    w.add_argument("--timeout", type=float, default=5.0)
    w.add_argument("--after", type=int, default=0)
    i = sub.add_parser("invoke")
    i.add_argument("id", type=int)
    i.add_argument("key")
    sub.add_parser("dismiss").add_argument("id", type=int)
    sub.add_parser("expire").add_argument("id", type=int)
    sub.add_parser("open-ids")
    ls = sub.add_parser("listen")
    ls.add_argument("--count", type=int, default=0, help="exit after N signals")
    ls.add_argument("--timeout", type=float, default=10.0)
    a = ap.parse_args(argv)
    try:
        return run(a)
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        print("notifyctl: %s" % e, file=sys.stderr)
        return 1


def run(a):
    if a.cmd == "log":
        for r in read_log(a.path):
            print(json.dumps(r))
    elif a.cmd == "wait":
        fields = {}
        for f in a.fields:
            k, _, v = f.partition("=")
            try:
                fields[k] = json.loads(v)
            except ValueError:
                fields[k] = v
        try:
            print(json.dumps(wait_for_call(a.path, a.call, a.timeout, a.after, **fields)))
        except TimeoutError as e:
            print(e, file=sys.stderr)
            return 1
    elif a.cmd == "invoke":
        invoke_action(a.id, a.key)
    elif a.cmd == "dismiss":
        dismiss(a.id)
    elif a.cmd == "expire":
        expire(a.id)
    elif a.cmd == "open-ids":
        print(" ".join(map(str, open_ids())))
    elif a.cmd == "listen":
        return listen(a.count, a.timeout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
