"""Accepted divergence classes: narrow predicates, each documented in known_divergences.md.

classify(d, ctx) returns the id of the class that accepts divergence `d` (a dict from
run.compare) in case `ctx` (Case below), else None. Each predicate re-derives the
expected value from the raw .ics text with an RFC 5545 oracle and accepts only when
Kairos equals the oracle *and* the reference equals its known-wrong (or undefined)
reading. Every id must have a `## ID` section in known_divergences.md (checked at import).
"""
import re
from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from dateutil.rrule import rrulestr

from oracle import (UTC, add_rfc, dt_of, duration, ends, first, master_of, moment, naive,
                    nominal_from_gap, parse_out, parse_raw, period_rdate, resolve, same,
                    source, zone_for)

DOC = Path(__file__).resolve().parent / "known_divergences.md"
CLASSES = []


def divergence_class(cid):
    def register(fn):
        CLASSES.append((cid, fn))
        return fn
    return register


class Case:
    """What a predicate may look at: meta, raw VEVENTs, both outputs, the window zone."""

    def __init__(self, path, meta, args, ref, got):
        self.path, self.meta, self.ref, self.got = path, meta, ref, got
        self.tz = ZoneInfo(args.tz)
        self.t1, self.t2 = parse_out(args.t1), parse_out(args.t2)
        self.events = parse_raw(path.read_text(encoding="utf-8"))

    def of(self, uid):
        return [e for e in self.events if first(e, "UID")[1] == uid]


def classify(d, ctx):
    for cid, fn in CLASSES:
        try:
            verdict = fn(d, ctx)
        except (KeyError, ValueError, TypeError, IndexError, StopIteration, AttributeError):
            continue            # a predicate that cannot decide does not accept
        if verdict:
            return verdict if isinstance(verdict, str) else cid
    return None


# ---------- KD-1 / KD-2: end and alarm arithmetic across a UTC-offset change ----------

def _end_class(d, ctx):
    r, k = d["ref"], d["kairos"]
    start, wall = parse_out(r["start"]).astimezone(UTC), datetime.fromisoformat(r["_wall"])
    ev = source(ctx, r["uid"], start, parse_out(r["recurrence_id"]) if r["recurrence_id"] else None)
    if period_rdate(master_of(ctx, r["uid"]), start, ctx):
        return None             # RDATE;VALUE=PERIOD sets its own length: not this class
    zone = dt_of(ev, "DTSTART", ctx)[2]
    rfc, wall_len = ends(ev, start, wall, ctx)
    if same(k["end"], rfc, zone) and parse_out(r["end"]) == resolve(wall + wall_len, zone):
        dv = first(ev, "DURATION")[1]
        days = first(ev, "DTEND")[1] is None and dv is not None and duration(dv)[0] != 0
        return "KD-2" if days and nominal_from_gap(ev, wall, ctx) else "KD-1"
    return None


def _alarm_sets(ctx, uid, start, wall):
    """Multisets of relative-alarm triggers in the window for the occurrence at `start`:
    (RFC, the reference's wall-clock reading, RFC but nominal days from the written wall)."""
    ev = source(ctx, uid, start)
    if period_rdate(master_of(ctx, uid), start, ctx):
        return None
    zone = dt_of(ev, "DTSTART", ctx)[2]
    rfc_end, wall_len = ends(ev, start, wall, ctx)
    out = ([], [], [])
    for alarm in ev["alarms"]:
        p, v = first(alarm, "TRIGGER")
        if p.get("VALUE") == "DATE-TIME":
            continue
        trig, rep = duration(v), int(first(alarm, "REPEAT")[1] or 0)
        step = duration(first(alarm, "DURATION")[1]) if rep else (0, 0)
        end_rel = p.get("RELATED") == "END"
        for n in range(rep + 1):
            off = (trig[0] + n * step[0], trig[1] + n * step[1])
            anchor = rfc_end if end_rel else start
            out[0].append(add_rfc(anchor, off, zone))
            out[1].append(resolve((wall + wall_len if end_rel else wall) + timedelta(days=off[0], seconds=off[1]), zone))
            out[2].append(add_rfc(rfc_end, off, zone) if end_rel else
                          resolve(wall + timedelta(days=off[0]), zone) + timedelta(seconds=off[1]))
    return tuple(sorted(t for t in xs if ctx.t1 <= t < ctx.t2) for xs in out)


def _trigger_class(d, ctx):
    e = d.get("kairos") or d["ref"]
    uid, occ = e["uid"], moment(e["occurrence_start"])
    refs = [x for x in ctx.ref["alarms"] if x["uid"] == uid and not x.get("_absolute")
            and moment(x["occurrence_start"]) == occ]
    if isinstance(occ, str):                            # all-day: midnight in --tz
        wall = datetime.fromisoformat(occ)
        start = resolve(wall, ctx.tz)
    else:
        start = occ.astimezone(UTC)
        zone = dt_of(source(ctx, uid, start), "DTSTART", ctx)[2]
        wall = datetime.fromisoformat(refs[0]["_wall"]) if refs else start.astimezone(zone).replace(tzinfo=None)
    sets = _alarm_sets(ctx, uid, start, wall)
    absolute = {resolve(naive(v), UTC) for ev in ctx.of(uid) for a in ev["alarms"]
                for n, p, v in a if n == "TRIGGER" and p.get("VALUE") == "DATE-TIME"}
    got = sorted(parse_out(x["trigger"]) for x in ctx.got["alarms"] if x["uid"] == uid
                 and moment(x["occurrence_start"]) == occ and parse_out(x["trigger"]) not in absolute)
    want = sorted(parse_out(x["trigger"]) for x in refs)
    if sets and got == sets[0] and want == sets[1] and got != want:
        return "KD-1" if sets[0] == sets[2] else "KD-2"
    return None


@divergence_class("KD-1/2")
def dst_arithmetic(d, ctx):
    if d["kind"] != "field" or "_wall" not in d["ref"]:
        return None
    if d["cmd"] == "occurrences" and d["fields"] == ["end"]:
        return _end_class(d, ctx)
    return None


@divergence_class("KD-1/2 alarms")
def dst_alarm_arithmetic(d, ctx):
    if d["cmd"] == "alarms" and (d["kind"] in ("missing", "extra") or d.get("fields") == ["trigger"]):
        return _trigger_class(d, ctx)
    return None


# ---------- KD-3: RECURRENCE-ID of instances after a RANGE=THISANDFUTURE override ----------

@divergence_class("KD-3")
def thisandfuture_rid(d, ctx):
    if d["kind"] != "field" or d["fields"] != ["recurrence_id"] or d["cmd"] != "occurrences":
        return False
    r, k = d["ref"], d["kairos"]
    for ev in ctx.of(r["uid"]):
        p, v = first(ev, "RECURRENCE-ID")
        if v is None or p.get("RANGE") != "THISANDFUTURE":
            continue
        if len(r["start"]) == 10:   # all-day: shift in days
            shift = naive(first(ev, "DTSTART")[1]) - naive(v)
            if r["recurrence_id"] == naive(v).date().isoformat() and \
                    k["recurrence_id"] == (date.fromisoformat(k["start"]) - shift).isoformat():
                return True
            continue
        rinst = resolve(naive(v), zone_for(p, v, ctx))
        shift = dt_of(ev, "DTSTART", ctx)[0] - rinst
        if parse_out(r["recurrence_id"]) == rinst and parse_out(k["recurrence_id"]) == parse_out(k["start"]) - shift:
            return True
    return False


# ---------- KD-4: COUNT with a DTSTART that the rule does not produce ----------

@divergence_class("KD-4")
def unsynced_count(d, ctx):
    if d["kind"] != "missing":
        return False
    uid = d["ref"]["uid"]
    m = next(e for e in ctx.meta["events"] if e["uid"] == uid)
    if not (m["unsynced"] and m["count"]):
        return False
    master = master_of(ctx, uid)
    p, v = first(master, "DTSTART")
    last = list(rrulestr(first(master, "RRULE")[1], dtstart=naive(v)))[-1]
    missing = d["ref"]["start" if d["cmd"] == "occurrences" else "occurrence_start"]
    if len(missing) == 10:
        return missing == last.date().isoformat()
    return parse_out(missing) == resolve(last, zone_for(p, v, ctx))


# ---------- KD-5: the same instant generated twice (wall-clock HOURLY over a gap) ----------

@divergence_class("KD-5")
def duplicate_instant(d, ctx):
    if d["kind"] != "missing":
        return False
    r = d["ref"]
    key = "start" if d["cmd"] == "occurrences" else "occurrence_start"
    t = parse_out(r[key])
    occ = [e for e in ctx.ref["occurrences"] if e["uid"] == r["uid"] and parse_out(e["start"]) == t]
    kai = [e for e in ctx.got["occurrences"] if e["uid"] == r["uid"] and parse_out(e["start"]) == t]
    walls = {e.get("_wall") for e in occ}
    return len(occ) >= 2 and len(walls) == len(occ) and len(kai) == 1 and "HOURLY" in str(
        first(ctx.of(r["uid"])[0], "RRULE")[1])


# ---------- KD-6: reference matches EXDATE/RECURRENCE-ID by UTC wall time as local ----------

@divergence_class("KD-6")
def utc_local_id_confusion(d, ctx):
    if d["kind"] != "extra":
        return False
    k = d["kairos"]
    key = "start" if d["cmd"] == "occurrences" else "occurrence_start"
    t = parse_out(k[key])
    zone = dt_of(master_of(ctx, k["uid"]), "DTSTART", ctx)[2]
    local = t.astimezone(zone).replace(tzinfo=None)
    overridden = [dt_of(e, "DTSTART", ctx)[0] for e in ctx.of(k["uid"]) if first(e, "RECURRENCE-ID")[1]]
    if t in overridden or (d["cmd"] == "occurrences" and k["recurrence_id"] != k["start"]):
        return False            # only plain rule instances
    t_utc = t.astimezone(UTC).replace(tzinfo=None)
    for ev in ctx.of(k["uid"]):
        for n, p, v in ev["props"]:
            if n not in ("EXDATE", "RECURRENCE-ID"):
                continue
            for x in v.split(","):
                inst = resolve(naive(x), zone_for(p, x, ctx))
                # the library keys both by (UTC wall, local wall) and lets them cross
                if inst != t and (inst.replace(tzinfo=None) == local or naive(x) == t_utc):
                    return True
    return False


# ---------- KD-7: DTEND earlier than a DTSTART that 3.3.5 moved out of a gap ----------

@divergence_class("KD-7")
def dtend_before_gap_start(d, ctx):
    if d["kind"] != "error" or "DTEND is before DTSTART" not in d["message"]:
        return False
    for ev in ctx.events:
        if first(ev, "DTEND")[1] is None or "T" not in first(ev, "DTSTART")[1]:
            continue
        s, ws, _ = dt_of(ev, "DTSTART", ctx)
        e, we, _ = dt_of(ev, "DTEND", ctx)
        if we > ws and e < s and nominal_from_gap(ev, ws, ctx):
            return True
    return False


def _check_documented():
    documented = set(re.findall(r"^## (KD-\d+)\b", DOC.read_text(), re.M)) if DOC.exists() else set()
    ids = {i for cid, _ in CLASSES for i in (["KD-1", "KD-2"] if cid.startswith("KD-1/2") else [cid])}
    missing = sorted(ids - documented)
    if missing:
        raise SystemExit(f"known.py: classes not documented in {DOC.name}: {missing}")


_check_documented()
