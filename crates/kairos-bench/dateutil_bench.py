#!/usr/bin/env python3
"""The python-dateutil side of kairos-bench: expand the same events over the same
window and report how long the expansion took.

Input: the JSON that `kairos-bench` writes (events.json): window `from`/`to` (UTC),
`floating` (zone for floating times and all-day dates), and per event `dtstart`
(wall-clock, ISO 8601, no offset), `tzid` (IANA name, "UTC", or null = floating),
`all_day`, `rrule` (RRULE value without UNTIL), `until_utc` / `until_local`, and
`exdates` (wall-clock like dtstart).

What it does per event, mirroring RFC 5545 and Kairos:
  * `rrulestr(rrule, dtstart=<naive wall-clock dtstart>)`: dateutil iterates in
    wall-clock time, always from DTSTART (dateutil cannot start mid-series);
  * `rule.between(lo, hi, inc=True)` with the window converted to the event's
    wall clock and widened by two days, so no zone offset can cut an occurrence;
  * each wall-clock result is localised with zoneinfo, `fold=0`: a time in a DST
    gap takes the offset before the gap, a repeated time is the first one
    (RFC 5545 §3.3.5, as Kairos does), then converted to UTC;
  * UNTIL is applied here, not by dateutil (which refuses a UTC UNTIL with a naive
    DTSTART): by instant for zoned events, by wall clock for floating/all-day ones;
  * EXDATEs are excluded by instant (all-day ones by date); instants that do not
    increase are dropped (as Kairos drops duplicates);
  * the occurrence counts if its UTC start is in [from, to).

Only that loop is timed: reading the JSON, building datetimes, zone objects and
the rrulestr() parse happen before the clock starts (the parse is timed apart).

Output: one JSON object on stdout: seconds (wall clock), cpu_seconds (process
CPU time, steadier when other work shares the cores), parse_seconds,
occurrences, per_uid (counts by UID), versions.
"""

import json
import platform
import sys
import time
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import dateutil
from dateutil.rrule import rrulestr

UTC = timezone.utc
WIDEN = timedelta(days=2)


def utc(text):
    """An ISO 8601 instant ending in Z."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def prepare(doc):
    floating = ZoneInfo(doc["floating"]) if doc["floating"] != "UTC" else UTC
    zones = {}
    prepared = []
    for ev in doc["events"]:
        tzid = ev["tzid"]
        if tzid is None:
            tz = floating
        elif tzid == "UTC":
            tz = UTC
        else:
            tz = zones.setdefault(tzid, ZoneInfo(tzid))
        until_utc = utc(ev["until_utc"] + "Z") if ev["until_utc"] else None
        until_local = (
            datetime.fromisoformat(ev["until_local"]) if ev["until_local"] else None
        )
        all_day = ev["all_day"]
        exdates = [datetime.fromisoformat(x) for x in ev["exdates"]]
        if all_day:
            ex_key = {x.date() for x in exdates}
        else:
            ex_key = {x.replace(tzinfo=tz).astimezone(UTC) for x in exdates}
        prepared.append(
            {
                "uid": ev["uid"],
                "dtstart": datetime.fromisoformat(ev["dtstart"]),
                "rrule": ev["rrule"],
                "tz": tz,
                "all_day": all_day,
                "until_utc": until_utc,
                "until_local": until_local,
                "ex": ex_key,
            }
        )
    return prepared


def expand(ev, rule, start, end):
    """Occurrence count of one event in [start, end) (UTC)."""
    tz = ev["tz"]
    lo = start.astimezone(tz).replace(tzinfo=None) - WIDEN
    hi = end.astimezone(tz).replace(tzinfo=None) + WIDEN
    until_utc, until_local = ev["until_utc"], ev["until_local"]
    ex, all_day = ev["ex"], ev["all_day"]
    last = None
    n = 0
    for local in rule.between(lo, hi, inc=True):
        if until_local is not None and local > until_local:
            break
        instant = local.replace(tzinfo=tz).astimezone(UTC)
        if until_utc is not None and instant > until_utc:
            break
        if last is not None and instant <= last:
            continue
        if ex and (local.date() if all_day else instant) in ex:
            continue
        last = instant
        if start <= instant < end:
            n += 1
    return n


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: dateutil_bench.py EVENTS.json")
    with open(sys.argv[1], encoding="utf-8") as f:
        doc = json.load(f)
    start, end = utc(doc["from"]), utc(doc["to"])
    events = prepare(doc)

    t0 = time.perf_counter()
    rules = [rrulestr(ev["rrule"], dtstart=ev["dtstart"]) for ev in events]
    parse_seconds = time.perf_counter() - t0

    t0, c0 = time.perf_counter(), time.process_time()
    counts = [expand(ev, rule, start, end) for ev, rule in zip(events, rules)]
    seconds = time.perf_counter() - t0
    cpu_seconds = time.process_time() - c0

    json.dump(
        {
            "seconds": seconds,
            "cpu_seconds": cpu_seconds,
            "parse_seconds": parse_seconds,
            "occurrences": sum(counts),
            "per_uid": {ev["uid"]: n for ev, n in zip(events, counts)},
            "python": platform.python_version(),
            "dateutil": dateutil.__version__,
        },
        sys.stdout,
    )
    print()


if __name__ == "__main__":
    main()
