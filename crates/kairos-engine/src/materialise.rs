//! From calendar data to reminder instances: which instances exist in a
//! window, with which keys. Pure: the engine stores what this computes.
//!
//! An instance's key is the core's [`InstanceKey`](kairos_core::alarms::InstanceKey)
//! plus the event's *schedule fingerprint*: a hash of exactly the fields that
//! decide when alarms go off (start, end, rules, dates, alarms). Editing the
//! summary keeps every key, so nothing already delivered is sent again;
//! moving the event or changing an alarm gives new keys, so the new reminder
//! fires and the old pending one is dropped.

use std::fmt::Write as _;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use kairos_core::model::{Alarm, Calendar, End, Event, Trigger, When, Zone};
use kairos_core::workdays::WorkTime;
use kairos_core::{Limits, alarms};
use serde::{Deserialize, Serialize};

/// What is stored with an instance so it can be delivered without re-reading
/// the calendar.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Payload {
    /// Event `UID`.
    pub uid: String,
    /// Occurrence start as people read it (RFC 3339 in the event's zone, or a date).
    pub occurrence_start: String,
    /// Event summary.
    pub summary: Option<String>,
    /// Event location.
    pub location: Option<String>,
    /// Calendar name.
    pub calendar: String,
}

/// One instance to schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    /// Full key: core key + `@` + schedule fingerprint.
    pub key: String,
    /// Event `UID`.
    pub uid: String,
    /// Original occurrence start (UTC `…Z` or a date), as in the core key.
    pub occurrence: String,
    /// Alarm `UID` or `#N`.
    pub alarm: String,
    /// Repetition index.
    pub repetition: u32,
    /// The event's schedule fingerprint.
    pub fingerprint: u32,
    /// When it goes off.
    pub trigger: DateTime<Utc>,
    /// What to tell.
    pub payload: Payload,
}

impl Planned {
    /// The instance to store, in calendar `cal`.
    #[must_use]
    pub fn instance(&self, cal: kairos_store::CalendarId) -> kairos_store::NewInstance {
        kairos_store::NewInstance {
            key: self.key.clone(),
            calendar: cal,
            event_uid: self.uid.clone(),
            occurrence: self.occurrence.clone(),
            alarm: self.alarm.clone(),
            repetition: self.repetition,
            rule_version: self.fingerprint,
            trigger_at: self.trigger,
            snooze_of: None,
            // Strings only: serialising cannot fail.
            payload: serde_json::to_string(&self.payload).unwrap_or_else(|_| "{}".into()),
        }
    }
}

fn when(out: &mut String, w: &When) {
    match w {
        When::Date(d) => {
            let _ = write!(out, "D{}", d.format("%Y%m%d"));
        }
        When::DateTime { local, zone } => {
            // A custom zone's times are stored as UTC (see kairos_core's
            // export): fingerprint them as they will read back.
            let (local, z) = match zone {
                Zone::Utc => (*local, "Z".to_owned()),
                Zone::Floating => (*local, "F".to_owned()),
                Zone::Tz(tz) => (*local, tz.name().to_owned()),
                Zone::Custom(c) => (c.resolve(*local).naive_utc(), "Z".to_owned()),
            };
            let _ = write!(out, "T{}{z}", local.format("%Y%m%dT%H%M%S"));
        }
    }
}

/// `uid`: the alarm's `UID` as it counts here (see [`fingerprint`]).
fn alarm(out: &mut String, a: &Alarm, uid: Option<&str>) {
    let _ = write!(out, "|A{uid:?}:{}:{}", a.action, a.repeat);
    match a.trigger {
        Trigger::Absolute(t) => {
            let _ = write!(out, "@{}", t.format("%Y%m%dT%H%M%SZ"));
        }
        Trigger::Relative { offset, related } => {
            let _ = write!(
                out,
                "{}{:?}",
                kairos_core::ics::format_duration(offset),
                related
            );
        }
    }
    if let Some(i) = a.interval {
        let _ = write!(out, "/{}", kairos_core::ics::format_duration(i));
    }
    // Alarms with a working-day rule only, so every other alarm keeps the
    // fingerprint it always had; a changed rule (or version) re-plans.
    if let Some(rule) = kairos_core::workdays::rule_text(a) {
        let _ = write!(out, "|W{}", rule.trim());
    }
}

/// FNV-1a over the schedule-relevant fields, written in a fixed text form so
/// the value does not change with library versions (a changed fingerprint
/// would re-send delivered reminders).
#[must_use]
pub fn fingerprint(ev: &Event) -> u32 {
    let mut s = String::new();
    when(&mut s, &ev.start);
    match &ev.end {
        Some(End::At(w)) => when(&mut s, w),
        Some(End::For(d)) => s.push_str(&kairos_core::ics::format_duration(*d)),
        None => {}
    }
    for r in ev.rrules.iter().chain(&ev.exrules) {
        let _ = write!(s, "|R{}", r.source);
    }
    for w in ev.rdates.iter().chain(&ev.exdates) {
        s.push('|');
        when(&mut s, w);
    }
    if let Some(rid) = &ev.recurrence_id {
        s.push_str("|I");
        when(&mut s, rid);
    }
    let _ = write!(s, "|{}|{:?}", ev.this_and_future, ev.status);
    // Tasks only, so every event keeps the fingerprint it always had.
    if let Some(t) = &ev.todo {
        let _ = write!(s, "|todo:{}", t.has_start);
    }
    // What RFC 9074 writes when a reminder is snoozed (a snooze alarm; a
    // `UID` Kairos gives the snoozed alarm, which keeps its `#N` key) moves
    // no alarm: it must not change a key, or the reminder would be planned
    // again beside its snooze (and one dismissed ahead would ring).
    for (n, a) in ev.alarms.iter().enumerate() {
        if a.is_snooze() {
            continue;
        }
        let uid = a
            .uid
            .as_deref()
            .filter(|u| *u != kairos_core::model::kairos_alarm_uid(&ev.uid, n));
        alarm(&mut s, a, uid);
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    // Fold to 32 bits (the store keeps a u32).
    #[allow(clippy::cast_possible_truncation)]
    let folded = (h ^ (h >> 32)) as u32;
    folded
}

/// Which calendar a plan is for: its uid starts every key, its name is
/// what the reminder shows.
#[derive(Debug, Clone, Copy)]
pub struct CalendarLabel<'a> {
    /// The calendar's uid (the same on every device).
    pub uid: &'a str,
    /// Its display name.
    pub name: &'a str,
}

/// Every instance of `cal`'s alarms with a trigger in `[from, to)`, with
/// the default working time (Monday to Friday, no holidays).
///
/// # Errors
/// The core's expansion limits.
pub fn plan(
    calendar: CalendarLabel<'_>,
    cal: &Calendar,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    floating: Tz,
    limits: &Limits,
) -> Result<Vec<Planned>, kairos_core::Error> {
    plan_with(
        calendar,
        cal,
        from,
        to,
        floating,
        limits,
        &WorkTime::default(),
    )
}

/// [`plan`] with the calendar's working time (for alarms with a
/// working-day rule: the trigger it moved, under the same key).
///
/// # Errors
/// The core's expansion limits.
pub fn plan_with(
    calendar: CalendarLabel<'_>,
    cal: &Calendar,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    floating: Tz,
    limits: &Limits,
    work: &WorkTime,
) -> Result<Vec<Planned>, kairos_core::Error> {
    // Escalating alarms: a base trigger before `from` may have repetitions
    // inside the window (zero reach, and so the same query, without them).
    let back = crate::escalate::reach(cal);
    let start = from.checked_sub_signed(back).unwrap_or(from);
    let hits = alarms::alarms_with(cal, start, to, floating, limits, work)?;
    let planned = hits
        .iter()
        .map(|h| {
            let key = h.key(calendar.uid);
            let fp = fingerprint(h.occurrence.event);
            let ev = h.occurrence.event;
            Planned {
                key: format!("{key}@{fp:08x}"),
                uid: key.uid.clone(),
                occurrence: key.occurrence.clone(),
                alarm: key.alarm.clone(),
                repetition: key.repetition,
                fingerprint: fp,
                trigger: h.trigger,
                payload: Payload {
                    uid: ev.uid.clone(),
                    occurrence_start: h.occurrence.start.display(floating),
                    summary: ev.summary.clone(),
                    location: ev.location.clone(),
                    calendar: calendar.name.to_owned(),
                },
            }
        })
        .collect();
    Ok(crate::escalate::expand(&hits, planned, from, to))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(body: &str) -> Event {
        let text = format!(
            "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:e\r\n{}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
            body.replace('\n', "\r\n")
        );
        let cal =
            kairos_core::ics::parse_calendar(text.as_bytes(), &Limits::default()).expect("valid");
        cal.events.into_iter().next().expect("one event")
    }

    const BASE: &str = "DTSTART;TZID=Europe/Berlin:20260310T090000\nRRULE:FREQ=DAILY\nSUMMARY:A\n\
                        BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT15M\nDESCRIPTION:x\nEND:VALARM";

    #[test]
    fn editing_text_keeps_the_fingerprint_and_editing_time_changes_it() {
        let base = fingerprint(&event(BASE));
        assert_eq!(
            base,
            fingerprint(&event(
                &BASE.replace("SUMMARY:A", "SUMMARY:B\nLOCATION:Room 4")
            ))
        );
        assert_eq!(
            base,
            fingerprint(&event(&BASE.replace("DESCRIPTION:x", "DESCRIPTION:y")))
        );
        for changed in [
            BASE.replace("T090000", "T100000"),
            BASE.replace("Europe/Berlin", "Europe/London"),
            BASE.replace("FREQ=DAILY", "FREQ=WEEKLY"),
            BASE.replace("-PT15M", "-PT10M"),
            format!("{BASE}\nEXDATE;TZID=Europe/Berlin:20260311T090000"),
        ] {
            assert_ne!(base, fingerprint(&event(&changed)), "{changed}");
        }
    }

    #[test]
    fn an_rfc9074_snooze_written_into_the_event_keeps_the_fingerprint() {
        let base = fingerprint(&event(BASE));
        // What kairos-caldav writes for a snooze: the alarm named (the UID
        // Kairos gives alarm 0 of series `e`) and acknowledged, a snooze
        // alarm added.
        let snoozed = BASE.replace(
            "DESCRIPTION:x\nEND:VALARM",
            "DESCRIPTION:x\nUID:kairos-alarm-0.e\nACKNOWLEDGED:20260310T074600Z\nEND:VALARM\n\
             BEGIN:VALARM\nACTION:DISPLAY\nUID:kairos-snooze.kairos-alarm-0.e\n\
             RELATED-TO;RELTYPE=SNOOZE:kairos-alarm-0.e\n\
             TRIGGER;VALUE=DATE-TIME:20260310T075600Z\nDESCRIPTION:x\nEND:VALARM",
        );
        assert_eq!(event(&snoozed).alarms.len(), 2, "{snoozed}");
        assert_eq!(base, fingerprint(&event(&snoozed)));
        // Another client's UID names the alarm in its key: that changes.
        let named = BASE.replace("DESCRIPTION:x", "DESCRIPTION:x\nUID:abc");
        assert_ne!(base, fingerprint(&event(&named)));
        // So does a Kairos-style UID of another alarm index.
        let other = BASE.replace("DESCRIPTION:x", "DESCRIPTION:x\nUID:kairos-alarm-1.e");
        assert_ne!(base, fingerprint(&event(&other)));
    }

    #[test]
    fn the_fingerprint_is_a_fixed_value_for_a_fixed_event() {
        // Pinned: if this changes, every stored key changes and delivered
        // reminders would be sent again after an upgrade.
        assert_eq!(fingerprint(&event(BASE)), fingerprint(&event(BASE)));
        assert_eq!(format!("{:08x}", fingerprint(&event(BASE))), PINNED);
    }

    const PINNED: &str = "745c1657";

    #[test]
    fn a_working_day_rule_and_its_version_change_the_fingerprint() {
        let with = |rule: &str| {
            fingerprint(&event(
                &BASE.replace("DESCRIPTION:x", &format!("DESCRIPTION:x\n{rule}")),
            ))
        };
        let base = fingerprint(&event(BASE));
        let v1 = with("X-KAIROS-WORKDAYS:v=1;shift=previous");
        let v2 = with("X-KAIROS-WORKDAYS:v=2;shift=previous");
        let next = with("X-KAIROS-WORKDAYS:v=1;shift=next");
        assert!(base != v1 && v1 != v2 && v1 != next && base != v2);
        // Other unknown alarm properties still do not count.
        assert_eq!(base, with("X-OTHER:1"));
    }
}
