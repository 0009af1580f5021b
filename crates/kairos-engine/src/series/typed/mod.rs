//! The stored form of one component: the core's [`Event`] as versioned JSON
//! (`{"v":1,…}`), written and read here only.
//!
//! Explicit DTOs rather than serde derives on the core model: the core's
//! types hold parsed state that is not data (a [`Rule`] carries the `rrule`
//! crate's prepared rules, a [`CustomTz`] is an interned handle), and the
//! stored form must stay readable when the model changes shape. So the
//! form is spelled out below, and each value is rebuilt through the core's
//! own constructors (a rule from its text, a custom zone from its
//! `VTIMEZONE`), strictly: anything unexpected is an error naming the field.
//!
//! Versioning rule: a change that an older reader would misread gets a new
//! `v`; this reader refuses a `v` it does not know (a newer Kairos wrote
//! it) instead of guessing, and unknown fields too (`deny_unknown_fields`).
//! A new optional field that older readers may safely ignore still needs a
//! new `v`, because of that strictness.
//!
//! Custom zones (a file's own `VTIMEZONE` matching no IANA zone) are kept as
//! their `VTIMEZONE` text, once per component in `zones`: chrono-tz cannot
//! name them, and their block is their only definition. (The engine's write
//! path stores such times as UTC today, as the wire carries them: see
//! `series::settle`; the form can hold them for when the wire can.)

use chrono::{DateTime, NaiveDateTime, Utc};
use kairos_core::model::{Alarm, CustomTz, End, Event, Related, Trigger, When, Zone};
use kairos_core::recur::{Rule, Until};
use kairos_core::time::Dur;
use serde::{Deserialize, Serialize};

mod read;
pub(crate) use read::from_stored;

/// The version this build writes (and the only one it reads).
pub(crate) const VERSION: u32 = 1;

/// How every stored component written by this version begins.
const PREFIX: &str = "{\"v\":1,";

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredV1 {
    v: u32,
    uid: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    zones: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rid: Option<WhenDto>,
    #[serde(default, skip_serializing_if = "is_false")]
    this_and_future: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    summary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    location: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status: Option<String>,
    #[serde(default, skip_serializing_if = "is_zero")]
    sequence: i64,
    start: WhenDto,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    end: Option<EndDto>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    rrules: Vec<RuleDto>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    exrules: Vec<RuleDto>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    rdates: Vec<WhenDto>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    rdate_periods: Vec<(WhenDto, EndDto)>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    exdates: Vec<WhenDto>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    alarms: Vec<AlarmDto>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    extra: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    todo: Option<TodoDto>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
enum ZoneDto {
    Utc,
    Floating,
    Tz(String),
    /// Index into `zones`.
    Custom(usize),
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
enum WhenDto {
    Date(String),
    Time(String, ZoneDto),
}

/// `[days, seconds]`, as [`Dur`] holds them.
type DurDto = (i64, i64);

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
enum EndDto {
    At(WhenDto),
    For(DurDto),
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
enum UntilDto {
    Instant(String),
    Local(String),
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleDto {
    rule: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    until: Option<UntilDto>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
enum TriggerDto {
    Start(DurDto),
    End(DurDto),
    At(String),
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct AlarmDto {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    uid: Option<String>,
    action: String,
    trigger: TriggerDto,
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    repeat: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    interval: Option<DurDto>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    summary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    acknowledged: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    snooze_of: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    extra: Vec<String>,
}

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TodoDto {
    #[serde(default, skip_serializing_if = "is_false")]
    has_start: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    has_due: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    completed: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    percent: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    priority: Option<u8>,
}

// ---- model → stored ----

fn naive(t: NaiveDateTime) -> String {
    format!("{}T{}", t.date(), t.time())
}

fn instant(t: DateTime<Utc>) -> String {
    format!("{}Z", naive(t.naive_utc()))
}

fn dur(d: Dur) -> DurDto {
    (d.days, d.secs)
}

/// Collects the custom zones of one component as it is written.
#[derive(Default)]
struct Writer {
    zones: Vec<CustomTz>,
}

impl Writer {
    fn zone(&mut self, z: Zone) -> ZoneDto {
        match z {
            Zone::Utc => ZoneDto::Utc,
            Zone::Floating => ZoneDto::Floating,
            Zone::Tz(tz) => ZoneDto::Tz(tz.name().to_owned()),
            Zone::Custom(c) => ZoneDto::Custom(match self.zones.iter().position(|k| *k == c) {
                Some(i) => i,
                None => {
                    self.zones.push(c);
                    self.zones.len() - 1
                }
            }),
        }
    }

    fn when(&mut self, w: &When) -> WhenDto {
        match *w {
            When::Date(d) => WhenDto::Date(d.to_string()),
            When::DateTime { local, zone } => WhenDto::Time(naive(local), self.zone(zone)),
        }
    }

    fn end(&mut self, e: &End) -> EndDto {
        match e {
            End::At(w) => EndDto::At(self.when(w)),
            End::For(d) => EndDto::For(dur(*d)),
        }
    }
}

fn rule(r: &Rule) -> RuleDto {
    RuleDto {
        rule: r.source.clone(),
        until: r.until.map(|u| match u {
            Until::Instant(t) => UntilDto::Instant(instant(t)),
            Until::Local(t) => UntilDto::Local(naive(t)),
        }),
    }
}

fn alarm(a: &Alarm) -> AlarmDto {
    AlarmDto {
        uid: a.uid.clone(),
        action: a.action.clone(),
        trigger: match a.trigger {
            Trigger::Relative {
                offset,
                related: Related::Start,
            } => TriggerDto::Start(dur(offset)),
            Trigger::Relative {
                offset,
                related: Related::End,
            } => TriggerDto::End(dur(offset)),
            Trigger::Absolute(t) => TriggerDto::At(instant(t)),
        },
        repeat: a.repeat,
        interval: a.interval.map(dur),
        description: a.description.clone(),
        summary: a.summary.clone(),
        acknowledged: a.acknowledged.map(instant),
        snooze_of: a.snooze_of.clone(),
        extra: a.extra.iter().map(|x| x.line.clone()).collect(),
    }
}

/// One component in its stored form.
pub(crate) fn to_stored(ev: &Event) -> String {
    let mut w = Writer::default();
    let start = w.when(&ev.start);
    let rid = ev.recurrence_id.as_ref().map(|r| w.when(r));
    let end = ev.end.as_ref().map(|e| w.end(e));
    let rdates = ev.rdates.iter().map(|d| w.when(d)).collect();
    let rdate_periods = ev
        .rdate_periods
        .iter()
        .map(|(s, e)| (w.when(s), w.end(e)))
        .collect();
    let exdates = ev.exdates.iter().map(|d| w.when(d)).collect();
    let stored = StoredV1 {
        v: VERSION,
        uid: ev.uid.clone(),
        zones: w.zones.iter().map(|z| z.vtimezone().join("\r\n")).collect(),
        rid,
        this_and_future: ev.this_and_future,
        summary: ev.summary.clone(),
        description: ev.description.clone(),
        location: ev.location.clone(),
        status: ev.status.clone(),
        sequence: ev.sequence,
        start,
        end,
        rrules: ev.rrules.iter().map(rule).collect(),
        exrules: ev.exrules.iter().map(rule).collect(),
        rdates,
        rdate_periods,
        exdates,
        alarms: ev.alarms.iter().map(alarm).collect(),
        extra: ev.extra.iter().map(|x| x.line.clone()).collect(),
        todo: ev.todo.as_ref().map(|t| TodoDto {
            has_start: t.has_start,
            has_due: t.has_due,
            completed: t.completed.map(instant),
            percent: t.percent,
            priority: t.priority,
        }),
    };
    // Only strings, numbers and plain structs: serialising cannot fail.
    serde_json::to_string(&stored).unwrap_or_default()
}
