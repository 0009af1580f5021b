"""ICS-writing helpers for gen.py: line folding, escaping, date-valued properties,
a zone's DST transitions and a VTIMEZONE with RFC 5545 3.6.5 onsets.

(icalendar's Timezone.from_tzinfo writes a spring-forward onset in the *new* offset's
local time, e.g. America/New_York DAYLIGHT DTSTART:20250309T030000 with
TZOFFSETFROM:-0500, one hour late; so we write our own.)
"""
import zoneinfo
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

# use the pinned `tzdata` wheel, not the machine's zone files: same answers everywhere
zoneinfo.reset_tzpath(to=())
UTC = timezone.utc


def fold(line):
    """Fold a content line at 75 octets (RFC 5545 3.1) without splitting a UTF-8 char."""
    out, cur, limit = [], b"", 75
    for ch in line:
        b = ch.encode()
        if len(cur) + len(b) > limit:
            out.append(cur.decode())
            cur, limit = b"", 74
        cur += b
    out.append(cur.decode())
    return "\r\n ".join(out)


def esc(text):
    return text.replace("\\", "\\\\").replace(",", "\\,").replace(";", "\\;")


def to_utc(wall, zone, floating_zone="Europe/Berlin"):
    """Instant of a wall time; fold=0 gives RFC 5545 3.3.5 gap/overlap semantics."""
    name = floating_zone if zone == "floating" else zone
    return wall.replace(tzinfo=ZoneInfo(name)).astimezone(UTC)


def dtprop(name, value, zone, all_day, extra=""):
    """Format NAME[;params]:value in the form DTSTART uses (3.8.5.1: same type)."""
    if all_day:
        return f"{name};VALUE=DATE{extra}:{value:%Y%m%d}"
    if zone == "UTC":
        return f"{name}{extra}:{value:%Y%m%dT%H%M%S}Z"
    if zone == "floating":
        return f"{name}{extra}:{value:%Y%m%dT%H%M%S}"
    return f"{name};TZID={zone}{extra}:{value:%Y%m%dT%H%M%S}"


def transitions(zone):
    """(utc instant, offset before, offset after) for each transition 2025-2028."""
    if zone in ("UTC", "floating"):
        return []
    tz, out = ZoneInfo(zone), []
    t, end = datetime(2025, 1, 1, tzinfo=UTC), datetime(2029, 1, 1, tzinfo=UTC)
    prev = t.astimezone(tz).utcoffset()
    while t < end:
        t += timedelta(hours=1)
        off = t.astimezone(tz).utcoffset()
        if off != prev:
            out.append((t, prev, off))
            prev = off
    return out


def vtimezone(zone):
    """A VTIMEZONE for 2025-2028 with onsets in TZOFFSETFROM local time (3.6.5)."""
    def hhmm(td):
        s = int(td.total_seconds())
        return f"{'+' if s >= 0 else '-'}{abs(s) // 3600:02d}{abs(s) % 3600 // 60:02d}"
    tz = ZoneInfo(zone)
    lines = ["BEGIN:VTIMEZONE", f"TZID:{zone}"]
    first = datetime(2025, 1, 1, tzinfo=UTC).astimezone(tz)
    subs = [(datetime(2025, 1, 1), first.utcoffset(), first.utcoffset(), first.dst())]
    for t, before, after in transitions(zone):
        subs.append(((t + before).replace(tzinfo=None), before, after, t.astimezone(tz).dst()))
    for onset, frm, to, dst in subs:
        kind = "DAYLIGHT" if dst else "STANDARD"
        lines += [f"BEGIN:{kind}", f"DTSTART:{onset:%Y%m%dT%H%M%S}",
                  f"TZOFFSETFROM:{hhmm(frm)}", f"TZOFFSETTO:{hhmm(to)}", f"END:{kind}"]
    return lines + ["END:VTIMEZONE"]
