//! The calendar model: what a calendar, an event and an alarm *are*, independent of
//! the iCalendar text they were read from.

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use chrono_tz::Tz;

use crate::recur::Rule;
use crate::time::{Dur, resolve_local};
pub use crate::tz::CustomTz;

/// Where a local date-time is anchored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Zone {
    /// `…Z`: the local time *is* UTC.
    Utc,
    /// No zone: the same wall-clock time wherever the reader is (RFC 5545 form #1).
    Floating,
    /// An IANA zone (after mapping Windows/custom `TZID`s).
    Tz(Tz),
    /// A zone defined by the file's own `VTIMEZONE` whose rules match no IANA
    /// zone (RFC 5545 §3.6.5: the file's definition is the law).
    Custom(CustomTz),
}

/// A `DATE` or `DATE-TIME` value as written, before it is fixed to an instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// An all-day date.
    Date(NaiveDate),
    /// A wall-clock time in a zone.
    DateTime {
        /// The local (wall-clock) time.
        local: NaiveDateTime,
        /// The zone it is in.
        zone: Zone,
    },
}

impl When {
    /// Is this a `DATE` (all-day) value?
    #[must_use]
    pub fn is_date(&self) -> bool {
        matches!(self, When::Date(_))
    }

    /// The wall-clock value; a date is its midnight.
    #[must_use]
    pub fn local(&self) -> NaiveDateTime {
        match *self {
            When::Date(d) => d.and_time(chrono::NaiveTime::MIN),
            When::DateTime { local, .. } => local,
        }
    }

    /// The zone the wall-clock value is in; dates float.
    #[must_use]
    pub fn zone(&self) -> Zone {
        match *self {
            When::Date(_) => Zone::Floating,
            When::DateTime { zone, .. } => zone,
        }
    }

    /// The instant this value denotes, with floating times (and dates) read in
    /// `floating`. Non-existent and ambiguous local times follow RFC 5545 §3.3.5.
    #[must_use]
    pub fn instant(&self, floating: Tz) -> DateTime<Utc> {
        resolve_local(self.local(), self.zone(), floating)
    }
}

/// How an event's end is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// `DTEND`.
    At(When),
    /// `DURATION`.
    For(Dur),
}

/// What an alarm's `TRIGGER` is measured from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Related {
    /// `RELATED=START` (the default).
    Start,
    /// `RELATED=END`.
    End,
}

/// An alarm's `TRIGGER`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// A duration before (negative) or after the occurrence's start or end.
    Relative {
        /// Signed offset; days are nominal (wall-clock), hours and less exact.
        offset: Dur,
        /// Start or end of the occurrence.
        related: Related,
    },
    /// `TRIGGER;VALUE=DATE-TIME:…Z`: one fixed instant.
    Absolute(DateTime<Utc>),
}

/// A property kept only so that export can write it back (X- and unknown
/// properties, RFC 5545 §3.8.8.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawProperty {
    /// The content line exactly as it was unfolded: `X-FOO;P=1:value`.
    pub line: String,
}

impl RawProperty {
    /// The value, if the property is called `name` (see [`property_value`]).
    #[must_use]
    pub fn value_if(&self, name: &str) -> Option<&str> {
        property_value(&self.line, name)
    }
}

/// The value of content line `NAME;PARAMS:VALUE` if its name is `name`
/// (case-insensitive): the text after the first `:` outside a quoted
/// parameter value.
#[must_use]
pub fn property_value<'l>(line: &'l str, name: &str) -> Option<&'l str> {
    let end = line.find([';', ':']).unwrap_or(line.len());
    if !line[..end].eq_ignore_ascii_case(name) {
        return None;
    }
    let mut quoted = false;
    for (i, c) in line.char_indices().skip(end) {
        match c {
            '"' => quoted = !quoted,
            ':' if !quoted => return Some(&line[i + 1..]),
            _ => {}
        }
    }
    None
}

/// A `VALARM`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alarm {
    /// The alarm's `UID` (RFC 9074), if any; otherwise it is known by its index.
    pub uid: Option<String>,
    /// `ACTION`: `DISPLAY`, `AUDIO`, `EMAIL`, or another token, upper-cased.
    pub action: String,
    /// When it goes off.
    pub trigger: Trigger,
    /// Extra repetitions after the first (`REPEAT`).
    pub repeat: u32,
    /// Time between repetitions (`DURATION`); present iff `repeat > 0`.
    pub interval: Option<Dur>,
    /// `DESCRIPTION`.
    pub description: Option<String>,
    /// `SUMMARY` (e-mail alarms).
    pub summary: Option<String>,
    /// RFC 9074 `ACKNOWLEDGED`: triggers at or before this instant were handled.
    pub acknowledged: Option<DateTime<Utc>>,
    /// RFC 9074 `RELATED-TO;RELTYPE=SNOOZE`: the alarm this one snoozes.
    pub snooze_of: Option<String>,
    /// Unknown properties, kept for export.
    pub extra: Vec<RawProperty>,
}

/// The start of the `UID`s Kairos gives alarms that had none, when it must
/// name one (an RFC 9074 snooze alarm's `RELATED-TO` points at it):
/// `kairos-alarm-<index>.<series UID>`.
pub const KAIROS_ALARM_UID: &str = "kairos-alarm-";

impl Alarm {
    /// Is this an RFC 9074 snooze alarm (`RELATED-TO;RELTYPE=SNOOZE`)? It
    /// says when the alarm it names goes off again; it is no reminder of
    /// its own.
    #[must_use]
    pub fn is_snooze(&self) -> bool {
        self.snooze_of.is_some()
    }
}

/// The `UID` Kairos gives alarm number `index` of series `series` when
/// it had none (see [`alarm_key`]: its key stays `#index`).
#[must_use]
pub fn kairos_alarm_uid(series: &str, index: usize) -> String {
    format!("{KAIROS_ALARM_UID}{index}.{series}")
}

/// What reminder keys call alarm number `index` (file order, snooze alarms
/// counted) with `UID` `uid`: its `UID`, else `#index`. A `UID` Kairos gave
/// it ([`kairos_alarm_uid`], still at that index) keeps the `#index` it
/// had before, so naming an alarm never changes its reminders' keys.
#[must_use]
pub fn alarm_key(uid: Option<&str>, index: usize) -> String {
    match uid {
        None => format!("#{index}"),
        Some(u) => {
            let given = u
                .strip_prefix(KAIROS_ALARM_UID)
                .and_then(|r| r.split_once('.'))
                .is_some_and(|(n, _)| n.parse() == Ok(index));
            if given {
                format!("#{index}")
            } else {
                u.to_owned()
            }
        }
    }
}

/// A `VEVENT`: either a series master (or single event) or an override of one
/// occurrence (`recurrence_id` set).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// `UID`.
    pub uid: String,
    /// `RECURRENCE-ID`: which occurrence of the series this component replaces.
    pub recurrence_id: Option<When>,
    /// `RECURRENCE-ID;RANGE=THISANDFUTURE`: it also replaces all later ones.
    pub this_and_future: bool,
    /// `SUMMARY`.
    pub summary: Option<String>,
    /// `DESCRIPTION`.
    pub description: Option<String>,
    /// `LOCATION`.
    pub location: Option<String>,
    /// `STATUS` (upper-cased): `CANCELLED` overrides remove their occurrence.
    pub status: Option<String>,
    /// `SEQUENCE`.
    pub sequence: i64,
    /// `DTSTART`.
    pub start: When,
    /// `DTEND` or `DURATION`, if given.
    pub end: Option<End>,
    /// `RRULE`s, validated at import (several are legal, if deprecated).
    pub rrules: Vec<Rule>,
    /// `EXRULE`s (deprecated by RFC 5545 but still written by some producers).
    pub exrules: Vec<Rule>,
    /// `RDATE` values (periods keep their start).
    pub rdates: Vec<When>,
    /// `RDATE;VALUE=PERIOD` entries: their start (also in `rdates`) and their
    /// own end, which overrides the event's length for that instance (§3.8.5.2).
    pub rdate_periods: Vec<(When, End)>,
    /// `EXDATE` values.
    pub exdates: Vec<When>,
    /// `VALARM`s in file order; the index is their identity when they have no UID.
    pub alarms: Vec<Alarm>,
    /// Unknown properties, kept for export.
    pub extra: Vec<RawProperty>,
    /// Set when this component is a task (`VTODO`) rather than an event.
    pub todo: Option<Todo>,
}

/// What makes a component a task (`VTODO`, RFC 5545 §3.6.2).
///
/// A task's occurrences and alarms are an event's, anchored like this:
/// - `DTSTART` and `DUE`: `start` is `DTSTART`, `end` is `End::At(DUE)`
///   (or `End::For` from `DURATION`), so `RELATED=END` alarms are measured
///   from the due time;
/// - `DUE` alone: `start` is the due time and `end` is `None` (both
///   `RELATED=START` and `RELATED=END` then mean the due time, as the major
///   clients read it);
/// - neither: the task is *undated*: it has no occurrences and no alarms,
///   and `start` holds [`UNDATED`], which nothing reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Todo {
    /// `DTSTART` was given.
    pub has_start: bool,
    /// `DUE` (or `DTSTART` + `DURATION`) was given.
    pub has_due: bool,
    /// `COMPLETED`: when it was done.
    pub completed: Option<DateTime<Utc>>,
    /// `PERCENT-COMPLETE`, 0–100.
    pub percent: Option<u8>,
    /// `PRIORITY`, 1 (highest) – 9 (lowest); 0 or absent is undefined.
    pub priority: Option<u8>,
}

/// The `start` of an undated task: a placeholder no query reads.
pub const UNDATED: When = When::Date(NaiveDate::MIN);

impl Todo {
    /// Has the task neither a start nor a due time?
    #[must_use]
    pub fn is_undated(&self) -> bool {
        !self.has_start && !self.has_due
    }
}

impl Event {
    /// Is this a task that is done or cancelled (`STATUS:COMPLETED` or
    /// `CANCELLED`, a `COMPLETED` time, or `PERCENT-COMPLETE:100`)? Its
    /// alarms no longer go off.
    #[must_use]
    pub fn is_closed_task(&self) -> bool {
        self.todo.as_ref().is_some_and(|t| {
            t.completed.is_some()
                || t.percent == Some(100)
                || matches!(self.status.as_deref(), Some("COMPLETED" | "CANCELLED"))
        })
    }

    /// Is this an undated task (no occurrences, no alarms)?
    #[must_use]
    pub fn is_undated_task(&self) -> bool {
        self.todo.as_ref().is_some_and(Todo::is_undated)
    }

    /// Is this event part of a recurring series (a master with rules or dates, or
    /// an override of one occurrence)?
    #[must_use]
    pub fn is_recurring(&self) -> bool {
        !self.rrules.is_empty() || !self.rdates.is_empty() || self.recurrence_id.is_some()
    }
}

/// A calendar: a named set of events (one `VCALENDAR`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Calendar {
    /// `X-WR-CALNAME` or a name given at import.
    pub name: Option<String>,
    /// Events in file order.
    pub events: Vec<Event>,
    /// Unknown calendar-level properties, kept for export.
    pub extra: Vec<RawProperty>,
}
