//! Stored form → the core's model, strictly: every value through the
//! core's own constructors, every problem named by its field.

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use kairos_core::model::{
    Alarm, CustomTz, End, Event, RawProperty, Related, Todo, Trigger, When, Zone,
};
use kairos_core::recur::{Rule, Until};
use kairos_core::time::Dur;
use serde::Deserialize;

use super::{
    AlarmDto, DurDto, EndDto, PREFIX, RuleDto, StoredV1, TriggerDto, UntilDto, VERSION, WhenDto,
    ZoneDto,
};

fn parse_naive(s: &str, what: &str) -> Result<NaiveDateTime, String> {
    s.parse::<NaiveDateTime>()
        .map_err(|e| format!("{what}: {s:?} is not a local date-time ({e})"))
}

fn parse_instant(s: &str, what: &str) -> Result<DateTime<Utc>, String> {
    let Some(t) = s.strip_suffix('Z') else {
        return Err(format!("{what}: {s:?} is not a UTC time (no Z)"));
    };
    parse_naive(t, what).map(|t| t.and_utc())
}

fn undur((days, secs): DurDto, what: &str) -> Result<Dur, String> {
    if (days < 0 && secs > 0) || (days > 0 && secs < 0) {
        return Err(format!("{what}: days and seconds of different signs"));
    }
    Ok(Dur { days, secs })
}

/// Reads one component back, with the zones it names.
struct Reader {
    zones: Vec<CustomTz>,
}

impl Reader {
    fn zone(&self, z: ZoneDto, what: &str) -> Result<Zone, String> {
        Ok(match z {
            ZoneDto::Utc => Zone::Utc,
            ZoneDto::Floating => Zone::Floating,
            ZoneDto::Tz(name) => Zone::Tz(
                name.parse()
                    .map_err(|_| format!("{what}: unknown IANA zone {name:?}"))?,
            ),
            ZoneDto::Custom(i) => Zone::Custom(
                *self
                    .zones
                    .get(i)
                    .ok_or_else(|| format!("{what}: custom zone #{i} is not among `zones`"))?,
            ),
        })
    }

    fn when(&self, w: WhenDto, what: &str) -> Result<When, String> {
        match w {
            WhenDto::Date(d) => d
                .parse::<NaiveDate>()
                .map(When::Date)
                .map_err(|e| format!("{what}: {d:?} is not a date ({e})")),
            WhenDto::Time(t, z) => Ok(When::DateTime {
                local: parse_naive(&t, what)?,
                zone: self.zone(z, what)?,
            }),
        }
    }

    fn end(&self, e: EndDto, what: &str) -> Result<End, String> {
        match e {
            EndDto::At(w) => self.when(w, what).map(End::At),
            EndDto::For(d) => undur(d, what).map(End::For),
        }
    }
}

/// A rule rebuilt from its text for an event starting at `start`; it must
/// come back exactly as stored (nothing dropped, the same `UNTIL`).
fn unrule(r: RuleDto, start: When, what: &str) -> Result<Rule, String> {
    let until = match r.until {
        None => None,
        Some(UntilDto::Instant(t)) => Some(Until::Instant(parse_instant(&t, what)?)),
        Some(UntilDto::Local(t)) => Some(Until::Local(parse_naive(&t, what)?)),
    };
    let (rule, dropped) = Rule::parse(&r.rule, start.local(), |_| {
        until.ok_or_else(|| "UNTIL in the rule, none stored".to_owned())
    })
    .map_err(|m| format!("{what} {:?}: {m}", r.rule))?;
    if let Some(d) = dropped.first() {
        return Err(format!("{what} {:?}: {}", r.rule, d.problem));
    }
    if rule.until != until {
        return Err(format!("{what} {:?}: stored UNTIL does not match", r.rule));
    }
    Ok(rule)
}

fn unalarm(a: AlarmDto, n: usize) -> Result<Alarm, String> {
    let what = format!("alarm #{n}");
    Ok(Alarm {
        uid: a.uid,
        action: a.action,
        trigger: match a.trigger {
            TriggerDto::Start(d) => Trigger::Relative {
                offset: undur(d, &what)?,
                related: Related::Start,
            },
            TriggerDto::End(d) => Trigger::Relative {
                offset: undur(d, &what)?,
                related: Related::End,
            },
            TriggerDto::At(t) => Trigger::Absolute(parse_instant(&t, &what)?),
        },
        repeat: a.repeat,
        interval: a.interval.map(|d| undur(d, &what)).transpose()?,
        description: a.description,
        summary: a.summary,
        acknowledged: a
            .acknowledged
            .map(|t| parse_instant(&t, &what))
            .transpose()?,
        snooze_of: a.snooze_of,
        extra: a
            .extra
            .into_iter()
            .map(|line| RawProperty { line })
            .collect(),
    })
}

/// The stored form's version, for a message about a form this build
/// does not read.
#[derive(Deserialize)]
struct Tag {
    v: Option<u32>,
}

/// Reads one stored component back.
///
/// # Errors
/// A form of another version, or anything that does not read back exactly
/// (named by its field).
pub(crate) fn from_stored(text: &str) -> Result<Event, String> {
    if !text.starts_with(PREFIX) {
        return Err(match serde_json::from_str::<Tag>(text) {
            Ok(Tag { v: Some(v) }) => format!(
                "stored form version {v}, this Kairos reads version {VERSION} (written by a \
                 newer Kairos?)"
            ),
            Ok(Tag { v: None }) => "stored form without a version".to_owned(),
            Err(e) => format!("not a stored form: {e}"),
        });
    }
    let s: StoredV1 = serde_json::from_str(text).map_err(|e| format!("stored form: {e}"))?;
    let zones = s
        .zones
        .iter()
        .enumerate()
        .map(|(i, z)| CustomTz::from_vtimezone(z).map_err(|e| format!("zones[{i}]: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let r = Reader { zones };
    let start = r.when(s.start, "start")?;
    let whens = |v: Vec<WhenDto>, what: &str| -> Result<Vec<When>, String> {
        v.into_iter().map(|w| r.when(w, what)).collect()
    };
    Ok(Event {
        uid: s.uid,
        recurrence_id: s.rid.map(|w| r.when(w, "rid")).transpose()?,
        this_and_future: s.this_and_future,
        summary: s.summary,
        description: s.description,
        location: s.location,
        status: s.status,
        sequence: s.sequence,
        start,
        end: s.end.map(|e| r.end(e, "end")).transpose()?,
        rrules: s
            .rrules
            .into_iter()
            .map(|x| unrule(x, start, "rrule"))
            .collect::<Result<_, _>>()?,
        exrules: s
            .exrules
            .into_iter()
            .map(|x| unrule(x, start, "exrule"))
            .collect::<Result<_, _>>()?,
        rdates: whens(s.rdates, "rdates")?,
        rdate_periods: s
            .rdate_periods
            .into_iter()
            .map(|(w, e)| Ok((r.when(w, "rdate_periods")?, r.end(e, "rdate_periods")?)))
            .collect::<Result<_, String>>()?,
        exdates: whens(s.exdates, "exdates")?,
        alarms: s
            .alarms
            .into_iter()
            .enumerate()
            .map(|(n, a)| unalarm(a, n))
            .collect::<Result<_, _>>()?,
        extra: s
            .extra
            .into_iter()
            .map(|line| RawProperty { line })
            .collect(),
        todo: s
            .todo
            .map(|t| -> Result<Todo, String> {
                Ok(Todo {
                    has_start: t.has_start,
                    has_due: t.has_due,
                    completed: t
                        .completed
                        .map(|c| parse_instant(&c, "todo.completed"))
                        .transpose()?,
                    percent: t.percent,
                    priority: t.priority,
                })
            })
            .transpose()?,
    })
}
