//! Escalating reminders: `X-KAIROS-ESCALATE:v=1;every=PT5M;max=6` on a
//! `VALARM` means "remind again every 5 minutes until acknowledged, at most
//! 6 more times". RFC 5545 `REPEAT` cannot stop on acknowledgement; this
//! rule can, because the engine plans each repetition as its own instance
//! and acknowledging the reminder withdraws the rest.
//!
//! The property is kept as it was written in [`Alarm::extra`], so it is
//! exported unchanged; this module only reads it. A rule that does not read
//! (unknown version, a bound exceeded, a missing or unknown part) is no
//! rule: the alarm stays a plain single alarm, and a lenient import says so
//! in a warning. An escalating alarm's `REPEAT` is ignored (the rule
//! replaces it).

use chrono::Duration;

use crate::model::Alarm;

/// The property's name.
pub const PROPERTY: &str = "X-KAIROS-ESCALATE";

/// Shortest time between repetitions: one minute.
pub const MIN_EVERY_SECS: i64 = 60;
/// Longest time between repetitions: one day.
pub const MAX_EVERY_SECS: i64 = 86_400;
/// Most repetitions after the first reminder.
pub const MAX_COUNT: u32 = 100;

/// A valid rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Escalation {
    /// Time between repetitions (exact: a `P1D` step is 24 hours).
    pub every: Duration,
    /// How many repetitions after the first reminder (1–[`MAX_COUNT`]).
    pub max: u32,
}

impl Escalation {
    /// How long after the first reminder the last repetition comes.
    #[must_use]
    pub fn span(&self) -> Duration {
        self.every * i32::try_from(self.max).unwrap_or(i32::MAX)
    }

    /// The offset of repetition `k` (1-based) from the first reminder.
    #[must_use]
    pub fn offset(&self, k: u32) -> Duration {
        self.every * i32::try_from(k).unwrap_or(i32::MAX)
    }
}

/// Reads a rule's value (`v=1;every=PT5M;max=6`, parts in any order).
///
/// # Errors
/// What is wrong with it, naming the part.
pub fn parse(value: &str) -> Result<Escalation, String> {
    let (mut version, mut every, mut max) = (None, None, None);
    for part in value.trim().split(';') {
        let Some((k, v)) = part.split_once('=') else {
            return Err(format!("{part:?} is not NAME=VALUE"));
        };
        let slot = match k.trim().to_ascii_lowercase().as_str() {
            "v" => &mut version,
            "every" => &mut every,
            "max" => &mut max,
            other => return Err(format!("unknown part {other:?} (expected v, every, max)")),
        };
        if slot.replace(v.trim()).is_some() {
            return Err(format!("{k:?} is given twice"));
        }
    }
    match version {
        Some("1") => {}
        Some(v) => return Err(format!("unknown version v={v} (this program reads v=1)")),
        None => return Err("no version (v=1)".to_owned()),
    }
    let every = every.ok_or("no interval (every=PT5M)")?;
    let step = crate::ics::values::duration(every).map_err(|m| format!("every={every}: {m}"))?;
    let secs = step.approx().num_seconds();
    if !(MIN_EVERY_SECS..=MAX_EVERY_SECS).contains(&secs) {
        return Err(format!(
            "every={every} is outside PT1M to P1D ({MIN_EVERY_SECS} to {MAX_EVERY_SECS} seconds)"
        ));
    }
    let max = max.ok_or("no count (max=6)")?;
    let n: u32 = max
        .parse()
        .map_err(|_| format!("max={max} is not a whole number"))?;
    if !(1..=MAX_COUNT).contains(&n) {
        return Err(format!("max={max} is outside 1 to {MAX_COUNT}"));
    }
    Ok(Escalation {
        every: Duration::seconds(secs),
        max: n,
    })
}

/// The value of a kept content line if it is the escalation property
/// (`X-KAIROS-ESCALATE;ANY=PARAM:value`), else `None`.
#[must_use]
pub fn value_of(line: &str) -> Option<&str> {
    crate::model::property_value(line, PROPERTY)
}

/// The alarm's rule: its first `X-KAIROS-ESCALATE`, if that reads.
#[must_use]
pub fn of(alarm: &Alarm) -> Option<Escalation> {
    alarm
        .extra
        .iter()
        .find_map(|p| p.value_if(PROPERTY))
        .and_then(|v| parse(v).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_reads_in_any_order_and_bounds_are_inclusive() {
        let e = parse("v=1;every=PT5M;max=6").expect("valid");
        assert_eq!((e.every, e.max), (Duration::minutes(5), 6));
        assert_eq!(e.span(), Duration::minutes(30));
        assert_eq!(parse("max=1;EVERY=PT1M;v=1").expect("min").max, 1);
        assert_eq!(
            parse("v=1;every=P1D;max=100").expect("max").every,
            Duration::days(1)
        );
    }

    #[test]
    fn bad_rules_say_what_is_wrong() {
        for (rule, says) in [
            ("v=2;every=PT5M;max=6", "unknown version"),
            ("every=PT5M;max=6", "no version"),
            ("v=1;every=PT59S;max=6", "outside PT1M to P1D"),
            ("v=1;every=P1DT1S;max=6", "outside PT1M to P1D"),
            ("v=1;every=-PT5M;max=6", "outside PT1M to P1D"),
            ("v=1;every=5m;max=6", "every=5m"),
            ("v=1;every=PT5M;max=0", "outside 1 to 100"),
            ("v=1;every=PT5M;max=101", "outside 1 to 100"),
            ("v=1;every=PT5M;max=x", "not a whole number"),
            ("v=1;every=PT5M", "no count"),
            ("v=1;max=3", "no interval"),
            ("v=1;every=PT5M;max=6;until=x", "unknown part"),
            ("v=1;v=1;every=PT5M;max=6", "twice"),
            ("v=1;every", "not NAME=VALUE"),
        ] {
            let e = parse(rule).expect_err(rule);
            assert!(e.contains(says), "{rule}: {e}");
        }
    }

    #[test]
    fn the_value_is_found_after_quoted_parameters() {
        assert_eq!(
            value_of("X-KAIROS-ESCALATE;X-NOTE=\"a:b\":v=1;every=PT5M;max=2"),
            Some("v=1;every=PT5M;max=2")
        );
        assert_eq!(value_of("x-kairos-escalate:v=1"), Some("v=1"));
        assert_eq!(value_of("X-KAIROS-ESCALATED:v=1"), None);
        assert_eq!(value_of("X-OTHER:v=1"), None);
    }

    fn file(rule: &str) -> String {
        format!(
            "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:e\r\nDTSTART:20260601T100000Z\r\n\
             BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT15M\r\nX-KAIROS-ESCALATE:{rule}\r\n\
             END:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
        )
    }

    fn read(rule: &str) -> (crate::model::Calendar, Vec<crate::ics::Warning>) {
        crate::ics::parse_calendar_lenient(file(rule).as_bytes(), &crate::Limits::default())
            .expect("reads")
    }

    #[test]
    fn a_bad_rule_is_a_warning_and_the_alarm_stays_a_plain_alarm() {
        for rule in ["v=2;every=PT5M;max=6", "v=1;every=PT5M;max=500"] {
            let (cal, warnings) = read(rule);
            assert_eq!(warnings.len(), 1, "{rule}: {warnings:?}");
            let w = &warnings[0];
            assert_eq!((w.line, w.component.as_str()), (8, "VALARM"));
            assert!(w.problem.starts_with("X-KAIROS-ESCALATE: "), "{w}");
            assert!(w.action.contains("single reminder"), "{w}");
            let alarm = &cal.events[0].alarms[0];
            assert_eq!(of(alarm), None, "{rule}");
            // Kept (and so exported) as written.
            assert_eq!(alarm.extra.len(), 1);
            // Strict reading accepts it, as any X- property.
            crate::ics::parse_calendar(file(rule).as_bytes(), &crate::Limits::default())
                .expect("strict reads it");
        }
        let (cal, warnings) = read("v=1;every=PT5M;max=6");
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(of(&cal.events[0].alarms[0]).map(|e| e.max), Some(6));
    }

    #[test]
    fn the_rule_round_trips_through_export() {
        let (cal, _) = read("v=1;every=PT5M;max=6");
        let text = crate::ics::write_calendar(&cal, chrono::DateTime::UNIX_EPOCH);
        assert!(
            text.contains("X-KAIROS-ESCALATE:v=1;every=PT5M;max=6\r\n"),
            "{text}"
        );
        let (back, warnings) = read_text(&text);
        assert!(warnings.is_empty());
        assert_eq!(of(&back.events[0].alarms[0]), of(&cal.events[0].alarms[0]));
    }

    fn read_text(text: &str) -> (crate::model::Calendar, Vec<crate::ics::Warning>) {
        crate::ics::parse_calendar_lenient(text.as_bytes(), &crate::Limits::default())
            .expect("reads")
    }
}
