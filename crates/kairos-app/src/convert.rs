//! Between the IPC's strings (wall times, dates, zone names, alarm specs)
//! and the core's model. Every parse error names the field it came from.

use chrono::{DateTime, Duration, NaiveDate, NaiveDateTime, Utc};
use chrono_tz::Tz;
use kairos_core::escalation::{MAX_COUNT, PROPERTY};
use kairos_core::model::{Alarm, Event, RawProperty, Related as CoreRelated, Trigger, When, Zone};
use kairos_core::time::{Dur, resolve_local};

use crate::api::{Again, AlarmSpec, ApiError, Related};
use crate::error::ApiResult;

/// Most reminders one event may have.
pub const MAX_ALARMS: usize = 20;

/// An IANA zone name.
pub fn zone(name: &str, field: &str) -> ApiResult<Tz> {
    name.parse::<Tz>().map_err(|_| {
        ApiError::invalid(format!(
            "{field}: {name:?} is not an IANA time zone (e.g. Europe/Berlin)"
        ))
    })
}

/// `YYYY-MM-DDTHH:MM[:SS]`.
pub fn wall(s: &str, field: &str) -> ApiResult<NaiveDateTime> {
    NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S")
        .or_else(|_| NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M"))
        .map_err(|_| {
            ApiError::invalid(format!(
                "{field}: {s:?} is not a wall time YYYY-MM-DDTHH:MM"
            ))
        })
}

/// `YYYY-MM-DD`, or the date part of a wall time.
pub fn date(s: &str, field: &str) -> ApiResult<NaiveDate> {
    NaiveDate::parse_from_str(s.get(..10).unwrap_or(s), "%Y-%m-%d")
        .map_err(|_| ApiError::invalid(format!("{field}: {s:?} is not a date YYYY-MM-DD")))
}

/// `YYYY-MM-DDTHH:MM:SS`.
#[must_use]
pub fn fmt_wall(t: NaiveDateTime) -> String {
    t.format("%Y-%m-%dT%H:%M:%S").to_string()
}

/// `YYYY-MM-DDTHH:MM`, as the editor's inputs take it.
#[must_use]
pub fn fmt_minute(t: NaiveDateTime) -> String {
    t.format("%Y-%m-%dT%H:%M").to_string()
}

/// `YYYY-MM-DD`.
#[must_use]
pub fn fmt_date(d: NaiveDate) -> String {
    d.format("%Y-%m-%d").to_string()
}

/// The wall time of `t` in `tz`.
#[must_use]
pub fn wall_in(t: DateTime<Utc>, tz: Tz) -> NaiveDateTime {
    t.with_timezone(&tz).naive_local()
}

/// The zone an event's times are written in (floating and UTC included).
#[must_use]
pub fn event_zone(ev: &Event, display: Tz) -> Tz {
    match ev.start.zone() {
        Zone::Tz(tz) => tz,
        // Stored events never have one (they are written in UTC).
        Zone::Utc | Zone::Custom(_) => Tz::UTC,
        Zone::Floating => display,
    }
}

/// The instant a wall time in `tz` means (RFC 5545 gap/overlap rules).
#[must_use]
pub fn instant(local: NaiveDateTime, tz: Tz) -> DateTime<Utc> {
    resolve_local(local, Zone::Tz(tz), tz)
}

/// An editor reminder as a `VALARM` of an event titled `title` in `tz`.
pub fn alarm_of(spec: &AlarmSpec, title: &str, tz: Tz) -> ApiResult<Alarm> {
    let trigger = match spec {
        AlarmSpec::Before {
            minutes, related, ..
        } => {
            if minutes.unsigned_abs() > 366 * 24 * 60 {
                return Err(ApiError::invalid(format!(
                    "reminder: {minutes} minutes is more than a year"
                )));
            }
            Trigger::Relative {
                offset: Dur::seconds(-i64::from(*minutes) * 60),
                related: match related {
                    Related::Start => CoreRelated::Start,
                    Related::End => CoreRelated::End,
                },
            }
        }
        AlarmSpec::At { at, .. } => Trigger::Absolute(instant(wall(at, "reminder time")?, tz)),
    };
    let again = match spec {
        AlarmSpec::Before { again, .. } | AlarmSpec::At { again, .. } => *again,
    };
    let mut extra = Vec::new();
    if let Some(a) = again {
        if !(1..=1440).contains(&a.every_minutes) || !(1..=MAX_COUNT).contains(&a.max) {
            return Err(ApiError::invalid(format!(
                "reminder: again every {} minutes, {} times: between 1 and 1440 minutes, 1 and {MAX_COUNT} times",
                a.every_minutes, a.max
            )));
        }
        extra.push(RawProperty {
            line: format!("{PROPERTY}:v=1;every=PT{}M;max={}", a.every_minutes, a.max),
        });
    }
    Ok(Alarm {
        uid: None,
        action: "DISPLAY".into(),
        trigger,
        repeat: 0,
        interval: None,
        description: Some(if title.is_empty() {
            "Reminder".into()
        } else {
            title.to_owned()
        }),
        summary: None,
        acknowledged: None,
        snooze_of: None,
        extra,
    })
}

/// A `VALARM` as the editor shows it.
#[must_use]
pub fn spec_of(a: &Alarm, tz: Tz) -> AlarmSpec {
    let again = kairos_core::escalation::of(a).map(|e| Again {
        every_minutes: u32::try_from(e.every.num_minutes()).unwrap_or(1),
        max: e.max,
    });
    match a.trigger {
        Trigger::Relative { offset, related } => {
            let secs = offset.days * 86_400 + offset.secs;
            AlarmSpec::Before {
                minutes: i32::try_from(-secs / 60).unwrap_or(0),
                related: match related {
                    CoreRelated::Start => Related::Start,
                    CoreRelated::End => Related::End,
                },
                again,
            }
        }
        Trigger::Absolute(t) => AlarmSpec::At {
            at: fmt_minute(wall_in(t, tz)),
            again,
        },
    }
}

/// Shifts a `When` by a wall-clock amount (dates by whole days).
#[must_use]
pub fn shift(w: When, by: Duration) -> When {
    match w {
        When::Date(d) => When::Date(d + Duration::days(by.num_days())),
        When::DateTime { local, zone } => When::DateTime {
            local: local + by,
            zone,
        },
    }
}

/// The `RECURRENCE-ID` an opaque occurrence id names, written like the
/// master's `DTSTART` (same zone, or a date).
pub fn rid_when(rid: &str, master: &Event, floating: Tz) -> ApiResult<When> {
    match master.start {
        When::Date(_) => Ok(When::Date(date(rid, "recurrence_id")?)),
        When::DateTime { zone, .. } => {
            let t = DateTime::parse_from_rfc3339(rid)
                .map_err(|_| {
                    ApiError::invalid(format!("recurrence_id: {rid:?} is not an instant"))
                })?
                .with_timezone(&Utc);
            let local = match zone {
                Zone::Utc => t.naive_utc(),
                Zone::Floating => wall_in(t, floating),
                Zone::Tz(tz) => wall_in(t, tz),
                Zone::Custom(c) => c.local(t),
            };
            Ok(When::DateTime { local, zone })
        }
    }
}
