//! The bodies of the fuzz targets in `fuzz/`, shared with the corpus replay in
//! `tests/it/corpus.rs` so that `make test` checks every committed input exactly
//! as the fuzzer did. Not part of the API: hidden from the docs, may change.
//!
//! Each check returns `Err` with a message when an invariant fails; a panic
//! inside the core is left to propagate (the fuzzer and the test both catch it).

use chrono::{DateTime, Duration, NaiveDate, Utc};
use chrono_tz::Tz;

use crate::error::Limits;
use crate::model::Calendar;
use crate::{alarms, ics, query};

/// The `DTSTAMP` written on export; any fixed instant will do.
fn stamp() -> DateTime<Utc> {
    DateTime::<Utc>::UNIX_EPOCH
}

/// `parse`: arbitrary bytes must parse or be rejected, never panic; what
/// parses must survive export and re-import with the same number of events.
///
/// # Errors
/// A message naming the broken round-trip invariant.
///
/// Lenient reading runs on the same bytes: it must accept whatever strict
/// reading accepts, with the same events, and what it keeps must round-trip too.
pub fn check_parse(data: &[u8]) -> Result<(), String> {
    let limits = Limits::default();
    let strict = ics::parse_calendar(data, &limits);
    let lenient = ics::parse_calendar_lenient(data, &limits);
    match (&strict, &lenient) {
        (Ok(s), Ok((l, _))) if s.events.len() != l.events.len() => {
            return Err(format!(
                "strict read {} events, lenient {}",
                s.events.len(),
                l.events.len()
            ));
        }
        (Ok(_), Err(e)) => return Err(format!("strict accepts, lenient refuses: {e}")),
        _ => {}
    }
    if let Ok((cal, _)) = &lenient {
        round_trip(cal, &limits)?;
    }
    match strict {
        Ok(cal) => round_trip(&cal, &limits),
        Err(_) => Ok(()),
    }
}

fn round_trip(cal: &Calendar, limits: &Limits) -> Result<(), String> {
    let text = ics::write_calendar(cal, stamp());
    let again = ics::parse_calendar(text.as_bytes(), limits)
        .map_err(|e| format!("our own export does not parse: {e}\n{text}"))?;
    if again.events.len() != cal.events.len() {
        return Err(format!(
            "{} events exported, {} read back\n{text}",
            cal.events.len(),
            again.events.len()
        ));
    }
    Ok(())
}

/// The query limits `expand` runs with: the defaults with a tenth of the
/// work budget. A query costs up to about `max_steps_per_event` steps per
/// series by design (≈ 1 s at the default in a release build), so at the
/// defaults a few heavy events already pass the fuzzer's timeout; scaled down,
/// a timeout means work that the limits do not bound at all.
#[must_use]
pub fn query_limits() -> Limits {
    let default = Limits::default();
    Limits {
        max_steps_per_event: default.max_steps_per_event / 10,
        max_results: default.max_results / 10,
        ..default
    }
}

/// Bytes at the start of an `expand` input that choose the query; the rest is
/// the calendar text.
pub const EXPAND_HEADER: usize = 8;

/// Floating zones to read floating times in: UTC, ordinary DST, a zone that
/// skipped a whole day (Apia 2011), half-hour DST (Lord Howe), DST at midnight
/// (São Paulo until 2019), a fractional offset (Chatham), negative DST (Dublin).
const ZONES: [Tz; 8] = [
    Tz::UTC,
    Tz::Europe__Berlin,
    Tz::America__New_York,
    Tz::Pacific__Apia,
    Tz::Australia__Lord_Howe,
    Tz::America__Sao_Paulo,
    Tz::Pacific__Chatham,
    Tz::Europe__Dublin,
];

/// Longest window queried: 20 years, in hours.
const MAX_SPAN_HOURS: u32 = 20 * 366 * 24;
/// Window starts range over 300 years from 1900, in minutes.
const START_RANGE_MINUTES: u32 = 300 * 366 * 24 * 60;

/// The query an `expand` input asks: window `[from, to)` and floating zone.
///
/// Header layout (big-endian): bytes 0..4 the start in minutes after
/// 1900-01-01T00:00Z (modulo 300 years); bytes 4..7 the length in hours
/// (1 ..= 20 years); byte 7 an index into the floating zones.
#[must_use]
pub fn expand_query(header: [u8; EXPAND_HEADER]) -> (DateTime<Utc>, DateTime<Utc>, Tz) {
    let [a, b, c, d, e, f, g, z] = header;
    let start_min = u32::from_be_bytes([a, b, c, d]) % START_RANGE_MINUTES;
    let span_h = 1 + u32::from_be_bytes([0, e, f, g]) % MAX_SPAN_HOURS;
    let epoch = NaiveDate::from_ymd_opt(1900, 1, 1)
        .unwrap_or(NaiveDate::MIN)
        .and_time(chrono::NaiveTime::MIN)
        .and_utc();
    let from = epoch + Duration::minutes(i64::from(start_min));
    let to = from + Duration::hours(i64::from(span_h));
    (from, to, ZONES[usize::from(z) % ZONES.len()])
}

/// `expand`: the first [`EXPAND_HEADER`] bytes choose a window (see
/// [`expand_query`]), the rest is a calendar. What parses must expand and give
/// its alarms within [`query_limits`] (or report hitting them), sorted and inside
/// the window, and [`alarms::next_alarm`] must agree with the window's first alarm.
///
/// # Errors
/// A message naming the broken invariant.
pub fn check_expand(data: &[u8]) -> Result<(), String> {
    let Some((header, text)) = data.split_first_chunk::<EXPAND_HEADER>() else {
        return Ok(());
    };
    let (from, to, tz) = expand_query(*header);
    let Ok(cal) = ics::parse_calendar(text, &Limits::default()) else {
        return Ok(());
    };
    let limits = query_limits();
    if let Ok(occ) = query::occurrences(&cal, from, to, tz, &limits) {
        if let Some(o) = occ
            .iter()
            .find(|o| o.start.instant < from || o.start.instant >= to)
        {
            return Err(format!(
                "occurrence of {:?} at {} is outside [{from}, {to})",
                o.event.uid, o.start.instant
            ));
        }
        if occ
            .windows(2)
            .any(|w| w[0].start.instant > w[1].start.instant)
        {
            return Err("occurrences are not sorted by start".into());
        }
    }
    let first = match alarms::alarms(&cal, from, to, tz, &limits) {
        Ok(hits) => {
            if let Some(h) = hits.iter().find(|h| h.trigger < from || h.trigger >= to) {
                return Err(format!(
                    "alarm of {:?} at {} is outside [{from}, {to})",
                    h.occurrence.event.uid, h.trigger
                ));
            }
            if hits.windows(2).any(|w| w[0].trigger > w[1].trigger) {
                return Err("alarms are not sorted by trigger".into());
            }
            Some(hits.first().map(|h| h.trigger))
        }
        Err(_) => None,
    };
    if let Ok(next) = alarms::next_alarm(&cal, from, tz, &limits) {
        let next = next.map(|h| h.trigger);
        if next.is_some_and(|t| t < from) {
            return Err(format!("next_alarm after {from} gave {next:?}"));
        }
        // Within the window both answers must name the same first trigger.
        if let Some(first) = first {
            let in_window = next.filter(|t| *t < to);
            if in_window != first {
                return Err(format!(
                    "next_alarm gives {next:?}, but the first alarm in [{from}, {to}) is {first:?}"
                ));
            }
        }
    }
    Ok(())
}
