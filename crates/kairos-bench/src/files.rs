//! Writes the generated [`Spec`]s as one iCalendar text (for Kairos) and as
//! JSON (for `dateutil_bench.py`).

use std::fmt::Write as _;

use chrono::NaiveDateTime;
use serde::Serialize;

use crate::events::Spec;

fn stamp(t: NaiveDateTime) -> String {
    t.format("%Y%m%dT%H%M%S").to_string()
}

/// Appends one content line, folded at 75 octets (RFC 5545 §3.1; the text is ASCII).
fn line(out: &mut String, text: &str) {
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut width = 75;
    while bytes.len() - start > width {
        out.push_str(&text[start..start + width]);
        out.push_str("\r\n ");
        start += width;
        width = 74; // the leading space counts
    }
    out.push_str(&text[start..]);
    out.push_str("\r\n");
}

/// The parameters and value of a date-time property in the event's zone.
fn when(spec: &Spec, t: NaiveDateTime) -> String {
    if spec.all_day {
        return format!(";VALUE=DATE:{}", t.format("%Y%m%d"));
    }
    match spec.tzid {
        Some("UTC") => format!(":{}Z", stamp(t)),
        Some(tz) => format!(";TZID={tz}:{}", stamp(t)),
        None => format!(":{}", stamp(t)),
    }
}

fn rrule(spec: &Spec) -> String {
    let mut rule = spec.rrule.clone();
    if let Some(u) = spec.until_utc {
        let _ = write!(rule, ";UNTIL={}Z", stamp(u));
    }
    if let Some(u) = spec.until_local {
        if spec.all_day {
            let _ = write!(rule, ";UNTIL={}", u.format("%Y%m%d"));
        } else {
            let _ = write!(rule, ";UNTIL={}", stamp(u));
        }
    }
    rule
}

/// One `VCALENDAR` with every event, CRLF line ends.
pub fn ics(specs: &[Spec]) -> String {
    let mut out = String::with_capacity(specs.len() * 400);
    line(&mut out, "BEGIN:VCALENDAR");
    line(&mut out, "VERSION:2.0");
    line(&mut out, "PRODID:-//Kairos//kairos-bench//EN");
    line(&mut out, "X-WR-CALNAME:bench");
    for (i, s) in specs.iter().enumerate() {
        line(&mut out, "BEGIN:VEVENT");
        line(&mut out, &format!("UID:{}", s.uid));
        line(&mut out, "DTSTAMP:20260101T000000Z");
        line(&mut out, &format!("SUMMARY:Bench event {i} ({})", s.rrule));
        line(&mut out, &format!("DTSTART{}", when(s, s.dtstart)));
        line(&mut out, &format!("DURATION:{}", s.duration));
        line(&mut out, &format!("RRULE:{}", rrule(s)));
        if let Some((first, rest)) = s.exdates.split_first() {
            let mut ex = format!("EXDATE{}", when(s, *first));
            for t in rest {
                // Later values share the first one's parameters.
                let w = when(s, *t);
                let value = w.rsplit_once(':').map_or(w.as_str(), |(_, v)| v);
                let _ = write!(ex, ",{value}");
            }
            line(&mut out, &ex);
        }
        for (k, trigger) in s.triggers.iter().enumerate() {
            line(&mut out, "BEGIN:VALARM");
            line(&mut out, "ACTION:DISPLAY");
            line(&mut out, &format!("DESCRIPTION:Reminder {k}"));
            line(&mut out, trigger);
            line(&mut out, "END:VALARM");
        }
        line(&mut out, "END:VEVENT");
    }
    line(&mut out, "END:VCALENDAR");
    out
}

/// What `dateutil_bench.py` reads.
#[derive(Serialize)]
struct Input<'a> {
    /// Window start, UTC, ISO 8601 with `Z`.
    from: String,
    /// Window end (exclusive).
    to: String,
    /// The zone floating times and all-day dates are read in.
    floating: &'a str,
    events: &'a [Spec],
}

/// The JSON document for the Python side.
///
/// # Errors
/// Never in practice (plain data); serde's error is passed on.
pub fn json(
    specs: &[Spec],
    from: chrono::DateTime<chrono::Utc>,
    to: chrono::DateTime<chrono::Utc>,
) -> serde_json::Result<String> {
    let fmt = |t: chrono::DateTime<chrono::Utc>| t.format("%Y-%m-%dT%H:%M:%SZ").to_string();
    serde_json::to_string(&Input {
        from: fmt(from),
        to: fmt(to),
        floating: "UTC",
        events: specs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_fold_at_75_octets() {
        let mut out = String::new();
        let text = "X".repeat(200);
        line(&mut out, &text);
        assert!(out.split("\r\n").all(|l| l.len() <= 75));
        assert_eq!(out.replace("\r\n ", "").trim_end(), text);
    }

    #[test]
    fn the_same_seed_gives_the_same_calendar_and_kairos_reads_it() {
        let window = (
            chrono::NaiveDate::from_ymd_opt(2026, 1, 1).expect("date"),
            chrono::NaiveDate::from_ymd_opt(2028, 1, 1).expect("date"),
        );
        let a = ics(&crate::events::generate(300, 7, window));
        assert_eq!(a, ics(&crate::events::generate(300, 7, window)));
        assert_ne!(a, ics(&crate::events::generate(300, 8, window)));
        let cal = kairos_core::ics::parse_calendar(a.as_bytes(), &kairos_core::Limits::default())
            .expect("the generated calendar parses");
        assert_eq!(cal.events.len(), 300);
        assert!(
            cal.events
                .iter()
                .all(|e| !e.rrules.is_empty() && !e.alarms.is_empty())
        );
    }
}
