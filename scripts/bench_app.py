#!/usr/bin/python3
"""Figures for the Kairos desktop app (issue #4, docs/benchmarks.md).

Measures the RELEASE binary under Xvfb, each launch in its own private
session bus (`dbus-run-session`) with a fresh HOME and database:

1. start: time to first view. The app, run with KAIROS_TRACE_STARTUP=1,
   prints `kairos-startup: first-view-ms=N` on stderr when the UI's first
   `occurrences` IPC call returned (N counted from `main`). Also measured
   from outside: wall time from spawn to that line, and to the moment the
   window "Kairos" is mapped (xdotool, polled every 50 ms). Run 1 follows a
   page-cache drop (needs root) and is reported as "cold", the others "warm".
2. idle: CPU (utime+stime from /proc/PID/stat) of the app and all its
   descendants (WebKitWebProcess, WebKitNetworkProcess, ...) over N s with
   the window open, then over N s after closing the window (WM_DELETE_WINDOW,
   as a window manager sends it; the app hides to the tray). Checks that the
   window is gone and the process still alive. Xvfb's CPU is shown apart.
3. rss: imports a generated .ics with 10,000 events with the CLI, starts the
   app on that database, waits for the first-view line, for rendering to end
   (quiet: < 10 % of one core) and a settle time, and
   sums VmRSS and PSS (smaps_rollup) of the app and its descendants.
4. size: the release binary, and the .deb built with the npm Tauri CLI
   (`npx --yes @tauri-apps/cli@2 build --bundles deb` in src-tauri/).

Standard library only; run with /usr/bin/python3 from the repository root
after `make ui` and `cargo build --release -p kairos-desktop -p kairos-cli`
(`make bench-app` does all of it). Every wait is bounded; everything started
is killed at the end; all files go to a temporary directory.

Usage: scripts/bench_app.py [--runs 10] [--idle-secs 60] [--events 10000]
       [--parts start,idle,rss,size] [--no-deb-build] [--no-drop-caches]
       [--app-env KEY=VALUE] [--json FILE]
"""

import argparse
import datetime as dt
import json
import os
import random
import re
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
if not os.path.isabs(TARGET):
    TARGET = os.path.join(ROOT, TARGET)
TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
FIRST_VIEW = re.compile(r"kairos-startup: first-view-ms=(\d+)")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "e2e"))
from procs import descendants, proc_stat  # noqa: E402
from x11 import WINDOW_TITLE, close_all, visible_windows  # noqa: E402

_started = []  # Popen objects we own (killed at exit, by process group)


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


# ---------------------------------------------------------------- /proc


# proc_stat and descendants: tests/e2e/procs.py (the end-to-end test walks
# the app's processes the same way).


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def mem_kb(pid):
    """(VmRSS kB, {Pss, Pss_Anon, Pss_File, Pss_Shmem, ...} kB from smaps_rollup)."""
    rss = None
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
    except OSError:
        return None, {}
    roll = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3 and parts[2] == "kB":
                    roll[parts[0].rstrip(":")] = int(parts[1])
    except OSError:
        pass
    return rss, roll


def threads_cpu(pid):
    """{(tid, comm): ticks} of one process's threads."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for t in tids:
        try:
            with open(f"/proc/{pid}/task/{t}/stat") as f:
                s = f.read()
        except OSError:
            continue
        comm = s[s.index("(") + 1 : s.rindex(")")]
        rest = s[s.rindex(")") + 2 :].split()
        out[(int(t), comm)] = int(rest[11]) + int(rest[12])
    return out


def tree_snapshot(root):
    """{(pid, starttime): (comm, ticks, {thread: ticks})} for root's tree."""
    snap = {}
    for p in descendants(root):
        st = proc_stat(p)
        if st:
            snap[(p, st[3])] = (st[0], st[2], threads_cpu(p))
    return snap


def wait_quiet(root, t0, step=0.25, below=10.0, need=2, timeout=30.0):
    """After the first view the webview keeps rendering for a while. Returns
    (ms from t0 until root's tree used < `below` % of one core for `need`
    consecutive `step`-second windows, or None on timeout; the busiest
    threads meanwhile as [(comm, cpu_s)])."""
    def ticks():
        snap = tree_snapshot(root)
        return sum(v[1] for v in snap.values()), snap

    first_total, first = ticks()
    prev, t, calm, end = first_total, time.monotonic(), 0, time.monotonic() + timeout
    quiet_at = None
    while time.monotonic() < end:
        time.sleep(step)
        total, _ = ticks()
        now = time.monotonic()
        if 100 * (total - prev) / TICK / (now - t) < below:
            calm += 1
            if calm >= need:
                quiet_at = now - need * step  # the start of the calm
                break
        else:
            calm = 0
        prev, t = total, now
    _, last = ticks()
    per = {}
    for key, (comm, _, th) in last.items():
        before = first.get(key, (None, 0, {}))[2]
        for (tid, tcomm), v in th.items():
            d = v - before.get((tid, tcomm), 0)
            if d > 0:
                name = f"{comm}/{tcomm}"
                per[name] = per.get(name, 0) + d
    top = sorted(per.items(), key=lambda kv: -kv[1])[:5]
    return (round((quiet_at - t0) * 1000) if quiet_at else None,
            [(n, round(v / TICK, 2)) for n, v in top])


# ---------------------------------------------------------------- X11


# X11 and visible_windows: tests/e2e/x11.py (the end-to-end test closes the
# window the same way).


# ---------------------------------------------------------------- processes


def start_xvfb(logdir):
    r, w = os.pipe()
    xlog = open(os.path.join(logdir, "xvfb.log"), "w")
    p = subprocess.Popen(
        ["Xvfb", "-displayfd", str(w), "-screen", "0", "1280x1024x24", "-nolisten", "tcp",
         "-noreset"],
        pass_fds=(w,), stdout=xlog, stderr=xlog, start_new_session=True)
    _started.append(p)
    os.close(w)
    # Read up to the newline: Xvfb writes the number and "\n" separately and
    # dies ("Cannot write display number") if the pipe is closed in between.
    buf, end = b"", time.monotonic() + 15
    while not buf.endswith(b"\n") and time.monotonic() < end:
        ready, _, _ = select.select([r], [], [], max(0.0, end - time.monotonic()))
        chunk = os.read(r, 32) if ready else b""
        if ready and not chunk:
            break  # Xvfb exited
        buf += chunk
    os.close(r)
    num = buf.decode().strip()
    if not buf.endswith(b"\n") or not num:
        raise RuntimeError("Xvfb did not report a display within 15 s (see xvfb.log)")
    return p, f":{num}"


class AppRun:
    """One launch: `dbus-run-session -- APP` in a new process group, stderr
    read by a thread (so the pipe never fills), first-view line timestamped."""

    extra_env = {}  # --app-env KEY=VALUE (experiments)

    def __init__(self, app, display, home, db, extra_env=None):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("XDG_", "DBUS_", "WAYLAND_", "KAIROS_"))}
        env.update({
            "DISPLAY": display, "HOME": home, "KAIROS_DB": db,
            "KAIROS_TRACE_STARTUP": "1",
            "XDG_CONFIG_HOME": os.path.join(home, ".config"),
            "XDG_DATA_HOME": os.path.join(home, ".local/share"),
            "XDG_CACHE_HOME": os.path.join(home, ".cache"),
        })
        env.update(AppRun.extra_env)
        env.update(extra_env or {})
        self.lines = []
        self.first_view_ms = None
        self.first_view_at = None
        self.seen = threading.Event()
        self.t0 = time.monotonic()
        self.p = subprocess.Popen(
            ["dbus-run-session", "--", app], env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        _started.append(self.p)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for raw in self.p.stderr:
            now = time.monotonic()
            line = raw.decode(errors="replace").rstrip()
            self.lines.append(line)
            m = FIRST_VIEW.search(line)
            if m and self.first_view_ms is None:
                self.first_view_ms = int(m.group(1))
                self.first_view_at = now
                self.seen.set()
        self.seen.set()  # EOF: stop waiting

    def wait_first_view(self, timeout, display=None):
        """Waits for the first-view line; also notes when the window is
        mapped if display is given. Returns True if the line came."""
        deadline = self.t0 + timeout
        self.mapped_at = None
        while time.monotonic() < deadline:
            if display and self.mapped_at is None and visible_windows(display):
                self.mapped_at = time.monotonic()
            if self.seen.wait(0.05):
                break
        if display and self.mapped_at is None:
            end = time.monotonic() + 5
            while self.mapped_at is None and time.monotonic() < end:
                if visible_windows(display):
                    self.mapped_at = time.monotonic()
                else:
                    time.sleep(0.05)
        return self.first_view_ms is not None

    def app_pid(self, timeout=10):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for p in descendants(self.p.pid):
                st = proc_stat(p)
                if st and st[0].startswith("kairos-desktop"):
                    return p
            if self.p.poll() is not None:
                return None
            time.sleep(0.05)
        return None

    def stop(self):
        pids = descendants(self.p.pid)
        for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
            try:
                os.killpg(self.p.pid, sig)
            except ProcessLookupError:
                pass
            for pid in pids:  # stragglers that left the group
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            try:
                self.p.wait(wait)
                break
            except subprocess.TimeoutExpired:
                continue
        self.reader.join(2)


def drop_caches():
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError as e:
        log(f"bench-app: cannot drop the page cache ({e}); run 1 is not cold")
        return False


# ---------------------------------------------------------------- calendar


def make_ics(path, n, seed=4):
    """n events: ~70% single events spread over the year around now, ~30%
    recurring (20% weekly, 10% daily, bounded by COUNT) with a VALARM each.
    Times are UTC; alarms are kept out of the next 3 hours (time of day), so
    no reminder fires while the benchmark runs."""
    rnd = random.Random(seed)
    now = dt.datetime.now(dt.timezone.utc).replace(second=0, microsecond=0)
    start = (now - dt.timedelta(days=182)).replace(hour=0, minute=0)
    quiet = {(now + dt.timedelta(minutes=m)).strftime("%H:%M") for m in range(-30, 181)}
    fmt = "%Y%m%dT%H%M%SZ"
    stamp = now.strftime(fmt)
    mix = {"single": 0, "allday": 0, "weekly": 0, "daily": 0, "alarms": 0}
    out = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Kairos//bench_app//EN",
           "X-WR-CALNAME:Bench"]
    words = ["Standup", "Review", "Lunch", "Call", "Gym", "Dentist", "Sync",
             "Planning", "1:1", "Demo", "Retro", "Workshop", "Dinner", "Flight"]
    for i in range(n):
        r = rnd.random()
        day = start + dt.timedelta(days=rnd.randrange(365))
        ev = ["BEGIN:VEVENT", f"UID:bench-{i}@kairos", f"DTSTAMP:{stamp}",
              f"SUMMARY:{rnd.choice(words)} {i}"]
        if r < 0.70:
            if rnd.random() < 0.10:
                mix["allday"] += 1
                d = day.date()
                ev += [f"DTSTART;VALUE=DATE:{d:%Y%m%d}",
                       f"DTEND;VALUE=DATE:{d + dt.timedelta(days=1):%Y%m%d}"]
            else:
                mix["single"] += 1
                s = day + dt.timedelta(minutes=15 * rnd.randrange(28, 80))
                e = s + dt.timedelta(minutes=30 * rnd.randint(1, 6))
                ev += [f"DTSTART:{s.strftime(fmt)}", f"DTEND:{e.strftime(fmt)}"]
            if rnd.random() < 0.3:
                ev.append(f"LOCATION:Room {rnd.randint(1, 40)}")
        else:
            lead = rnd.choice([5, 10, 15, 30, 60])
            s = day + dt.timedelta(minutes=15 * rnd.randrange(28, 80))
            if (s - dt.timedelta(minutes=lead)).strftime("%H:%M") in quiet:
                s += dt.timedelta(hours=5)  # keep its alarm out of the next 3 hours
            e = s + dt.timedelta(minutes=30 * rnd.randint(1, 4))
            if r < 0.90:
                mix["weekly"] += 1
                byday = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"][s.weekday()]
                rule = f"FREQ=WEEKLY;BYDAY={byday};COUNT={rnd.randint(4, 26)}"
            else:
                mix["daily"] += 1
                rule = f"FREQ=DAILY;COUNT={rnd.randint(5, 20)}"
            mix["alarms"] += 1
            ev += [f"DTSTART:{s.strftime(fmt)}", f"DTEND:{e.strftime(fmt)}", f"RRULE:{rule}",
                   "BEGIN:VALARM", "ACTION:DISPLAY", f"DESCRIPTION:Reminder {i}",
                   f"TRIGGER:-PT{lead}M", "END:VALARM"]
        ev.append("END:VEVENT")
        out += ev
    out.append("END:VCALENDAR")
    with open(path, "w", newline="") as f:
        f.write("\r\n".join(out) + "\r\n")
    return mix


# ---------------------------------------------------------------- parts


def part_start(app, display, tmp, runs, drop):
    res = []
    for i in range(runs):
        home = tempfile.mkdtemp(prefix=f"start{i}-", dir=tmp)
        cold = False
        if i == 0 and drop:
            cold = drop_caches()
            time.sleep(1)
        load = loadavg()
        run = AppRun(app, display, home, os.path.join(home, "kairos.db"))
        ok = run.wait_first_view(30, display)
        quiet_ms, busy = (None, [])
        pid = run.app_pid() if ok else None
        if pid:
            quiet_ms, busy = wait_quiet(pid, run.t0)
        row = {
            "run": i + 1, "kind": "cold" if cold else ("warm" if i else "first"),
            "first_view_ms": run.first_view_ms,
            "wall_ms": round((run.first_view_at - run.t0) * 1000) if ok else None,
            "mapped_ms": round((run.mapped_at - run.t0) * 1000) if run.mapped_at else None,
            "quiet_ms": quiet_ms, "busy_threads": busy,
            "load": load,
        }
        if not ok:
            row["stderr_tail"] = run.lines[-15:]
        run.stop()
        res.append(row)
        log(f"  start run {i + 1}: {row}")
    return res


def cpu_window(root, secs, extra_pids=(), session_root=None):
    """CPU of root's tree over secs (per process and thread). Also, apart:
    extra_pids (Xvfb) and the rest of session_root's tree (the private bus
    and the services it activated: portals, a11y bus, notification daemon)."""
    top = session_root or root
    a = tree_snapshot(top)
    xa = {p: proc_stat(p) for p in extra_pids}
    t0 = time.monotonic()
    time.sleep(secs)
    b = tree_snapshot(top)
    xb = {p: proc_stat(p) for p in extra_pids}
    el = time.monotonic() - t0
    mine = set(descendants(root))
    per, total, services = [], 0, {}
    for key, (comm, ticks, th) in b.items():
        prev = a.get(key)
        d = ticks - (prev[1] if prev else 0)
        if key[0] not in mine:
            services[f"{comm}({key[0]})"] = round(100 * d / TICK / el, 3)
            continue
        total += d
        tops = []
        for tk, tt in th.items():
            td = tt - (prev[2].get(tk, 0) if prev else 0)
            if td > 0:
                tops.append((td, tk[1], tk[0]))
        tops.sort(reverse=True)
        per.append({
            "pid": key[0], "comm": comm, "cmd": cmdline(key[0])[:90],
            "new": prev is None,
            "cpu_pct": round(100 * d / TICK / el, 3),
            "top_threads": [f"{c}({t}) {100 * v / TICK / el:.2f}%" for v, c, t in tops[:4]],
        })
    gone = [a[k][0] for k in a if k not in b]
    extra = {}
    for p in extra_pids:
        if xa.get(p) and xb.get(p):
            extra[xb[p][0]] = round(100 * (xb[p][2] - xa[p][2]) / TICK / el, 3)
    return {
        "secs": round(el, 1), "cpu_pct": round(100 * total / TICK / el, 3),
        "cpu_s": round(total / TICK, 2), "processes": per, "exited": gone,
        "outside": extra, "session_services": services,
    }


def part_idle(app, display, tmp, secs, settle, xvfb_pid, db=None):
    """Idle CPU and memory with the window open, then in the tray. `db`:
    the database to open (default: a new one in a fresh home)."""
    home = tempfile.mkdtemp(prefix="idle-", dir=tmp)
    run = AppRun(app, display, home, db or os.path.join(home, "kairos.db"))
    xvfb = [xvfb_pid] if xvfb_pid else []
    out = {"first_view_ms": None}
    try:
        if not run.wait_first_view(30, display):
            out["error"] = "no first-view line within 30 s"
            out["stderr_tail"] = run.lines[-15:]
            return out
        out["first_view_ms"] = run.first_view_ms
        pid = run.app_pid()
        wins = visible_windows(display)
        out["window_ids"] = wins
        out["quiet_ms"], _ = wait_quiet(pid, run.t0)
        time.sleep(settle)
        out["load_open"] = loadavg()
        log(f"  idle: window open, measuring {secs} s (load {out['load_open']})")
        out["open"] = cpu_window(pid, secs, xvfb, run.p.pid)
        out["rss_open"] = tree_mem(pid)
        # Close the window as a window manager would (WM_DELETE_WINDOW).
        how = None
        try:  # works only with a window manager running
            if shutil.which("wmctrl") and subprocess.run(
                    ["wmctrl", "-c", WINDOW_TITLE], env={**os.environ, "DISPLAY": display},
                    capture_output=True, timeout=5).returncode == 0:
                how = "wmctrl -c"
        except subprocess.TimeoutExpired:
            pass
        if how is None:
            close_all(display, wins)
            how = "WM_DELETE_WINDOW ClientMessage (no window manager under Xvfb)"
        out["close_method"] = how
        end = time.monotonic() + 10
        while visible_windows(display) and time.monotonic() < end:
            time.sleep(0.1)
        out["window_visible_after_close"] = bool(visible_windows(display))
        out["alive_after_close"] = proc_stat(pid) is not None and run.p.poll() is None
        time.sleep(settle)
        out["load_tray"] = loadavg()
        log(f"  idle: window closed (visible={out['window_visible_after_close']}, "
            f"alive={out['alive_after_close']}), measuring {secs} s (load {out['load_tray']})")
        out["tray"] = cpu_window(pid, secs, xvfb, run.p.pid)
        out["alive_at_end"] = proc_stat(pid) is not None and run.p.poll() is None
        out["rss_tray"] = tree_mem(pid)
    finally:
        run.stop()
    return out


def tree_mem(root):
    rows, tot = [], {"rss": 0, "pss": 0, "pss_anon": 0, "pss_file": 0}
    pss_ok = True
    for p in descendants(root):
        st = proc_stat(p)
        r, roll = mem_kb(p)
        if st is None or r is None:
            continue
        row = {"pid": p, "comm": st[0], "rss_kb": r, "pss_kb": roll.get("Pss"),
               "pss_anon_kb": roll.get("Pss_Anon"), "pss_file_kb": roll.get("Pss_File")}
        rows.append(row)
        tot["rss"] += r
        if row["pss_kb"] is None:
            pss_ok = False
        else:
            tot["pss"] += row["pss_kb"]
            tot["pss_anon"] += row["pss_anon_kb"] or 0
            tot["pss_file"] += row["pss_file_kb"] or 0
    out = {"rss_mb": round(tot["rss"] / 1024, 1), "pss_mb": None, "processes": rows}
    if pss_ok:
        out.update({k + "_mb": round(v / 1024, 1) for k, v in tot.items() if k != "rss"})
    return out


def month_grid_occurrences(cli, ics):
    """Occurrences in the month view's six-week grid (weeks from Monday, UTC),
    counted with `kairos occurrences`: what the first view asks for."""
    today = dt.datetime.now(dt.timezone.utc).date().replace(day=1)
    start = today - dt.timedelta(days=today.weekday())
    end = start + dt.timedelta(days=42)
    try:
        r = subprocess.run([cli, "occurrences", "--tz", "UTC", "--from", f"{start}T00:00:00Z",
                            "--to", f"{end}T00:00:00Z", ics],
                           capture_output=True, text=True, timeout=300)
        return {"from": str(start), "to": str(end), "count": len(json.loads(r.stdout))}
    except (OSError, subprocess.SubprocessError, ValueError, TypeError):
        return None


def part_rss(app, cli, display, tmp, n, settle):
    home = tempfile.mkdtemp(prefix="rss-", dir=tmp)
    db = os.path.join(home, "kairos.db")
    ics = os.path.join(tmp, f"bench-{n}.ics")
    mix = make_ics(ics, n)
    t = time.monotonic()
    imp = subprocess.run([cli, "--db", db, "import", ics, "--calendar", "Bench"],
                         capture_output=True, text=True, timeout=600,
                         env={**os.environ, "HOME": home})
    out = {"mix": mix, "ics_bytes": os.path.getsize(ics),
           "import_s": round(time.monotonic() - t, 2),
           "import_stdout": imp.stdout.strip()[-300:], "import_rc": imp.returncode}
    if imp.returncode != 0:
        out["error"] = "import failed: " + imp.stderr.strip()[-500:]
        return out
    out["db_bytes"] = os.path.getsize(db)
    out["first_view_occurrences"] = month_grid_occurrences(cli, ics)
    out["load"] = loadavg()
    run = AppRun(app, display, home, db)
    try:
        if not run.wait_first_view(60, display):
            out["error"] = "no first-view line within 60 s"
            out["stderr_tail"] = run.lines[-15:]
            return out
        out["first_view_ms"] = run.first_view_ms
        out["wall_ms"] = round((run.first_view_at - run.t0) * 1000)
        pid = run.app_pid()
        out["quiet_ms"], out["busy_threads"] = wait_quiet(pid, run.t0)
        time.sleep(settle)
        out["settle_s"] = settle
        out["mem"] = tree_mem(pid)
        out["stderr_lines"] = len(run.lines)
    finally:
        run.stop()
    return out


def stripped_size(path, tmp):
    """Size of a stripped copy (the release profile keeps line tables)."""
    dst = os.path.join(tmp, "stripped")
    try:
        subprocess.run(["strip", "-o", dst, path], check=True, capture_output=True, timeout=120)
        return os.path.getsize(dst)
    except (OSError, subprocess.SubprocessError):
        return None
    finally:
        if os.path.exists(dst):
            os.unlink(dst)


def part_size(app, build_deb, tmp):
    out = {"binary_bytes": os.path.getsize(app), "binary_stripped_bytes": stripped_size(app, tmp)}
    debdir = os.path.join(TARGET, "release", "bundle", "deb")
    if build_deb:
        cmd = ["npx", "--yes", "@tauri-apps/cli@2", "build", "--bundles", "deb"]
        log(f"  size: {' '.join(cmd)} (in src-tauri/)")
        t = time.monotonic()
        try:
            r = subprocess.run(cmd, cwd=os.path.join(ROOT, "src-tauri"),
                               capture_output=True, text=True, timeout=1800,
                               start_new_session=True)
            out["deb_build_s"] = round(time.monotonic() - t, 1)
            out["deb_build_rc"] = r.returncode
            if r.returncode != 0:
                out["deb_error"] = (r.stdout[-1500:] + "\n" + r.stderr[-2500:]).strip()
        except subprocess.TimeoutExpired:
            out["deb_error"] = "tauri build did not finish within 30 min"
        out["binary_bytes_after_bundle"] = os.path.getsize(app)
    debs = []
    if os.path.isdir(debdir):
        debs = sorted((os.path.join(debdir, f) for f in os.listdir(debdir) if f.endswith(".deb")),
                      key=os.path.getmtime)
    if debs:
        deb = debs[-1]
        out["deb"] = os.path.relpath(deb, ROOT)
        out["deb_bytes"] = os.path.getsize(deb)
        out["deb_mtime"] = dt.datetime.fromtimestamp(os.path.getmtime(deb)).isoformat(
            timespec="seconds")
        try:
            f = subprocess.run(["dpkg-deb", "-f", deb, "Installed-Size", "Depends"],
                               capture_output=True, text=True, timeout=30).stdout
            out["deb_fields"] = f.strip()
        except (OSError, subprocess.TimeoutExpired):
            pass
    return out


# ---------------------------------------------------------------- main


def mb(b):
    return f"{b / 1048576:.1f} MiB"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--app", default=os.path.join(TARGET, "release", "kairos-desktop"))
    ap.add_argument("--cli", default=os.path.join(TARGET, "release", "kairos"))
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--idle-secs", type=float, default=60)
    ap.add_argument("--settle", type=float, default=5, help="seconds before idle/RSS samples")
    ap.add_argument("--events", type=int, default=10000)
    ap.add_argument("--parts", default="start,idle,rss,size")
    ap.add_argument("--no-deb-build", action="store_true")
    ap.add_argument("--no-drop-caches", action="store_true")
    ap.add_argument("--json", help="also write all results here")
    ap.add_argument("--app-env", action="append", default=[], metavar="KEY=VALUE",
                    help="extra environment for the app (experiments), e.g. "
                         "WEBKIT_DISABLE_COMPOSITING_MODE=1")
    a = ap.parse_args()
    parts = set(a.parts.split(","))
    AppRun.extra_env = dict(kv.split("=", 1) for kv in a.app_env)

    for tool in ("Xvfb", "dbus-run-session", "xdotool"):
        if not shutil.which(tool):
            sys.exit(f"bench-app: {tool} not found (apt-get install xvfb dbus xdotool)")
    if not os.access(a.app, os.X_OK):
        sys.exit(f"bench-app: no app at {a.app} (cargo build --release -p kairos-desktop)")
    if "rss" in parts and not os.access(a.cli, os.X_OK):
        sys.exit(f"bench-app: no CLI at {a.cli} (cargo build --release -p kairos-cli)")

    res = {"date": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
           "commit": subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                    capture_output=True, text=True).stdout.strip(),
           "dirty": bool(subprocess.run(["git", "-C", ROOT, "status", "--porcelain"],
                                        capture_output=True, text=True).stdout.strip()),
           "app": a.app, "app_env": AppRun.extra_env, "cores": os.cpu_count(),
           "load_start": loadavg()}
    tmp = tempfile.mkdtemp(prefix="kairos-bench-app-")
    xvfb = None

    def on_signal(signum, _frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_signal)
    try:
        if parts & {"start", "idle", "rss"}:
            xvfb, display = start_xvfb(tmp)
            res["display"] = display
            log(f"bench-app: Xvfb on {display}, temp dir {tmp}")
        if "start" in parts:
            log(f"bench-app: start-up, {a.runs} runs")
            res["start"] = part_start(a.app, display, tmp, a.runs, not a.no_drop_caches)
        if "idle" in parts:
            log("bench-app: idle CPU")
            res["idle"] = part_idle(a.app, display, tmp, a.idle_secs, a.settle, xvfb.pid)
        if "rss" in parts:
            log(f"bench-app: RSS with {a.events} events")
            res["rss"] = part_rss(a.app, a.cli, display, tmp, a.events, a.settle)
        if "size" in parts:
            log("bench-app: sizes")
            res["size"] = part_size(a.app, not a.no_deb_build, tmp)
    finally:
        for p in reversed(_started):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                    p.wait(5)
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    try:
                        os.killpg(p.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
        shutil.rmtree(tmp, ignore_errors=True)
    res["load_end"] = loadavg()
    report(res)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


def report(r):
    p = print
    p(f"Kairos desktop app benchmark — {r['date']}, commit {r['commit']}"
      f"{' (+ uncommitted changes)' if r['dirty'] else ''}, {r['cores']} cores")
    p(f"load average at start {r['load_start']}, at end {r['load_end']}")
    if r.get("app_env"):
        p(f"extra app environment: {r['app_env']}")
    if "start" in r:
        rows = r["start"]
        p("\n1. Start-up to first view (release, Xvfb, fresh HOME and database per run)")
        p("   first-view-ms: in-app, main -> first `occurrences` reply; wall-ms: spawn -> that")
        p("   line; mapped-ms: spawn -> window visible; quiet-ms: spawn -> app + WebKit below")
        p("   10 % of one core (rendering done)")
        p(f"   {'run':>3} {'kind':5} {'first-view-ms':>13} {'wall-ms':>8} {'mapped-ms':>9} "
          f"{'quiet-ms':>8}  load")
        for x in rows:
            p(f"   {x['run']:>3} {x['kind']:5} {x['first_view_ms'] or '-':>13} "
              f"{x['wall_ms'] or '-':>8} {x['mapped_ms'] or '-':>9} {x.get('quiet_ms') or '-':>8}"
              f"  {x['load']}")
            if x.get("stderr_tail"):
                p("       no first-view line; stderr tail:")
                for line in x["stderr_tail"]:
                    p(f"         {line}")
        warm = [x for x in rows if x["kind"] == "warm" and x["first_view_ms"] is not None]
        if warm:
            fv = [x["first_view_ms"] for x in warm]
            wl = [x["wall_ms"] for x in warm]
            p(f"   warm ({len(warm)} runs): first-view-ms p50 {statistics.median(fv):.0f}, "
              f"max {max(fv)}; wall-ms p50 {statistics.median(wl):.0f}, max {max(wl)}")
            qs = [x["quiet_ms"] for x in warm if x.get("quiet_ms")]
            if qs:
                p(f"   warm quiet-ms p50 {statistics.median(qs):.0f}, max {max(qs)}; busiest "
                  f"threads from first view to quiet (last run, CPU-s): {warm[-1]['busy_threads']}")
    if "idle" in r:
        i = r["idle"]
        p("\n2. Idle CPU (app + descendants; % of one core; measured from quiet-ms "
          f"{i.get('quiet_ms')} + settle)")
        if i.get("error"):
            p(f"   error: {i['error']}")
            for line in i.get("stderr_tail", []):
                p(f"     {line}")
        for k, label, ld in (("open", "window open", "load_open"),
                             ("tray", "closed to tray", "load_tray")):
            if k not in i:
                continue
            w = i[k]
            p(f"   {label}: {w['cpu_pct']:.3f}% over {w['secs']} s ({w['cpu_s']} CPU-s), "
              f"load {i[ld]}; apart: Xvfb {w['outside'].get('Xvfb')}%, session bus "
              f"services {sum(w['session_services'].values()):.3f}%")
            for pr in sorted(w["processes"], key=lambda x: -x["cpu_pct"]):
                p(f"     {pr['cpu_pct']:7.3f}%  {pr['pid']:>7} {pr['comm']:<22}"
                  f"{' (new)' if pr['new'] else ''} {', '.join(pr['top_threads'])}")
            busy = {k: v for k, v in w["session_services"].items() if v > 0}
            if busy:
                p(f"     session bus services (not counted above): {busy}")
            if w["exited"]:
                p(f"     exited during the window: {w['exited']}")
        if "close_method" in i:
            p(f"   closed with {i['close_method']}: window visible afterwards "
              f"{i['window_visible_after_close']}, process alive {i['alive_after_close']}"
              f" (and at the end: {i.get('alive_at_end')})")
        for k in ("rss_open", "rss_tray"):
            if k in i:
                m = i[k]
                p(f"   memory ({k[4:]}, empty database): RSS {m['rss_mb']} MB, "
                  f"PSS {m['pss_mb']} MB (anon {m.get('pss_anon_mb')}, file "
                  f"{m.get('pss_file_mb')}): " + ", ".join(
                      f"{x['comm']} {x['rss_kb'] / 1024:.0f}/{(x['pss_kb'] or 0) / 1024:.0f}"
                      for x in m["processes"]) + " MB RSS/PSS")
    if "rss" in r:
        s = r["rss"]
        p(f"\n3. Memory with {sum(v for k, v in s['mix'].items() if k != 'alarms'):,} events")
        p(f"   mix {s['mix']}; .ics {mb(s['ics_bytes'])}; import {s['import_s']} s "
          f"-> {s['import_stdout']}")
        if s.get("error"):
            p(f"   error: {s['error']}")
            for line in s.get("stderr_tail", []):
                p(f"     {line}")
        else:
            m = s["mem"]
            fo = s.get("first_view_occurrences") or {}
            p(f"   database {mb(s['db_bytes'])}; the month grid {fo.get('from')}..{fo.get('to')} "
              f"holds {fo.get('count')} occurrences")
            p(f"   first-view-ms {s['first_view_ms']} (wall {s['wall_ms']} ms), quiet-ms "
              f"{s.get('quiet_ms')}, load {s['load']}")
            p(f"   busiest threads from first view to quiet (CPU-s): {s.get('busy_threads')}")
            p(f"   {s['settle_s']} s after quiet: RSS {m['rss_mb']} MB, PSS {m['pss_mb']} MB "
              f"(anon {m.get('pss_anon_mb')}, file {m.get('pss_file_mb')})")
            for pr in m["processes"]:
                p(f"     {pr['pid']:>7} {pr['comm']:<22} RSS {pr['rss_kb'] / 1024:7.1f} MB"
                  f"  PSS {(pr['pss_kb'] or 0) / 1024:7.1f} MB"
                  f"  (anon {(pr['pss_anon_kb'] or 0) / 1024:6.1f}, file "
                  f"{(pr['pss_file_kb'] or 0) / 1024:6.1f})")
    if "size" in r:
        z = r["size"]
        p("\n4. Sizes")
        p(f"   release binary: {z['binary_bytes']:,} bytes ({mb(z['binary_bytes'])}); stripped "
          + (f"{z['binary_stripped_bytes']:,} bytes ({mb(z['binary_stripped_bytes'])})"
             if z.get("binary_stripped_bytes") else "n/a"))
        if z.get("binary_bytes_after_bundle") not in (None, z["binary_bytes"]):
            p(f"   (after `tauri build`: {z['binary_bytes_after_bundle']:,} bytes)")
        if z.get("deb_build_s") is not None:
            p(f"   tauri build --bundles deb: rc {z.get('deb_build_rc')}, {z['deb_build_s']} s")
        if z.get("deb_error"):
            p("   bundler error:")
            for line in z["deb_error"].splitlines()[-30:]:
                p(f"     {line}")
        if z.get("deb"):
            p(f"   .deb: {z['deb']}: {z['deb_bytes']:,} bytes ({mb(z['deb_bytes'])}), "
              f"built {z['deb_mtime']}")
            if z.get("deb_fields"):
                for line in z["deb_fields"].splitlines():
                    p(f"     {line}")
        else:
            p("   .deb: none found")


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
