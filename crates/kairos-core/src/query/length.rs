//! How long occurrences last: `DTEND` keeps its exact length from `DTSTART`
//! (RFC 5545 §3.8.5.3), `DURATION` its nominal one, all-day ends in dates.

use chrono::Duration;
use chrono_tz::Tz;

use super::{Moment, start_of};
use crate::model::{End, Event, When, Zone};
use crate::time::{Dur, add};

/// How long an event's occurrences last, worked out once per series (it
/// costs two zone look-ups, and a series can have a million occurrences).
#[derive(Debug, Clone, Copy)]
pub(super) enum Length {
    /// No `DTEND` or `DURATION`.
    Unknown,
    /// All-day `DTEND`: so many dates later.
    Days(i64),
    /// `DTEND`: the same exact length as `DTSTART`→`DTEND` (§3.8.5.3), shown
    /// in `DTEND`'s zone.
    Exact(Duration, Zone),
    /// `DURATION`: nominal days and exact seconds.
    Nominal(Dur),
}

pub(super) fn length_of(ev: &Event, floating: Tz) -> Length {
    let own = || start_of(ev, floating);
    match ev.end {
        None => Length::Unknown,
        Some(End::At(When::Date(e))) => Length::Days((e - own().date.unwrap_or(e)).num_days()),
        Some(End::At(w)) => Length::Exact(w.instant(floating) - own().instant, w.zone()),
        Some(End::For(d)) => Length::Nominal(d),
    }
}

/// The end of an occurrence that starts at `start` and lasts `len`.
pub(super) fn end_at(len: Length, start: Moment, floating: Tz) -> Option<Moment> {
    match (len, start.date) {
        (Length::Unknown, _) => None,
        (Length::Days(n), Some(d)) => Some(Moment::of_date(d + Duration::days(n), floating)),
        (Length::Days(n), None) => Some(Moment {
            instant: start.instant + Duration::days(n),
            zone: start.zone,
            date: None,
        }),
        (Length::Exact(len, zone), _) => Some(Moment {
            instant: start.instant + len,
            zone,
            date: None,
        }),
        (Length::Nominal(dur), Some(d)) => {
            Some(Moment::of_date(d + Duration::days(dur.days), floating))
        }
        (Length::Nominal(dur), None) => Some(Moment {
            instant: add(start.instant, dur, start.zone, floating),
            zone: start.zone,
            date: None,
        }),
    }
}

pub(super) fn end_for(ev: &Event, start: Moment, floating: Tz) -> Option<Moment> {
    end_at(length_of(ev, floating), start, floating)
}
