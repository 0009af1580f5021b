#!/usr/bin/python3
"""The desktop app on sync, measured (issue #18 "Numbers", docs/benchmarks.md).

Run under one private session bus and one Xvfb display (`make
bench-app-sync` does: `dbus-run-session -- xvfb-run -a`), with the test
notification server (tests/e2e/fake_notifyd.py) on that bus:

1. close: a real `kairos-server` on 127.0.0.1, the app on a paired
   database, the `kairos` CLI as the second device. N events (default 100)
   imported on the CLI device reach the app over sync and fire there (N
   Notify calls). Then, one at a time, `kairos dismiss KEY` on the CLI
   device; the latency is from just before the CLI is started to the
   `CloseNotification` the notification server records for that
   reminder's notification (its own receive time, ms): CLI run + push +
   server + live push + engine withdraw + D-Bus. p50, p90, p99, max.
2. start: time to first view (`KAIROS_TRACE_STARTUP=1`: the app's own
   `first-view-ms`, and the wall time from spawn to that line), each launch
   in its own session bus (as scripts/bench_app.py does), alternating
   three databases: never paired; paired, server down (connection
   refused); paired, a server that accepts the TCP connection and never
   answers. The connection must never hold back the window.
3. idle: CPU and memory (PSS) of the app's process tree with the window
   open, then closed to the tray (scripts/bench_app.py's idle part),
   alternating a database never paired and one paired with a running
   server the app stays connected to (the live link pings every 30 s).
4. dense: memory (PSS) of the app's tree with the window open on a
   database of 10,000 generated events (scripts/bench_app.py's rss part:
   the month view, after rendering went quiet and a settle time),
   alternating never paired and paired + connected (the events pushed
   before the launch, so the outbox is empty and the app only catches up).

Every wait is bounded; everything started is stopped at the end.
Usage: scripts/bench_app_sync.py APP [--reminders 100] [--runs 5]
       [--parts close,start,idle,dense] [--idle-secs 30] [--idle-runs 2]
       [--events 10000] [--json FILE]
       (kairos, kairos-server beside APP)
"""

import argparse
import datetime as dt
import json
import math
import os
import signal
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "e2e"))
import bench_app as ba  # noqa: E402  (AppRun: one launch in its own bus)
import notifyctl as nc  # noqa: E402


def log(*a):
    print("bench-app-sync:", *a, flush=True)


class Rig:
    def __init__(self, app, work):
        self.app = os.path.abspath(app)
        d = os.path.dirname(self.app)
        self.kairos_bin = os.path.join(d, "kairos")
        self.server_bin = os.path.join(d, "kairos-server")
        self.work = work
        self.data = os.path.join(work, "server")
        self.started = []

    def kairos(self, db, *args):
        out = subprocess.run([self.kairos_bin, "--db", db, *args], capture_output=True,
                             text=True, timeout=60, env=dict(os.environ, TZ="UTC"))
        if out.returncode != 0:
            raise RuntimeError("kairos %s: %s" % (args, out.stderr))
        return [json.loads(x) for x in out.stdout.splitlines() if x.startswith("{")]

    def start_server(self):
        p = subprocess.Popen([self.server_bin, "--data", self.data, "--listen", "127.0.0.1:0"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.started.append(p)
        got = {}

        def read():
            got["line"] = p.stdout.readline()
            for _ in p.stdout:
                pass
        t = threading.Thread(target=read, daemon=True)
        t.start()
        t.join(20)
        if "line" not in got:
            raise RuntimeError("kairos-server announced no address within 20 s")
        return p, json.loads(got["line"])["listening"]

    def invite(self):
        out = subprocess.run([self.server_bin, "--data", self.data, "invite", "me"],
                             capture_output=True, text=True, timeout=30)
        if out.returncode != 0:
            raise RuntimeError(out.stderr)
        return json.loads(out.stdout)["code"]

    def pair(self, url, db, other=None):
        self.kairos(db, "sync", "join", url, self.invite(), "--name", "desktop")
        if other:
            code = self.kairos(db, "sync", "pair")[0]["code"]
            self.kairos(other, "sync", "join", url, code, "--name", "laptop")

    def stop(self):
        for p in self.started:
            if p.poll() is None:
                p.kill()
                p.wait(5)


def pct(xs, p):
    """Nearest-rank percentile."""
    s = sorted(xs)
    return s[min(len(s), max(1, math.ceil(p / 100 * len(s)))) - 1]


def ics(n, start):
    at = start.strftime("%Y%m%dT%H%M%SZ")
    ev = "".join(
        "BEGIN:VEVENT\r\nUID:bench-%03d@kairos\r\nDTSTART:%s\r\nSUMMARY:Bench %03d\r\n"
        "BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:PT0S\r\nDESCRIPTION:x\r\nEND:VALARM\r\n"
        "END:VEVENT\r\n" % (i, at, i) for i in range(n))
    return "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:bench\r\n" + ev + "END:VCALENDAR\r\n"


def close_latency(rig, n):
    """Part 1. Returns the latencies in ms."""
    notify_log = os.path.join(rig.work, "notify.jsonl")
    notifyd = nc.start_server(notify_log)
    db = os.path.join(rig.work, "desk.db")
    other = os.path.join(rig.work, "laptop.db")
    app = None
    try:
        server, url = rig.start_server()
        rig.pair(url, db, other)
        env = dict(os.environ, KAIROS_DB=db, HOME=rig.work, TZ="UTC", LANG="en_US.UTF-8")
        app = subprocess.Popen([rig.app], env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
        start = dt.datetime.now(dt.timezone.utc).replace(microsecond=0) + dt.timedelta(seconds=25)
        path = os.path.join(rig.work, "bench.ics")
        with open(path, "w") as f:
            f.write(ics(n, start))
        rig.kairos(other, "import", path, "--tz", "UTC")
        keys = {r["summary"]: r["key"] for r in rig.kairos(other, "upcoming", "--limit", str(2 * n))
                if str(r.get("summary", "")).startswith("Bench ")}
        assert len(keys) == n, "upcoming on the CLI device listed %d of %d" % (len(keys), n)
        log("server %s; %d reminders due at %s in the app" % (url, n, start.isoformat()))
        ids = {}
        deadline = time.monotonic() + 120
        while len(ids) < n:
            assert time.monotonic() < deadline, "only %d of %d notifications shown" % (len(ids), n)
            for r in nc.read_log(notify_log):
                if r.get("call") == "Notify" and str(r.get("summary", "")).startswith("Bench "):
                    ids.setdefault(r["summary"], r["id"])
            time.sleep(0.05)
        log("%d notifications shown; dismissing each on the CLI device" % n)
        lat, cli = [], []
        for summary in sorted(keys):
            t0 = time.time()
            rig.kairos(other, "dismiss", keys[summary])
            t1 = time.time()
            rec = nc.wait_for_call(notify_log, "CloseNotification", timeout=15, id=ids[summary])
            lat.append(rec["t"] - t0 * 1000)
            cli.append((t1 - t0) * 1000)
        log("the CLI's own run (start, open, dismiss, push, exit): p50 %.0f ms, p99 %.0f ms"
            % (pct(cli, 50), pct(cli, 99)))
        return lat, cli
    finally:
        if app is not None:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(app.pid, sig)
                    app.wait(5)
                    break
                except ProcessLookupError:
                    break
                except subprocess.TimeoutExpired:
                    continue
        rig.stop()
        nc.stop_server(notifyd)


class BlackHole:
    """Accepts TCP connections on `port` and never answers."""

    def __init__(self, port):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(16)
        self.held = []
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(c)

    def close(self):
        self.sock.close()
        for c in self.held:
            c.close()


def first_views(rig, runs):
    """Part 2. Returns {variant: [(first_view_ms, wall_ms)]}."""
    display = os.environ.get("DISPLAY")
    dbs = {v: os.path.join(rig.work, v + ".db") for v in ("no-sync", "refused", "no-answer")}
    server, url = rig.start_server()
    rig.pair(url, dbs["refused"])
    rig.pair(url, dbs["no-answer"])
    port = int(url.rsplit(":", 1)[1])
    server.kill()
    server.wait(5)
    hole = None
    out = {v: [] for v in dbs}
    try:
        for i in range(runs + 1):  # run 0 warms the caches, not counted
            for v, db in dbs.items():
                if v == "no-answer":
                    hole = BlackHole(port)
                home = tempfile.mkdtemp(prefix="home-", dir=rig.work)
                r = ba.AppRun(rig.app, display, home, db)
                try:
                    ok = r.wait_first_view(60)
                finally:
                    r.stop()
                    if hole is not None:
                        hole.close()
                        hole = None
                if not ok:
                    raise RuntimeError("%s: no first view in 60 s:\n%s" % (v, "\n".join(r.lines[-20:])))
                if i > 0:
                    out[v].append((r.first_view_ms, (r.first_view_at - r.t0) * 1000))
                log("%s run %d: first view %d ms (app), %.0f ms (spawn to line)"
                    % (v, i, r.first_view_ms, (r.first_view_at - r.t0) * 1000))
    finally:
        rig.stop()
    return out


def idle(rig, runs, secs):
    """Part 3. Returns {variant: [part_idle results]}."""
    display = os.environ.get("DISPLAY")
    dbs = {v: os.path.join(rig.work, "idle-" + v + ".db") for v in ("no-sync", "synced")}
    _, url = rig.start_server()
    rig.pair(url, dbs["synced"])
    out = {v: [] for v in dbs}
    try:
        for i in range(runs):
            for v, db in dbs.items():
                r = ba.part_idle(rig.app, display, rig.work, secs, 3, None, db=db)
                if "open" not in r or "tray" not in r:
                    raise RuntimeError("%s: idle run failed: %s" % (v, r))
                if v == "synced":
                    st = rig.kairos(db, "sync", "status")[0]
                    if st.get("last_error") or not st.get("last_sync_at"):
                        raise RuntimeError("the synced run did not sync: %s" % st)
                out[v].append(r)
                log("%s idle run %d: open %.3f %% CPU, PSS %s MB; tray %.3f %% CPU, PSS %s MB"
                    % (v, i, r["open"]["cpu_pct"], r["rss_open"]["pss_mb"],
                       r["tray"]["cpu_pct"], r["rss_tray"]["pss_mb"]))
    finally:
        rig.stop()
    return out


def dense(rig, runs, n, settle=5):
    """Part 4. Returns {variant: [tree_mem results]}."""
    display = os.environ.get("DISPLAY")
    src = os.path.join(rig.work, "dense-%d.ics" % n)
    ba.make_ics(src, n)
    dbs = {v: os.path.join(rig.work, "dense-" + v + ".db") for v in ("no-sync", "synced")}
    _, url = rig.start_server()
    for v, db in dbs.items():
        rig.kairos(db, "import", src, "--calendar", "Bench")
    rig.pair(url, dbs["synced"])
    rig.kairos(dbs["synced"], "sync", "now")
    if rig.kairos(dbs["synced"], "sync", "status")[0].get("outbox"):
        raise RuntimeError("the synced database kept ops in its outbox")
    out = {v: [] for v in dbs}
    try:
        for i in range(runs):
            for v, db in dbs.items():
                home = tempfile.mkdtemp(prefix="dense-", dir=rig.work)
                run = ba.AppRun(rig.app, display, home, db)
                try:
                    if not run.wait_first_view(60, display):
                        raise RuntimeError("%s: no first view within 60 s; the app's stderr "
                                           "ended with %s" % (v, run.lines[-15:]))
                    pid = run.app_pid()
                    ba.wait_quiet(pid, run.t0)
                    time.sleep(settle)
                    mem = ba.tree_mem(pid)
                finally:
                    run.stop()
                if v == "synced":
                    st = rig.kairos(db, "sync", "status")[0]
                    if st.get("last_error") or not st.get("last_sync_at"):
                        raise RuntimeError("the synced run did not sync: %s" % st)
                out[v].append(mem)
                # Per process (the app, WebKit's web and network processes).
                parts = ", ".join("%s %.1f MB (anon %.1f)" % (r["comm"], (r["pss_kb"] or 0) / 1024,
                                                             (r["pss_anon_kb"] or 0) / 1024)
                                  for r in mem["processes"])
                # WebKit processes of other apps share library pages with
                # these, lowering their PSS: say how many ran.
                ours = {r["pid"] for r in mem["processes"]}
                others = sum(1 for p in os.listdir("/proc") if p.isdigit() and int(p) not in ours
                             and (ba.proc_stat(int(p)) or ("",))[0].startswith("WebKitWebProc"))
                log("%s dense run %d: PSS %s MB (RSS %s MB), first view %s ms; %s; "
                    "other WebKit web processes on the machine: %d"
                    % (v, i, mem["pss_mb"], mem["rss_mb"], run.first_view_ms, parts, others))
    finally:
        rig.stop()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("app")
    ap.add_argument("--reminders", type=int, default=100)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--parts", default="close,start")
    ap.add_argument("--idle-secs", type=int, default=30)
    ap.add_argument("--idle-runs", type=int, default=2)
    ap.add_argument("--events", type=int, default=10000)
    ap.add_argument("--json", help="also write the idle and dense results (per process) here")
    a = ap.parse_args()
    parts = a.parts.split(",")
    work = tempfile.mkdtemp(prefix="kairos-bench-sync-")
    rig = Rig(a.app, work)
    log("app %s; load %s" % (rig.app, open("/proc/loadavg").read().split()[0]))
    rows, raw = [], {}
    try:
        if "close" in parts:
            lat, cli = close_latency(rig, a.reminders)
            p99 = pct(lat, 99)
            rows.append("| `kairos dismiss` on the other device → `CloseNotification` here, "
                        "%d reminders | p50 %.0f ms, p90 %.0f ms, p99 %.0f ms, max %.0f ms | "
                        "p99 ≤ 100 ms: %s |" % (len(lat), pct(lat, 50), pct(lat, 90), p99,
                                                max(lat), "met" if p99 <= 100 else "NOT met"))
            rows.append("| of which the `kairos dismiss` process itself (start to exit; it "
                        "pushes before it exits) | p50 %.0f ms, p99 %.0f ms | |"
                        % (pct(cli, 50), pct(cli, 99)))
        if "start" in parts:
            fv = first_views(rig, a.runs)
            base = statistics.median(x[0] for x in fv["no-sync"])
            for v, xs in fv.items():
                app_ms = statistics.median(x[0] for x in xs)
                wall = statistics.median(x[1] for x in xs)
                rows.append("| start to first view, %s (median of %d) | %d ms (app), %.0f ms "
                            "(spawn to line) | %s |"
                            % (v, len(xs), app_ms, wall,
                               "baseline" if v == "no-sync" else
                               "%+.0f ms vs no sync" % (app_ms - base)))
        if "idle" in parts:
            res = idle(rig, a.idle_runs, a.idle_secs)
            raw["idle"] = res
            for v, rs in res.items():
                med = lambda f: statistics.median(f(r) for r in rs)  # noqa: E731
                rows.append("| idle, %s (median of %d × %d s) | window open %.3f %% CPU, "
                            "PSS %.1f MB; tray %.3f %% CPU, PSS %.1f MB | %s |"
                            % (v, len(rs), a.idle_secs,
                               med(lambda r: r["open"]["cpu_pct"]),
                               med(lambda r: r["rss_open"]["pss_mb"] or 0),
                               med(lambda r: r["tray"]["cpu_pct"]),
                               med(lambda r: r["rss_tray"]["pss_mb"] or 0),
                               "baseline" if v == "no-sync" else "no worse than no sync"))
        if "dense" in parts:
            res = dense(rig, a.idle_runs, a.events)
            raw["dense"] = res
            for v, rs in res.items():
                pss = statistics.median(r["pss_mb"] or 0 for r in rs)
                rows.append("| %d events, month view, %s (median of %d) | PSS %.1f MB | %s |"
                            % (a.events, v, len(rs), pss,
                               "≤ 200 MB: %s" % ("met" if pss <= 200 else "NOT met")))
    finally:
        rig.stop()
        shutil.rmtree(work, ignore_errors=True)
    print("\n| what | result | goal |\n| --- | --- | --- |")
    for r in rows:
        print(r)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(raw, f, indent=1)


if __name__ == "__main__":
    main()
