"""Seeded generator of random RFC 5545 test calendars for the differential harness.

`python gen.py --seed 1 --count 300 --out DIR` writes DIR/case-NNNN.ics (one VCALENDAR
per case: one or two series, plus RECURRENCE-ID overrides) and DIR/case-NNNN.json (the
case's properties, used by run.py to match documented divergence classes).
The same seed always gives byte-identical files.

Covered: FREQ HOURLY/DAILY/WEEKLY/MONTHLY/YEARLY, INTERVAL, COUNT/UNTIL/infinite, BYDAY
(with ordinals only where RFC 5545 3.3.10 allows them), BYMONTHDAY (also negative),
BYMONTH, BYSETPOS, BYYEARDAY, BYWEEKNO (YEARLY only), WKST; IANA zones, UTC (Z) and
floating times; all-day events; DTEND/DURATION/neither; EXDATE (sometimes in UTC),
RDATE (sometimes PERIOD); overrides (a few RANGE=THISANDFUTURE); VALARMs (relative, RELATED=END, absolute, REPEAT);
start times inside DST gaps and overlaps; optional VTIMEZONE blocks; line folding.
DTSTART is made to match its rule (3.8.5.3 SHOULD) except in a few flagged cases.
"""
import argparse
import json
import random
from datetime import date, datetime, timedelta
from itertools import islice
from pathlib import Path

from dateutil.rrule import rrulestr

from gen_ics import dtprop, esc, fold, to_utc, transitions, vtimezone

ZONES = ["America/New_York", "Europe/Berlin", "Australia/Sydney", "America/Santiago",
         "Europe/London", "Asia/Shanghai", "Asia/Kolkata", "UTC", "floating"]
DAYS = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]
SUMMARIES = ["Stand-up", "1:1 with Ana", "Team sync, weekly; room 4", "Réunion 会议",
             "Contract renewal", "A deliberately long summary that will need folding "
             "because it is longer than seventy-five octets in total"]


def random_rule(rng, all_day):
    """Return (freq, list of rule parts without COUNT/UNTIL), obeying 3.3.10 MUST NOTs."""
    freq = rng.choices(["HOURLY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY"],
                       [0 if all_day else 5, 25, 30, 25, 15])[0]
    parts = [f"FREQ={freq}"]
    if freq == "HOURLY":
        parts.append(f"INTERVAL={rng.choice([1, 2, 3, 5, 7, 12, 25])}")
    elif rng.random() < 0.4:
        parts.append(f"INTERVAL={rng.randint(2, 4)}")
    days = lambda k: ",".join(sorted(rng.sample(DAYS, k), key=DAYS.index))
    monthday = lambda lo: rng.choice([d for d in range(lo, 29) if d] + [-1, -2, -7])
    r = rng.random()
    if freq == "DAILY":
        if r < 0.2:
            parts.append(f"BYDAY={days(rng.randint(1, 5))}")
        elif r < 0.3:
            parts.append(f"BYMONTH={rng.randint(1, 12)},{rng.randint(1, 12)}")
        elif r < 0.4:
            parts.append(f"BYMONTHDAY={monthday(1)},{rng.choice([29, 30, 31, -1])}")
    elif freq == "WEEKLY":
        if r < 0.6:
            parts.append(f"BYDAY={days(rng.randint(1, 4))}")
            if rng.random() < 0.15:
                parts.append(f"BYSETPOS={rng.choice([1, -1])}")
        if r > 0.9:
            parts.append(f"BYMONTH={rng.randint(1, 12)},{rng.randint(1, 12)}")
    elif freq == "MONTHLY":
        if r < 0.35:
            parts.append(f"BYDAY={rng.choice(['1', '2', '3', '4', '-1', '-2'])}{rng.choice(DAYS)}")
        elif r < 0.55:
            parts.append(f"BYDAY={rng.choice(['MO,TU,WE,TH,FR', 'SA,SU', days(2)])}")
            parts.append(f"BYSETPOS={rng.choice(['1', '-1', '2', '1,-1'])}")
        elif r < 0.85:
            parts.append(f"BYMONTHDAY={rng.choice([str(monthday(1)), '31', '30', '29', '-1', '1,15', '-1,-15'])}")
        if rng.random() < 0.15:
            parts.append(f"BYMONTH={','.join(str(m) for m in sorted(rng.sample(range(1, 13), 3)))}")
    elif freq == "YEARLY":
        month = rng.randint(1, 12)
        if r < 0.3:
            parts += [f"BYMONTH={month}", f"BYDAY={rng.choice(['1', '2', '-1'])}{rng.choice(DAYS)}"]
        elif r < 0.5:
            parts += [f"BYMONTH={month}", f"BYMONTHDAY={monthday(-28)}"]
        elif r < 0.65:
            parts.append(f"BYYEARDAY={rng.choice(['1', '100', '-1', '-100', '60', '1,-1'])}")
        elif r < 0.85:
            parts += [f"BYWEEKNO={rng.choice(['1', '20', '-1', '53', '10,30'])}", f"BYDAY={days(rng.randint(1, 2))}"]
            parts.append(f"WKST={rng.choice(['MO', 'SU', 'TH'])}")
        elif r < 0.92:
            parts += [f"BYMONTH={month}", f"BYDAY={rng.choice(['MO,TU,WE,TH,FR', 'SA,SU'])}", f"BYSETPOS={rng.choice(['1', '-1'])}"]
    if freq == "WEEKLY" and "BYDAY" in ";".join(parts) and rng.random() < 0.4:
        parts.append(f"WKST={rng.choice(['SU', 'TH', 'MO'])}")
    return freq, parts


def rand_wall(rng, case_no):
    """A random wall-clock DTSTART candidate; a few sit exactly on the window edges."""
    if rng.random() < 0.04:
        return rng.choice([datetime(2026, 1, 1), datetime(2028, 1, 1), datetime(2027, 12, 31, 23)])
    d = date(2025, 6, 1) + timedelta(days=rng.randint(0, 950))
    return datetime(d.year, d.month, d.day, rng.randint(0, 23), rng.choice([0, 0, 15, 30, 45]))


def make_event(rng, case, n, out_meta):
    """Return the VEVENT lines (master + overrides) of one series and record its meta."""
    zone = rng.choice(ZONES)
    all_day = rng.random() < 0.15
    uid = f"{case}-e{n}@kairos.test"
    m = {"uid": uid, "zone": "date" if all_day else zone, "all_day": all_day, "rrule": None,
         "freq": None, "near_dst": False, "unsynced": False, "count": None, "until": False,
         "rdate_period": False, "exdate_utc": False, "rdate_only": False, "overrides": 0,
         "end_style": None, "alarms": []}
    wall = rand_wall(rng, case)
    trans = transitions(zone)
    recurring = rng.random() < 0.78
    freq, parts = (random_rule(rng, all_day) if recurring else (None, []))
    if not all_day and trans and rng.random() < 0.3:       # start inside a gap/overlap
        t, before, after = rng.choice(trans)
        gap = after > before
        w = (t + (before if gap else after)).replace(tzinfo=None) + abs(after - before) / 2
        m["near_dst"] = "gap" if gap else "overlap"
        if recurring and rng.random() < 0.7:
            freq, parts = rng.choice(["DAILY", "WEEKLY"]), []
            parts = [f"FREQ={freq}"]
            w -= timedelta(days=rng.randint(0, 4) * (7 if freq == "WEEKLY" else 1))
        elif recurring and rng.random() < 0.5:
            freq, parts = "HOURLY", ["FREQ=HOURLY"]
            w -= timedelta(hours=rng.randint(0, 6))
        wall = w
    if all_day:
        wall = wall.replace(hour=0, minute=0)
    occ = []
    if recurring:
        rule = rrulestr(";".join(parts), dtstart=wall)
        first = next(iter(rule), None)
        if first is None or rng.random() < 0.05:
            m["unsynced"] = first is None or first != wall
        else:
            if wall != first:
                m["near_dst"] = False
            wall = first
            if next(iter(rrulestr(";".join(parts), dtstart=wall))) != wall:
                m["unsynced"] = True
        occ = list(islice(rrulestr(";".join(parts), dtstart=wall), 400))   # rule instances
        end_kind = rng.choices(["count", "until", "none"], [35, 30, 35])[0]
        if freq == "HOURLY" and end_kind == "none":
            end_kind = "count"
        if end_kind == "count" or not occ:
            cnt = rng.randint(1, 60 if freq == "HOURLY" else 30)
            parts.append(f"COUNT={cnt}")
            m["count"] = cnt
            occ = occ[:cnt]
        elif end_kind == "until":
            u = rng.choice(occ[:40])
            if rng.random() < 0.4:
                u += timedelta(minutes=rng.randint(1, 3000))
            if all_day:
                parts.append(f"UNTIL={u:%Y%m%d}")
            elif zone == "floating":
                parts.append(f"UNTIL={u:%Y%m%dT%H%M%S}")
            else:
                parts.append(f"UNTIL={to_utc(u, zone):%Y%m%dT%H%M%SZ}")
            m["until"] = True
            occ = [o for o in occ if (o.date() <= u.date() if all_day else
                                      o <= u if zone == "floating" else to_utc(o, zone) <= to_utc(u, zone))]
        m["rrule"], m["freq"] = ";".join(parts), freq
    lines = ["BEGIN:VEVENT", f"UID:{uid}", "DTSTAMP:20260101T000000Z",
             dtprop("DTSTART", wall.date() if all_day else wall, zone, all_day)]
    if recurring:
        lines.append(f"RRULE:{m['rrule']}")
    elif rng.random() < 0.15:                                # RDATE-only series
        m["rdate_only"] = True
    # --- end: DTEND / DURATION / neither (3.6.1 defaults) ---
    if all_day:
        style = rng.choices(["DTEND", "DURATION", "none"], [60, 20, 20])[0]
        days_len = rng.randint(1, 3)
        end_line = dtprop("DTEND", wall.date() + timedelta(days=days_len), zone, True)
        dur = f"P{days_len}D"
    else:
        style = rng.choices(["DTEND", "DURATION", "none"], [55, 35, 10])[0]
        dur = rng.choice(["PT30M", "PT1H", "PT1H30M", "PT2H", "P1D", "PT24H", "PT25H", "P1DT1H", "PT0S"])
        mins = rng.choice([30, 45, 60, 90, 120, 60 * 24, 60 * 26])
        end_line = dtprop("DTEND", wall + timedelta(minutes=mins), zone, False)
    m["end_style"] = style
    if style == "DTEND":
        lines.append(end_line)
    elif style == "DURATION":
        lines.append(f"DURATION:{dur}")
        m["duration"] = dur
    lines.append(f"SUMMARY:{esc(rng.choice(SUMMARIES))} [{uid}]")
    excluded = set()
    if recurring and occ and rng.random() < 0.25:           # EXDATE
        ex = rng.sample(occ[:30], min(len(occ[:30]), rng.randint(1, 3)))
        excluded = set(ex)
        if rng.random() < 0.1:
            ex.append(wall + timedelta(minutes=7))          # matches nothing
        if not all_day and zone not in ("floating", "UTC") and rng.random() < 0.25:
            m["exdate_utc"] = True
            lines.append("EXDATE:" + ",".join(f"{to_utc(e, zone):%Y%m%dT%H%M%SZ}" for e in ex))
        else:
            vals = ",".join(dtprop("X", e.date() if all_day else e, zone, all_day).split(":", 1)[1] for e in ex)
            lines.append(dtprop("EXDATE", wall, zone, all_day).split(":", 1)[0] + ":" + vals)
    if m["rdate_only"] or (recurring and rng.random() < 0.15):   # RDATE
        rd = [wall + timedelta(days=rng.randint(1, 500), hours=rng.choice([0, 0, 3, -5]))
              for _ in range(rng.randint(1, 3))]
        if occ and rng.random() < 0.4:
            rd.append(rng.choice(occ[:20]))                  # duplicate: counted once
        if all_day:
            rd = [r.replace(hour=0) for r in rd]
        head = dtprop("RDATE", wall, zone, all_day).split(":", 1)[0]
        if not all_day and rng.random() < 0.15:
            m["rdate_period"] = True
            lines.append(head + ";VALUE=PERIOD:" + ",".join(f"{r:%Y%m%dT%H%M%S}{'Z' if zone == 'UTC' else ''}/PT45M" for r in rd))
        else:
            fmt = "%Y%m%d" if all_day else "%Y%m%dT%H%M%S" + ("Z" if zone == "UTC" else "")
            lines.append(head + ":" + ",".join(f"{r:{fmt}}" for r in rd))
    alarm_lines = make_alarms(rng, uid, wall, zone, all_day, m)
    lines += alarm_lines + ["END:VEVENT"]
    candidates = [o for o in occ[:200] if o not in excluded
                  and datetime(2025, 12, 1) <= o < datetime(2028, 2, 1)][:60]
    for k in range(rng.choice([0, 0, 0, 1, 2]) if recurring and candidates else 0):
        if not candidates:
            break
        rid = rng.choice(candidates)
        candidates.remove(rid)
        shift = timedelta(days=rng.choice([0, 1, -1, 2])) if all_day else \
            timedelta(hours=rng.choice([0, 1, -2, 3, 24, -30]), minutes=rng.choice([0, 30]))
        new = rid + shift
        thisandfuture = rng.random() < 0.08                  # 3.8.4.4 RANGE
        m["thisandfuture"] = m.get("thisandfuture", False) or thisandfuture
        ov = ["BEGIN:VEVENT", f"UID:{uid}", "DTSTAMP:20260101T000000Z",
              dtprop("RECURRENCE-ID", rid.date() if all_day else rid, zone, all_day,
                     ";RANGE=THISANDFUTURE" if thisandfuture else ""),
              dtprop("DTSTART", new.date() if all_day else new, zone, all_day)]
        if style == "DURATION":
            ov.append(f"DURATION:{dur}")
        elif style == "DTEND":
            ov.append(dtprop("DTEND", (new.date() + timedelta(days=days_len)) if all_day
                             else new + timedelta(minutes=mins), zone, all_day))
        ov.append(f"SUMMARY:moved {k}: {esc(rng.choice(SUMMARIES))}")
        pick = rng.random()
        if pick < 0.5:
            ov += alarm_lines                                # same alarms as master
        elif pick < 0.75:
            ov += make_alarms(rng, uid + "-ov", new, zone, all_day, m, force=True)
        lines += ov + ["END:VEVENT"]
        m["overrides"] += 1
    out_meta.append(m)
    return lines


def make_alarms(rng, uid, wall, zone, all_day, m, force=False):
    """VALARM blocks with distinct DESCRIPTIONs (so no two alarms are identical)."""
    lines = []
    for i in range(rng.choice([1, 2]) if force or rng.random() < 0.45 else 0):
        if all_day:
            trig = rng.choice(["TRIGGER:-PT15M", "TRIGGER:-P1D", "TRIGGER:PT9H", "TRIGGER:-PT15H",
                               "TRIGGER;RELATED=END:PT0S", "TRIGGER:PT0S"])
        else:
            trig = rng.choice(["TRIGGER:-PT15M", "TRIGGER:-P1D", "TRIGGER:PT0S", "TRIGGER:-PT1H30M",
                               "TRIGGER;RELATED=END:PT0S", "TRIGGER;RELATED=END:-PT5M",
                               "TRIGGER:PT10M", "TRIGGER:-P1DT2H", "ABS"])
        if trig == "ABS" or rng.random() < 0.05:
            base = to_utc(wall if not all_day else datetime.combine(wall, datetime.min.time()), zone)
            trig = f"TRIGGER;VALUE=DATE-TIME:{base - timedelta(minutes=rng.randint(0, 4000)):%Y%m%dT%H%M%SZ}"
        action = rng.choices(["DISPLAY", "AUDIO", "EMAIL"], [70, 20, 10])[0]
        lines += ["BEGIN:VALARM", f"ACTION:{action}", trig]
        if action != "AUDIO":
            lines.append(f"DESCRIPTION:alarm {i} of {uid}")
        else:
            lines.append(f"X-KAIROS-TEST:alarm {i} of {uid}")
        if action == "EMAIL":
            lines += [f"SUMMARY:mail {i}", "ATTENDEE:mailto:someone@example.com"]
        rep = None
        if rng.random() < 0.2:
            rep = (rng.randint(1, 3), rng.choice(["PT5M", "PT10M", "PT1H"]))
            lines += [f"REPEAT:{rep[0]}", f"DURATION:{rep[1]}"]
        lines.append("END:VALARM")
        m["alarms"].append({"trigger": trig, "action": action, "repeat": rep})
    return lines


def make_case(seed, i):
    rng = random.Random(f"{seed}:{i}")
    case = f"case-{i:04d}"
    meta_events, body = [], []
    for n in range(2 if rng.random() < 0.15 else 1):
        body += make_event(rng, case, n, meta_events)
    zones = sorted({e["zone"] for e in meta_events} - {"UTC", "floating", "date"})
    with_vtz = rng.random() < 0.5
    head = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Kairos//differential gen//EN"]
    for z in zones if with_vtz else []:
        head += vtimezone(z)
    text = "\r\n".join(fold(line) for line in head + body + ["END:VCALENDAR"]) + "\r\n"
    return case, text, {"case": case, "seed": seed, "vtimezone": with_vtz, "events": meta_events}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    for i in range(1, a.count + 1):
        case, text, meta = make_case(a.seed, i)
        (out / f"{case}.ics").write_bytes(text.encode())
        (out / f"{case}.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
    print(f"gen: wrote {a.count} cases to {out}")


if __name__ == "__main__":
    main()
