"""Reference implementation of `kairos occurrences` / `kairos alarms`, built on
icalendar + recurring-ical-events (dateutil underneath).

    python reference.py occurrences FILE.ics --from T1 --to T2 [--tz ZONE]
    python reference.py alarms FILE.ics --from T1 --to T2 [--tz ZONE]

prints the JSON the Kairos CLI contract describes. Elements may carry extra keys
starting with "_" (facts the comparator needs, e.g. "_end_implied" when the event has
neither DTEND nor DURATION); the Kairos output never has them.

Adaptations to the library, all of them mechanical (none changes which instances exist):
* recurring-ical-events `between()` selects events that *overlap* the window; the
  contract selects by *start* in [T1, T2), so we filter by start afterwards.
* Floating times and all-day dates are placed in ZONE (the window is passed in ZONE,
  so the library does the same when comparing).
* Printed offsets are normalised (UTC round trip), so a wall time inside a DST gap
  prints with the offset really in force, e.g. 02:30 EST-in-gap -> 03:30-04:00.
* recurring-ical-events computes an all-day event's relative alarm as date+timedelta
  (the time part is dropped, and it then crashes on as_component); for all-day parents
  we take the (alarm, occurrence) pairs it finds and compute midnight-in-ZONE + offset.
"""
import argparse
import json
import sys
from datetime import date, datetime, timedelta, timezone
import zoneinfo
from zoneinfo import ZoneInfo

import icalendar
import recurring_ical_events

# use the pinned `tzdata` wheel, not the machine's zone files: same answers everywhere
zoneinfo.reset_tzpath(to=())

UTC = timezone.utc


def parse_instant(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def is_date(v):
    return isinstance(v, date) and not isinstance(v, datetime)


def instant(v, tz):
    """UTC instant of a date (midnight in tz), floating datetime (in tz) or aware one."""
    if is_date(v):
        v = datetime(v.year, v.month, v.day)
    if v.tzinfo is None:
        v = v.replace(tzinfo=tz)
    return v.astimezone(UTC)


def fmt(v, tz):
    """Contract format: YYYY-MM-DD, or RFC 3339 with the offset in force in the event's zone."""
    if is_date(v):
        return v.isoformat()
    zone = v.tzinfo or tz
    local = instant(v, tz).astimezone(zone)
    s = local.isoformat(timespec="seconds")
    return s[:-6] + "Z" if local.utcoffset() == timedelta(0) and _is_utc(zone) else s


def _is_utc(zone):
    return zone is UTC or getattr(zone, "key", None) in ("UTC", "Etc/UTC") or str(zone) == "UTC"


def load(path):
    with open(path, "rb") as f:
        return icalendar.Calendar.from_ical(f.read())


def _source_events(cal, tz):
    """(uid, recurrence-id instant or None) -> VEVENT, to see what the file really said."""
    out = {}
    for ev in cal.walk("VEVENT"):
        rid = ev.get("RECURRENCE-ID")
        out[(str(ev.get("UID")), instant(rid.dt, tz) if rid else None)] = ev
    return out


def occurrences(cal, t1, t2, tzname):
    tz = ZoneInfo(tzname)
    sources = _source_events(cal, tz)
    query = recurring_ical_events.of(cal)
    out = []
    for c in query.between(t1.astimezone(tz), t2.astimezone(tz)):
        start = c["DTSTART"].dt
        if not t1 <= instant(start, tz) < t2:
            continue
        uid = str(c.get("UID"))
        rid = c.get("RECURRENCE-ID")
        override = sources.get((uid, instant(rid.dt, tz))) if rid else None
        master = sources.get((uid, None))
        src = override or master
        # the library stamps a RECURRENCE-ID on every occurrence; the contract wants
        # null for a non-recurring event (no RRULE/RDATE, not an override)
        recurring = override is not None or (master is not None and (
            "RRULE" in master or "RDATE" in master))
        end = c.get("DTEND")
        elem = {
            "uid": uid,
            "recurrence_id": fmt(rid.dt, tz) if rid and recurring else None,
            "summary": str(c.get("SUMMARY", "")),
            "start": fmt(start, tz),
            "end": fmt(end.dt, tz) if end is not None else None,
            "all_day": is_date(start),
        }
        if not is_date(start):   # the library's own wall time, for known.py's checks
            elem["_wall"] = start.replace(tzinfo=None).isoformat()
        if src is not None and "DTEND" not in src and "DURATION" not in src:
            elem["_end_implied"] = True
        out.append(elem)
    out.sort(key=lambda e: (occ_key(e["start"], tz), e["uid"]))
    return out


def occ_key(text, tz):
    """Sort key of a printed start: its instant (all-day: midnight in tz)."""
    if len(text) == 10:
        return instant(date.fromisoformat(text), tz)
    return parse_instant(text)


def _offsets(alarm):
    trig = alarm.TRIGGER
    offs = [trig]
    for _ in range(alarm.REPEAT):
        offs.append(offs[-1] + alarm.DURATION)
    return offs


def alarms(cal, t1, t2, tzname):
    tz = ZoneInfo(tzname)
    query = recurring_ical_events.of(cal, components=["VALARM"])
    pad = timedelta(days=2)    # all-day triggers from the library are off by < 1 day
    # private API of the pinned version: the public between() crashes for all-day
    # parents (see the module docstring) and would drop the occurrence link
    found = query._occurrences_between((t1 - pad).astimezone(tz), (t2 + pad).astimezone(tz))
    out, seen_allday = [], set()
    for ao in found:
        parent = ao.parent
        adapter = getattr(parent, "_adapter", parent)
        comp = adapter._component
        absolute = isinstance(ao.alarm.TRIGGER, datetime)
        base = {"uid": str(comp.get("UID")), "occurrence_start": fmt(parent.start, tz),
                "action": str(ao.alarm.get("ACTION", "")), "summary": str(comp.get("SUMMARY", ""))}
        if absolute:
            base["_absolute"] = True
        if not is_date(parent.start):
            base["_wall"] = parent.start.replace(tzinfo=None).isoformat()
        if not absolute and is_date(parent.start):
            key = (id(ao.alarm), id(adapter), parent.start)   # once per (alarm, occurrence)
            if key in seen_allday:
                continue
            seen_allday.add(key)
            anchor = parent.end if ao.alarm.TRIGGER_RELATED == "END" else parent.start
            anchor = datetime(anchor.year, anchor.month, anchor.day, tzinfo=tz)
            triggers = [(anchor + off).astimezone(UTC) for off in _offsets(ao.alarm)]
        else:
            triggers = [instant(ao.start, tz)]
        for trig in triggers:
            if t1 <= trig < t2:
                out.append(dict(base, trigger=trig.strftime("%Y-%m-%dT%H:%M:%SZ")))
    out.sort(key=lambda e: (e["trigger"], e["uid"]))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description="reference occurrences/alarms (recurring-ical-events)")
    ap.add_argument("command", choices=["occurrences", "alarms"])
    ap.add_argument("file")
    ap.add_argument("--from", dest="t1", required=True)
    ap.add_argument("--to", dest="t2", required=True)
    ap.add_argument("--tz", default="Europe/Berlin")
    a = ap.parse_args(argv)
    try:
        cal = load(a.file)
        fn = occurrences if a.command == "occurrences" else alarms
        result = fn(cal, parse_instant(a.t1), parse_instant(a.t2), a.tz)
    except Exception as exc:  # contract: one line on stderr, nothing on stdout
        print(f"error: {type(exc).__name__}: {exc}".splitlines()[0], file=sys.stderr)
        return 1
    json.dump(result, sys.stdout, indent=1, ensure_ascii=False)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
