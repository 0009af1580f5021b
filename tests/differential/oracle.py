"""RFC 5545 oracle for known.py: a raw .ics reader (DURATION text as written, which
icalendar normalises away: PT25H and P1DT1H both become timedelta(days=1, hours=1)) and
the time arithmetic RFC 5545 prescribes (3.3.5 gaps/overlaps, 3.3.6 nominal days vs
exact time, 3.8.5.3 exact DTEND length, 3.6.1 implied ends, 3.8.4.4 overrides).
"""
import re
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

UTC = timezone.utc


def parse_raw(text):
    """VEVENTs as {"props": [(NAME, {PARAM: v}, value)], "alarms": [[...]]}."""
    lines = re.sub(r"\r?\n[ \t]", "", text).splitlines()
    events, cur, alarm = [], None, None
    for line in lines:
        name, params, value = split_prop(line)
        if (name, value) == ("BEGIN", "VEVENT"):
            cur = {"props": [], "alarms": []}
        elif (name, value) == ("END", "VEVENT") and cur is not None:
            events.append(cur)
            cur = None
        elif (name, value) == ("BEGIN", "VALARM") and cur is not None:
            alarm = []
        elif (name, value) == ("END", "VALARM") and alarm is not None:
            cur["alarms"].append(alarm)
            alarm = None
        elif alarm is not None:
            alarm.append((name, params, value))
        elif cur is not None:
            cur["props"].append((name, params, value))
    return events


def split_prop(line):
    head, _, value = line.partition(":")
    name, *ps = head.split(";")
    return name.upper(), dict(p.split("=", 1) for p in ps if "=" in p), value


def first(props, name):
    props = props["props"] if isinstance(props, dict) else props
    return next(((p, v) for n, p, v in props if n == name), ({}, None))


def zone_for(params, value, ctx):
    if "TZID" in params:
        return ZoneInfo(params["TZID"])
    return UTC if value.endswith("Z") else ctx.tz


def naive(value):
    v = value.rstrip("Z")
    return datetime.strptime(v, "%Y%m%dT%H%M%S") if "T" in v else datetime.strptime(v, "%Y%m%d")


def resolve(wall, zone):
    """RFC 5545 3.3.5: gap -> offset before the gap, overlap -> first (fold=0)."""
    return wall.replace(tzinfo=zone).astimezone(UTC)


def dt_of(ev, name, ctx):
    p, v = first(ev, name)
    return resolve(naive(v), zone_for(p, v, ctx)), naive(v), zone_for(p, v, ctx)


def duration(text):
    """(nominal days, exact seconds) of a DURATION as written (3.3.6)."""
    m = re.fullmatch(r"([+-])?P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?", text)
    sign = -1 if m.group(1) == "-" else 1
    w, d, h, mi, s = (int(g or 0) for g in m.groups()[1:])
    return sign * (7 * w + d), sign * (3600 * h + 60 * mi + s)


def add_rfc(instant, dur, zone):
    """instant + DURATION: days on the wall clock of `zone`, then exact seconds."""
    if dur[0]:
        instant = resolve(instant.astimezone(zone).replace(tzinfo=None) + timedelta(days=dur[0]), zone)
    return instant + timedelta(seconds=dur[1])


def parse_out(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def same(printed, instant, zone):
    """Printed value is `instant` with the offset really in force in `zone`."""
    t = parse_out(printed)
    return t == instant and t.utcoffset() == instant.astimezone(zone).utcoffset()


def source(ctx, uid, start, rid=None):
    """The component that governs an occurrence: exact override, else the latest
    RANGE=THISANDFUTURE override at or before it, else the master."""
    evs = ctx.of(uid)
    master = next(e for e in evs if first(e, "RECURRENCE-ID")[1] is None)
    taf, best = [], master
    for e in evs:
        p, v = first(e, "RECURRENCE-ID")
        if v is None:
            continue
        rinst = resolve(naive(v), zone_for(p, v, ctx))
        if (rid is not None and rinst == rid) or dt_of(e, "DTSTART", ctx)[0] == start:
            return e
        if p.get("RANGE") == "THISANDFUTURE":
            taf.append((rinst, e))
    for rinst, e in sorted(taf, key=lambda x: x[0]):
        shift = dt_of(e, "DTSTART", ctx)[0] - rinst
        if rinst + shift <= start:
            best = e
    return best


def ends(ev, start, wall, ctx):
    """(RFC end, the reference's wall-clock length) of an occurrence of `ev` at `start`:
    DTEND keeps the exact length (3.8.5.3), DURATION is nominal days + exact time,
    neither is one day for a DATE and nothing for a DATE-TIME (3.6.1)."""
    s0, w0, zone = dt_of(ev, "DTSTART", ctx)
    all_day = "T" not in first(ev, "DTSTART")[1]
    if first(ev, "DTEND")[1] is not None:
        e0, we0, _ = dt_of(ev, "DTEND", ctx)
        return (resolve(wall + (we0 - w0), zone) if all_day else start + (e0 - s0)), we0 - w0
    dv = first(ev, "DURATION")[1]
    d = duration(dv) if dv else ((1, 0) if all_day else (0, 0))
    length = timedelta(days=d[0], seconds=d[1])
    return (resolve(wall + length, zone) if all_day else add_rfc(start, d, zone)), length


def master_of(ctx, uid):
    return next(e for e in ctx.of(uid) if first(e, "RECURRENCE-ID")[1] is None)


def period_rdate(ev, start, ctx):
    return any(n == "RDATE" and p.get("VALUE") == "PERIOD" and any(
        resolve(naive(x.split("/")[0]), zone_for(p, x.split("/")[0], ctx)) == start for x in v.split(","))
        for n, p, v in ev["props"])


def nominal_from_gap(ev, wall, ctx):
    """Does the occurrence's written wall time fall in a gap (3.3.5 shifts it)?"""
    zone = dt_of(ev, "DTSTART", ctx)[2]
    return resolve(wall, zone).astimezone(zone).replace(tzinfo=None) != wall


def moment(text):
    return text if len(text) == 10 else parse_out(text)
