#!/usr/bin/python3
"""Month switching on the dense calendar (issue #18, docs/benchmarks.md).

Imports 10,000 generated events (scripts/bench_app.py's mix) with the CLI,
starts the RELEASE app under WebKitWebDriver (tests/e2e/webdriver.py)
and clicks "next" then "prev" N times each, timing each click until the view
title changed, the month's events are drawn and two animation frames have
passed (the browser painted). Then the PSS of the app's tree. Run under
`dbus-run-session -- xvfb-run -a -s "-screen 0 1280x860x24"`.

Usage: scripts/bench_month_switch.py APP CLI [--clicks 6] [--app-env K=V]...
       [--json FILE]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "e2e"))
import bench_app  # noqa: E402
import webdriver as wd  # noqa: E402

# Resolves with the ms from the click until the title changed, the month's
# events exist and two frames were painted; null after 20 s.
CLICK = """
const [id, done] = [arguments[0], arguments[arguments.length - 1]];
const title = () => document.querySelector('#view-title').textContent;
const before = title(), t0 = performance.now();
document.getElementById(id).click();
const poll = () => {
  if (performance.now() - t0 > 20000) return done(null);
  if (title() !== before && document.querySelectorAll('.fc-event').length > 0)
    return requestAnimationFrame(() => requestAnimationFrame(() => done(performance.now() - t0)));
  setTimeout(poll, 5);
};
poll();
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("app")
    ap.add_argument("cli")
    ap.add_argument("--clicks", type=int, default=6)
    ap.add_argument("--events", type=int, default=10000)
    ap.add_argument("--app-env", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--json")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="kairos-switch-")
    db, ics = os.path.join(work, "kairos.db"), os.path.join(work, "dense.ics")
    bench_app.make_ics(ics, a.events)
    subprocess.run([a.cli, "--db", db, "import", ics, "--calendar", "Bench"], check=True,
                   capture_output=True, env=dict(os.environ, HOME=work), timeout=600)
    env = dict(KAIROS_DB=db, HOME=work,
               XDG_CONFIG_HOME=os.path.join(work, ".config"),
               XDG_DATA_HOME=os.path.join(work, ".local/share"),
               XDG_CACHE_HOME=os.path.join(work, ".cache"))
    for kv in a.app_env:
        k, _, v = kv.partition("=")
        env[k] = v
    out = {"app": a.app, "app_env": a.app_env, "load": bench_app.loadavg()}
    with wd.Driver(env=env, log_path=os.path.join(work, "driver.log")) as drv:
        with drv.new_session(a.app) as s:
            s.wait_until(lambda: s.execute("return document.body.dataset.ready") == "1",
                         timeout=60, message="UI ready")
            s.wait_until(lambda: s.execute("return document.querySelectorAll('.fc-event').length") > 0,
                         timeout=60, message="first month drawn")
            for button in ("next", "prev"):
                ms = [s.execute_async(CLICK, button, timeout=30) for _ in range(a.clicks)]
                out[button + "_ms"] = [round(x) if x is not None else None for x in ms]
            time.sleep(3)
            app_pids = [int(p) for p in subprocess.run(
                ["pgrep", "-f", "^" + a.app], capture_output=True, text=True).stdout.split()]
            if app_pids:
                out["mem"] = bench_app.tree_mem(app_pids[0])
    every = [x for k in ("next_ms", "prev_ms") for x in out[k] if x is not None]
    out["switch_ms_p50"] = statistics.median(every) if every else None
    out["switch_ms_max"] = max(every) if every else None
    print(json.dumps({k: out[k] for k in out if k != "mem"}))
    if "mem" in out:
        m = out["mem"]
        print("PSS tree %s MB:" % m["pss_mb"], ", ".join(
            "%s %.1f" % (r["comm"], (r["pss_kb"] or 0) / 1024) for r in m["processes"]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
