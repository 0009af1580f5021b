//! When a snooze alarm goes off for one occurrence (RFC 9074 §6): its
//! `TRIGGER` is absolute as a rule, but may be relative to the start (or,
//! `RELATED=END`, the end) of the event: then it is resolved against the
//! occurrence of the reminder it snoozes, through the core's own
//! expansion and trigger arithmetic (nominal days across DST, an all-day
//! event's day, an override's moved start).

use chrono::{DateTime, Duration, NaiveDate, NaiveDateTime, Utc};
use chrono_tz::Tz;
use kairos_core::Limits;
use kairos_core::model::{Alarm, Calendar, Event, Trigger, When};
use kairos_core::query::{Occurrence, occurrences};

/// An occurrence as reminder keys spell it (`Instance::occurrence`): the
/// date of an all-day one, else the UTC instant (floating times read in
/// `floating`).
#[must_use]
pub fn occurrence_text(w: &When, floating: Tz) -> String {
    match w {
        When::Date(d) => d.format("%Y-%m-%d").to_string(),
        When::DateTime { .. } => w.instant(floating).format("%Y-%m-%dT%H:%M:%SZ").to_string(),
    }
}

/// The key spelling of an expanded occurrence (its original start).
fn key_text(o: &Occurrence<'_>) -> String {
    let m = o.recurrence_id.unwrap_or(o.start);
    match m.date {
        Some(d) => d.format("%Y-%m-%d").to_string(),
        None => m.instant.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
    }
}

/// The instant a key's occurrence text names (an all-day date: its
/// midnight in `floating`).
fn instant_of(occurrence: &str, floating: Tz) -> Option<DateTime<Utc>> {
    if let Ok(t) = NaiveDateTime::parse_from_str(occurrence, "%Y-%m-%dT%H:%M:%SZ") {
        return Some(t.and_utc());
    }
    let d = NaiveDate::parse_from_str(occurrence, "%Y-%m-%d").ok()?;
    Some(When::Date(d).instant(floating))
}

/// When snooze alarm `snooze` of component `ev` (one of `comps`, a series
/// from the server) goes off for the occurrence keys spell `occurrence`:
/// its absolute `TRIGGER`, or a relative one resolved against that
/// occurrence. `None` when the occurrence is not one of `ev`'s.
#[must_use]
pub fn due(
    snooze: &Alarm,
    ev: &Event,
    comps: &[Event],
    occurrence: &str,
    floating: Tz,
) -> Option<DateTime<Utc>> {
    if let Trigger::Absolute(t) = snooze.trigger {
        return Some(t);
    }
    // The occurrence starts at the override's own start, or (master) at
    // its original start: a one-second window there finds it.
    let from = match ev.recurrence_id {
        Some(_) => ev.start.instant(floating),
        None => instant_of(occurrence, floating)?,
    };
    let cal = Calendar {
        name: None,
        events: comps.to_vec(),
        extra: Vec::new(),
    };
    let found = occurrences(
        &cal,
        from,
        from + Duration::seconds(1),
        floating,
        &Limits::default(),
    )
    .ok()?;
    let occ = found.into_iter().find(|o| {
        o.event.recurrence_id == ev.recurrence_id
            && o.event.uid == ev.uid
            && key_text(o) == occurrence
    })?;
    kairos_core::alarms::triggers(&occ, snooze, floating)
        .first()
        .copied()
}
