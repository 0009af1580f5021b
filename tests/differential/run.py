"""Differential test: the `kairos` CLI against reference.py (icalendar + recurring-ical-events).

    python tests/differential/run.py [--seed 1] [--count 300] [--only case-0007,case-0042]

Generates cases with gen.py into target/differential/cases, runs `$KAIROS_BIN occurrences
--strict` and `$KAIROS_BIN alarms --strict` on each (default binary: target/debug/kairos)
and the reference (strict: what RFC 5545 says, and the malformed-file contract; the
repairs of lenient reading, the default since issue #11, have their own corpus tests),
compares element by element (instants as instants, printed UTC offsets, all-day as dates;
both sides sorted the same way), also checks the malformed-file contract, prints a
divergence report per case and ends with `differential: N passed, M failed`, where M counts
cases with a divergence that no class in known_divergences.md accepts. Exit 1 if M > 0,
2 if the binary is missing.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from datetime import date, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
import gen  # noqa: E402
import known  # noqa: E402
import reference  # noqa: E402

MALFORMED = {
    "malformed-truncated": "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:x\r\nDTSTART:20260105T100000Z\r\n",
    "malformed-bad-date": "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\nBEGIN:VEVENT\r\nUID:x\r\n"
                          "DTSTAMP:20260101T000000Z\r\nDTSTART:2026-13-45\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
    "malformed-not-ics": "this is not a calendar\n",
}


def when(text):
    """('D', 'YYYY-MM-DD') for a date, ('T', epoch seconds, offset seconds) for a date-time."""
    if text is None:
        return None
    if not isinstance(text, str):
        return ("BAD", repr(text))
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return ("D", text)
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return ("BAD", text)
    if dt.tzinfo is None:
        return ("BAD", text)
    return ("T", int(dt.timestamp()), int(dt.utcoffset().total_seconds()))


def instant_key(w, tz):
    """Sort key: the instant (all-day: midnight in tz)."""
    if w is None or w[0] == "BAD":
        return float("inf")
    if w[0] == "D":
        return reference.instant(date.fromisoformat(w[1]), tz).timestamp()
    return w[1]


OCC_FIELDS = ["start", "end", "all_day", "summary", "recurrence_id"]
ALARM_FIELDS = ["trigger", "occurrence_start", "action", "summary"]


def norm(e, cmd):
    """Comparable view of one element (None for fields the comparison skips)."""
    if cmd == "occurrences":
        return {"uid": e.get("uid"), "start": when(e.get("start")), "end": when(e.get("end")),
                "all_day": e.get("all_day"), "summary": e.get("summary"),
                "recurrence_id": when(e.get("recurrence_id"))}
    return {"uid": e.get("uid"), "trigger": when(e.get("trigger")),
            "occurrence_start": None if e.get("_absolute") else when(e.get("occurrence_start")),
            "action": e.get("action"), "summary": e.get("summary")}


def compare(ref, got, cmd, tz):
    """List of divergences between the reference and the kairos output of one command."""
    divs, got = [], [dict(e) for e in got]      # our tags must not leak into the saved output
    fields = OCC_FIELDS if cmd == "occurrences" else ALARM_FIELDS
    sort_field = "start" if cmd == "occurrences" else "trigger"
    keys = [(instant_key(when(e.get(sort_field)), reference.ZoneInfo(tz)), str(e.get("uid"))) for e in got]
    if keys != sorted(keys):
        divs.append({"cmd": cmd, "kind": "order", "uid": None})
    if cmd == "alarms":
        for e in got:
            if not str(e.get("trigger", "")).endswith("Z"):
                divs.append({"cmd": cmd, "kind": "format", "uid": e.get("uid"), "kairos": e, "fields": ["trigger"]})
    # an absolute TRIGGER belongs to no single occurrence: occurrence_start is not compared
    absolute = {(e["uid"], when(e["trigger"])) for e in ref if e.get("_absolute")}
    for e in got:
        if cmd == "alarms" and (e.get("uid"), when(e.get("trigger"))) in absolute:
            e["_absolute"] = True
    refs = [(e, norm(e, cmd)) for e in ref]
    gots = [(e, norm(e, cmd)) for e in got]
    if cmd == "occurrences":   # 3.6.1 implied end: kairos may print null instead
        null_end = {(g["uid"], g["start"]) for e, g in gots if e.get("end") is None}
        refs = [(e, dict(n, end=None) if e.get("_end_implied") and (n["uid"], n["start"]) in null_end else n)
                for e, n in refs]
    canon = lambda n: json.dumps(n, sort_keys=True)

    def minus(xs, ys):         # multiset difference xs - ys on the canonical view
        pool = Counter(canon(n) for _, n in ys)
        left = []
        for e, n in xs:
            if pool[canon(n)] > 0:
                pool[canon(n)] -= 1
            else:
                left.append((e, n))
        return left
    left_ref, left_got = minus(refs, gots), minus(gots, refs)
    left_ref.sort(key=lambda x: instant_key(x[1][sort_field], reference.ZoneInfo(tz)))
    left_got.sort(key=lambda x: instant_key(x[1][sort_field], reference.ZoneInfo(tz)))
    pair_keys = (["recurrence_id", "start"] if cmd == "occurrences" else ["trigger", "occurrence_start"])
    for pk in pair_keys:                        # pair leftovers to show field differences
        for r in list(left_ref):
            for g in left_got:
                if g[1]["uid"] == r[1]["uid"] and r[1][pk] is not None and g[1][pk] == r[1][pk]:
                    diff = [f for f in fields if g[1][f] != r[1][f]]
                    divs.append({"cmd": cmd, "kind": "field", "uid": r[1]["uid"], "fields": diff,
                                 "ref": r[0], "kairos": g[0]})
                    left_ref.remove(r)
                    left_got.remove(g)
                    break
    divs += [{"cmd": cmd, "kind": "missing", "uid": n["uid"], "ref": e} for e, n in left_ref]
    divs += [{"cmd": cmd, "kind": "extra", "uid": n["uid"], "kairos": e} for e, n in left_got]
    return divs


def run_kairos(binary, cmd, path, a):
    try:
        p = subprocess.run([binary, cmd, str(path), "--strict", "--from", a.t1, "--to", a.t2,
                            "--tz", a.tz], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return None, "timeout after 120 s"
    if p.returncode != 0:
        return None, f"exit {p.returncode}: {p.stderr.strip()[:300]}"
    try:
        data = json.loads(p.stdout)
    except json.JSONDecodeError as exc:
        return None, f"stdout is not JSON ({exc})"
    if not isinstance(data, list) or not all(isinstance(e, dict) for e in data):
        return None, "stdout is not a JSON array of objects"
    return data, None


def check_case(binary, path, meta, a, out):
    """Divergences of one generated case (each tagged with its matching class, if any)."""
    divs, refs, gots = [], {}, {}
    cal = reference.load(path)
    for cmd in ("occurrences", "alarms"):
        fn = reference.occurrences if cmd == "occurrences" else reference.alarms
        ref = refs[cmd] = fn(cal, reference.parse_instant(a.t1), reference.parse_instant(a.t2), a.tz)
        got, err = run_kairos(binary, cmd, path, a)
        gots[cmd] = got
        if err:
            divs.append({"cmd": cmd, "kind": "error", "uid": None, "message": err})
            continue
        d = compare(ref, got, cmd, a.tz)
        if d:
            (out / f"{path.stem}.{cmd}.reference.json").write_text(json.dumps(ref, indent=1, ensure_ascii=False))
            (out / f"{path.stem}.{cmd}.kairos.json").write_text(json.dumps(got, indent=1, ensure_ascii=False))
        divs += d
    ctx = known.Case(path, meta, a, refs, gots)
    for d in divs:
        d["known"] = known.classify(d, ctx)
    return divs


def check_malformed(binary, name, text, out, a):
    path = out / f"{name}.ics"
    path.write_text(text)
    divs = []
    for cmd in ("occurrences", "alarms"):
        p = subprocess.run([binary, cmd, str(path), "--strict", "--from", a.t1, "--to", a.t2,
                            "--tz", a.tz], capture_output=True, text=True, timeout=60)
        lines = p.stderr.strip("\n").split("\n") if p.stderr.strip() else []
        if p.returncode == 0 or p.stdout or len(lines) != 1:
            divs.append({"cmd": cmd, "kind": "contract", "uid": None, "known": None,
                         "message": f"exit {p.returncode}, {len(p.stdout)} bytes on stdout, "
                                    f"{len(lines)} stderr lines (want non-zero, 0, 1)"})
    return divs


def show(e, keys):
    return " ".join(f"{k}={e.get(k)}" for k in keys if k in e)


def describe(d):
    tag = f" [known {d['known']}]" if d.get("known") else ""
    head = f"  {d['cmd']}: {d['kind']}{tag}"
    keys = ["uid", "start", "end", "recurrence_id", "all_day", "summary"] if d["cmd"] == "occurrences" \
        else ["uid", "trigger", "occurrence_start", "action", "summary"]
    if d["kind"] in ("error", "contract"):
        return f"{head}: {d['message']}"
    if d["kind"] == "order":
        return f"{head}: kairos output is not sorted by ({'start' if d['cmd'] == 'occurrences' else 'trigger'}, uid)"
    if d["kind"] == "missing":
        return f"{head} in kairos: {show(d['ref'], keys)}"
    if d["kind"] == "extra":
        return f"{head} in kairos: {show(d['kairos'], keys)}"
    if d["kind"] == "format":
        return f"{head}: {show(d['kairos'], keys)}"
    fs = ", ".join(f"{f}: ref={d['ref'].get(f)!r} kairos={d['kairos'].get(f)!r}" for f in d["fields"])
    return f"{head} uid={d['uid']} start={d['ref'].get('start', d['ref'].get('occurrence_start'))}: {fs}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--only", default="", help="comma-separated case names to run")
    ap.add_argument("--out", default=str(ROOT / "target" / "differential"))
    ap.add_argument("--kairos", default=os.environ.get("KAIROS_BIN", str(ROOT / "target" / "debug" / "kairos")))
    ap.add_argument("--from", dest="t1", default="2026-01-01T00:00:00Z")
    ap.add_argument("--to", dest="t2", default="2028-01-01T00:00:00Z")
    ap.add_argument("--tz", default="Europe/Berlin")
    ap.add_argument("--max-lines", type=int, default=12, help="divergence lines shown per case")
    a = ap.parse_args()
    binary = shutil.which(a.kairos) or a.kairos
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        print(f"differential: kairos binary not found or not executable: {binary}\n"
              f"  build it with `cargo build -p kairos-cli`, or set KAIROS_BIN", file=sys.stderr)
        return 2
    out = Path(a.out) / "cases"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    only = {s.strip() for s in a.only.split(",") if s.strip()}
    cases = []
    for i in range(1, a.count + 1):
        case, text, meta = gen.make_case(a.seed, i)
        if only and case not in only:
            continue
        (out / f"{case}.ics").write_bytes(text.encode())
        (out / f"{case}.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
        cases.append((case, meta))
    passed, failed, known_count, report, brief = 0, 0, Counter(), [], []
    results = [(c, check_case(binary, out / f"{c}.ics", m, a, out), m) for c, m in cases]
    results += [(n, check_malformed(binary, n, t, out, a), None) for n, t in MALFORMED.items()
                if not only or n in only]
    for case, divs, meta in results:
        unknown = [d for d in divs if not d.get("known")]
        if unknown:
            failed += 1
        else:
            passed += 1
        known_count.update(d["known"] for d in divs if d.get("known"))
        if divs:
            props = ""
            if meta:
                props = " | ".join(f"{e['zone']} {e['rrule'] or 'single'}" for e in meta["events"])
            lines = [f"{case}.ics{' (FAIL)' if unknown else ' (known only)'}  {props}"]
            ordered = unknown + [d for d in divs if d.get("known")]
            lines += [describe(d) for d in ordered[:a.max_lines]]
            if len(ordered) > a.max_lines:
                lines.append(f"  ... and {len(ordered) - a.max_lines} more (see {out}/{case}.*.json)")
            report.append("\n".join(lines))
            classes = Counter(d["known"] for d in divs if d.get("known"))
            tags = ", ".join(f"{k} x{v}" for k, v in sorted(classes.items()))
            brief.append(report[-1] if unknown else f"{case}.ics (known only: {tags})")
    (Path(a.out) / "report.txt").write_text("\n".join(report) + "\n")
    print("\n".join(brief))       # full detail of accepted ones is in report.txt
    if known_count:
        print("differential: accepted documented divergences: "
              + ", ".join(f"{k} x{v}" for k, v in sorted(known_count.items())))
    print(f"differential: report in {Path(a.out) / 'report.txt'}, cases in {out}")
    print(f"differential: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
