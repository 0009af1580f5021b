//! `VTIMEZONE`s for what Kairos writes (RFC 5545 §3.6.5: an object whose
//! times carry `TZID=` must carry the `VTIMEZONE` each names).
//!
//! Kairos stores components alone and names zones by IANA name (see
//! kairos-core's export); the blocks are added on the way out, to the body
//! of each `PUT` only, so the stored text and its hash (how a local edit is
//! noticed) never depend on them. chrono-tz exposes offsets, not rules: each
//! block lists the zone's real transitions, found by probing its offsets,
//! as observances (`STANDARD`/`DAYLIGHT`, first one `DTSTART`, the others
//! `RDATE`, in local time before the change, RFC 5545 §3.6.5), from the
//! year before the earliest time named to [`YEARS_AHEAD`] years after the
//! latest (or the current year); before them, one observance with the
//! offset then in effect. A `TZID` chrono-tz does not know is left alone
//! (custom zones are written in UTC by the export), as is one whose block
//! the text already has.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use chrono::{DateTime, Datelike, Duration, NaiveDate, Offset, TimeZone, Utc};
use chrono_tz::{OffsetComponents, OffsetName, Tz};

/// Years of transitions written after the latest year an object names.
pub const YEARS_AHEAD: i32 = 10;

/// The `TZID` values of `text`'s content lines with the years they name.
fn tzids(text: &str) -> BTreeMap<String, (i32, i32)> {
    let mut out: BTreeMap<String, (i32, i32)> = BTreeMap::new();
    for line in text.replace("\r\n ", "").replace("\r\n\t", "").lines() {
        let Some(i) = line.to_ascii_uppercase().find(";TZID=") else {
            continue;
        };
        let rest = &line[i + 6..];
        let (name, after) = match rest.strip_prefix('"') {
            Some(q) => q.split_once('"').unwrap_or((q, "")),
            None => rest.split_at(rest.find([';', ':']).unwrap_or(rest.len())),
        };
        let year = after
            .rsplit(':')
            .next()
            .and_then(|v| v.get(..4))
            .and_then(|y| y.parse::<i32>().ok());
        let e = out.entry(name.to_owned()).or_insert((i32::MAX, i32::MIN));
        if let Some(y) = year {
            *e = (e.0.min(y), e.1.max(y));
        }
    }
    out
}

/// `text` (one `VCALENDAR`) with a `VTIMEZONE` for each known `TZID` it
/// names and lacks, before its first component; `this_year` bounds how far
/// ahead transitions are written.
#[must_use]
pub fn with_vtimezones(text: &str, this_year: i32) -> String {
    let mut blocks = String::new();
    for (name, (lo, hi)) in tzids(text) {
        let Ok(tz) = name.parse::<Tz>() else { continue };
        if text.contains(&format!("TZID:{name}\r\n")) {
            continue;
        }
        let lo = if lo == i32::MAX { this_year } else { lo };
        let hi = hi.max(this_year);
        blocks.push_str(&vtimezone(tz, &name, lo - 1, hi + YEARS_AHEAD));
    }
    if blocks.is_empty() {
        return text.to_owned();
    }
    let at = ["BEGIN:VEVENT", "BEGIN:VTODO", "BEGIN:VJOURNAL"]
        .iter()
        .filter_map(|b| text.find(b))
        .min()
        .or_else(|| text.rfind("END:VCALENDAR"))
        .unwrap_or(text.len());
    let mut out = String::with_capacity(text.len() + blocks.len());
    out.push_str(&text[..at]);
    out.push_str(&blocks);
    out.push_str(&text[at..]);
    out
}

/// An offset's traits: seconds east of UTC, daylight saving, name.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Obs {
    utc: i32,
    dst: bool,
    name: String,
}

fn obs(tz: Tz, t: DateTime<Utc>) -> Obs {
    let o = tz.offset_from_utc_datetime(&t.naive_utc());
    Obs {
        utc: o.fix().local_minus_utc(),
        dst: o.dst_offset() != Duration::zero(),
        name: o.abbreviation().unwrap_or_default().to_owned(),
    }
}

fn offset(secs: i32) -> String {
    let sign = if secs < 0 { '-' } else { '+' };
    let a = secs.unsigned_abs();
    let (h, m, s) = (a / 3600, a / 60 % 60, a % 60);
    if s == 0 {
        format!("{sign}{h:02}{m:02}")
    } else {
        format!("{sign}{h:02}{m:02}{s:02}")
    }
}

/// Every change of `tz`'s offset, DST flag or name in `[from, to)`: the
/// instant and what holds from then on (probed daily, then bisected to
/// the second).
fn transitions(tz: Tz, from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<(DateTime<Utc>, Obs)> {
    let mut out = Vec::new();
    let mut t = from;
    let mut cur = obs(tz, t);
    while t < to {
        let next = t + Duration::days(1);
        let o = obs(tz, next);
        if o != cur {
            let (mut a, mut b) = (t, next);
            while b - a > Duration::seconds(1) {
                let mid = a + (b - a) / 2;
                if obs(tz, mid) == cur {
                    a = mid;
                } else {
                    b = mid;
                }
            }
            let o = obs(tz, b);
            out.push((b, o.clone()));
            cur = o;
        }
        t = next;
    }
    out
}

fn year_start(y: i32) -> DateTime<Utc> {
    NaiveDate::from_ymd_opt(y.clamp(1, 9998), 1, 1)
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map_or(DateTime::<Utc>::UNIX_EPOCH, |n| n.and_utc())
}

/// One `VTIMEZONE` for `tz` covering years `first..=last`.
fn vtimezone(tz: Tz, name: &str, first: i32, last: i32) -> String {
    let (from, to) = (year_start(first), year_start(last + 1));
    let start = obs(tz, from);
    // Observances with the same offsets, DST flag and name: one component,
    // its first local start as DTSTART, the others as RDATEs.
    let mut groups: BTreeMap<(bool, i32, i32, String), Vec<String>> = BTreeMap::new();
    let local = |t: DateTime<Utc>, secs: i32| {
        (t + Duration::seconds(i64::from(secs)))
            .format("%Y%m%dT%H%M%S")
            .to_string()
    };
    groups
        .entry((start.dst, start.utc, start.utc, start.name.clone()))
        .or_default()
        .push(local(from, start.utc));
    let mut prev = start;
    for (t, o) in transitions(tz, from, to) {
        groups
            .entry((o.dst, prev.utc, o.utc, o.name.clone()))
            .or_default()
            .push(local(t, prev.utc));
        prev = o;
    }
    let mut s = format!("BEGIN:VTIMEZONE\r\nTZID:{name}\r\n");
    for ((dst, from_off, to_off, abbr), starts) in groups {
        let kind = if dst { "DAYLIGHT" } else { "STANDARD" };
        let _ = write!(
            s,
            "BEGIN:{kind}\r\nDTSTART:{}\r\nTZOFFSETFROM:{}\r\nTZOFFSETTO:{}\r\n",
            starts[0],
            offset(from_off),
            offset(to_off)
        );
        for r in &starts[1..] {
            let _ = write!(s, "RDATE:{r}\r\n");
        }
        if !abbr.is_empty() && !abbr.starts_with(['+', '-']) {
            let _ = write!(s, "TZNAME:{abbr}\r\n");
        }
        let _ = write!(s, "END:{kind}\r\n");
    }
    s.push_str("END:VTIMEZONE\r\n");
    s
}

/// The current year of `now` (for [`with_vtimezones`]).
#[must_use]
pub fn year_of(now: DateTime<Utc>) -> i32 {
    now.year()
}

#[cfg(test)]
mod tests {
    use super::*;

    const EV: &str = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:a\r\n\
                      DTSTART;TZID=Europe/Berlin:20260302T100000\r\nEXDATE;TZID=\"Asia/Tokyo\":20260309T100000\r\n\
                      END:VEVENT\r\nEND:VCALENDAR\r\n";

    #[test]
    fn berlin_2026_transitions_in_local_time_before_the_change() {
        let out = with_vtimezones(EV, 2026);
        let b = out.split("BEGIN:VTIMEZONE").nth(1).unwrap_or_default();
        assert!(
            b.starts_with("\r\nTZID:Asia/Tokyo"),
            "sorted by name: {out}"
        );
        let berlin = out
            .split("BEGIN:VTIMEZONE")
            .find(|b| b.contains("TZID:Europe/Berlin"))
            .unwrap_or_default();
        assert!(berlin.contains("RDATE:20260329T020000"), "{berlin}");
        assert!(berlin.contains("RDATE:20261025T030000"), "{berlin}");
        assert!(
            berlin.contains("BEGIN:DAYLIGHT\r\nDTSTART:20250330T020000\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0200"),
            "{berlin}"
        );
        assert!(berlin.contains("TZNAME:CEST"), "{berlin}");
        // Up to ten years past 2026, not beyond.
        assert!(berlin.contains("RDATE:20361026T030000"), "{berlin}");
        assert!(!berlin.contains("RDATE:2037"), "{berlin}");
        // Tokyo: no change since 1951, one observance.
        let tokyo = out
            .split("BEGIN:VTIMEZONE")
            .find(|b| b.contains("TZID:Asia/Tokyo"))
            .unwrap_or_default();
        assert_eq!(tokyo.matches("BEGIN:STANDARD").count(), 1, "{tokyo}");
        assert!(tokyo.contains("TZOFFSETTO:+0900"), "{tokyo}");
        assert!(out.find("END:VTIMEZONE") < out.find("BEGIN:VEVENT"));
    }

    #[test]
    fn nothing_added_without_a_known_tzid_or_when_the_block_is_there() {
        let utc = "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART:20260302T100000Z\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n";
        assert_eq!(with_vtimezones(utc, 2026), utc);
        let odd = utc.replace("DTSTART:", "DTSTART;TZID=My Zone:");
        assert_eq!(with_vtimezones(&odd, 2026), odd);
        let once = with_vtimezones(EV, 2026);
        assert_eq!(with_vtimezones(&once, 2026), once);
    }

    #[test]
    fn offsets_with_seconds_and_negative_ones() {
        assert_eq!(offset(-18000), "-0500");
        assert_eq!(offset(3600 + 1800), "+0130");
        assert_eq!(offset(-(3600 + 1800 + 7)), "-013007");
    }
}
