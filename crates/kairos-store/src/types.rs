//! The values that go in and come out of the store. Plain data: no SQL here.

use std::fmt;

use chrono::{DateTime, Utc};

/// Row id of a calendar. Only meaningful inside one database file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CalendarId(pub i64);

/// A calendar as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Calendar {
    /// Its row id.
    pub id: CalendarId,
    /// Its identity on every device (32 hex digits, random, never changes);
    /// reminder keys start with it.
    pub uid: String,
    /// The unique name the user sees (a label: it may change).
    pub name: String,
    /// Display colour (e.g. `#3366ff`), if one was set.
    pub color: Option<String>,
    /// When [`crate::Tx::ensure_calendar`] first created it.
    pub created_at: DateTime<Utc>,
}

/// A calendar's working time on this device (schema 0006).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkSettings {
    /// Its row id.
    pub id: CalendarId,
    /// Its identity (as in [`Calendar::uid`]).
    pub uid: String,
    /// Its name.
    pub name: String,
    /// Working weekdays, Monday = bit 0 … Sunday = bit 6 (31: Mon–Fri).
    pub week: u8,
    /// Is it a holiday feed (its all-day events are non-working days)?
    pub holidays: bool,
}

/// A calendar with the desktop app's settings (schema 0002).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalendarSettings {
    /// Its row id.
    pub id: CalendarId,
    /// The unique name the user sees.
    pub name: String,
    /// Display colour (`#rrggbb`), if one was set.
    pub color: Option<String>,
    /// Shown in the views.
    pub visible: bool,
    /// JSON array of default reminders for new events (opaque here).
    pub default_alarms: String,
    /// Series (master events) in it; ignored by updates.
    pub series: u32,
}

/// What a stored component's [`StoredEvent::body`] is (schema 9). Both are
/// opaque to the store: the engine writes and reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Form {
    /// The engine's versioned typed form: what every write stores.
    Typed,
    /// iCalendar text written before schema 9, not (yet) converted by the
    /// engine: only [`Tx::convert_event`](crate::Tx::convert_event) changes it.
    Ics,
}

impl Form {
    pub(crate) fn as_sql(self) -> &'static str {
        match self {
            Form::Typed => "typed",
            Form::Ics => "ics",
        }
    }
}

/// One component (a VEVENT or VTODO, master or override) as stored, its
/// body kept verbatim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    /// Calendar it belongs to.
    pub calendar: CalendarId,
    /// Its `UID`.
    pub uid: String,
    /// `""` for the master, else the override's `RECURRENCE-ID` as the caller wrote it.
    pub recurrence_id: String,
    /// The component, in the engine's stored form ([`StoredEvent::form`]).
    pub body: String,
    /// What [`StoredEvent::body`] is.
    pub form: Form,
    /// The caller's version of the event's timing rules (time, recurrence, alarms).
    pub rule_version: u32,
    /// When it was last written with a change.
    pub updated_at: DateTime<Utc>,
}

/// Where a reminder instance is in its life (DESIGN.md §2).
///
/// The store keeps the state and guards each change; which changes are legal
/// is the engine's business.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum State {
    /// Computed, waiting for its trigger time.
    Pending,
    /// Claimed by an engine that is delivering it now.
    Firing,
    /// Shown to the person on at least one channel.
    Delivered,
    /// The last attempt failed; may be retried.
    Failed,
    /// Given up after bounded retries.
    Abandoned,
    /// Dismissed by the person.
    Acknowledged,
    /// Snoozed; a new instance (with `snooze_of` = this key) carries it on.
    Snoozed,
    /// Too old when caught up: recorded, not fired.
    Expired,
    /// Caught up late and shown as missed.
    Missed,
}

impl State {
    /// Every state, in lifecycle order.
    pub const ALL: [State; 9] = [
        State::Pending,
        State::Firing,
        State::Delivered,
        State::Failed,
        State::Abandoned,
        State::Acknowledged,
        State::Snoozed,
        State::Expired,
        State::Missed,
    ];

    /// The name stored in the database (and shown by `kairos why`).
    pub fn as_str(self) -> &'static str {
        match self {
            State::Pending => "pending",
            State::Firing => "firing",
            State::Delivered => "delivered",
            State::Failed => "failed",
            State::Abandoned => "abandoned",
            State::Acknowledged => "acknowledged",
            State::Snoozed => "snoozed",
            State::Expired => "expired",
            State::Missed => "missed",
        }
    }

    /// The state named `s`, if it is one.
    pub fn parse(s: &str) -> Option<State> {
        State::ALL.into_iter().find(|st| st.as_str() == s)
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one delivery attempt on one channel came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// Shown. At most one per instance and channel (enforced by the database).
    Delivered,
    /// Failed for a reason that may pass (timeout, daemon busy).
    Retryable,
    /// Failed for good (bad payload).
    Permanent,
    /// Failed, reason unclassified.
    Unknown,
}

impl Outcome {
    /// The name stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Delivered => "delivered",
            Outcome::Retryable => "retryable",
            Outcome::Permanent => "permanent",
            Outcome::Unknown => "unknown",
        }
    }

    /// The outcome named `s`, if it is one.
    pub fn parse(s: &str) -> Option<Outcome> {
        [
            Outcome::Delivered,
            Outcome::Retryable,
            Outcome::Permanent,
            Outcome::Unknown,
        ]
        .into_iter()
        .find(|o| o.as_str() == s)
    }
}

/// What [`crate::Tx::record_delivery`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub enum Recorded {
    /// The attempt was recorded.
    Recorded,
    /// A successful delivery of this instance on this channel already exists;
    /// nothing was added except an audit row saying so. Do not show it again.
    AlreadyDelivered,
}

/// A reminder instance to schedule (state `pending`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewInstance {
    /// The stable instance key; the same trigger must always get the same key.
    pub key: String,
    /// Calendar of the event.
    pub calendar: CalendarId,
    /// `UID` of the event.
    pub event_uid: String,
    /// Original start of the occurrence, as the key spells it.
    pub occurrence: String,
    /// Alarm UID or stand-in, as the key spells it.
    pub alarm: String,
    /// 0 for the trigger, k for its k-th repetition.
    pub repetition: u32,
    /// The event's `rule_version` this instance was computed from.
    pub rule_version: u32,
    /// When it must fire (stored to the millisecond).
    pub trigger_at: DateTime<Utc>,
    /// Key of the instance this one snoozes, if it is a snooze.
    pub snooze_of: Option<String>,
    /// JSON (must be valid): what the notification says.
    pub payload: String,
}

/// A reminder instance as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    /// The stable instance key.
    pub key: String,
    /// Calendar of the event.
    pub calendar: CalendarId,
    /// `UID` of the event.
    pub event_uid: String,
    /// Original start of the occurrence.
    pub occurrence: String,
    /// Alarm UID or stand-in.
    pub alarm: String,
    /// 0 for the trigger, k for its k-th repetition.
    pub repetition: u32,
    /// The event's `rule_version` it was computed from.
    pub rule_version: u32,
    /// When it must fire.
    pub trigger_at: DateTime<Utc>,
    /// Where it is in its life.
    pub state: State,
    /// How many times it entered [`State::Firing`].
    pub attempts: u32,
    /// When a failed instance should be retried, if scheduled.
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// Key of the instance this one snoozes.
    pub snooze_of: Option<String>,
    /// JSON: what the notification says.
    pub payload: String,
    /// When its row last changed.
    pub updated_at: DateTime<Utc>,
}

/// One line of an instance's history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRow {
    /// Order of writing (ascending).
    pub id: i64,
    /// When it happened (the caller's `now`).
    pub at: DateTime<Utc>,
    /// The instance key.
    pub key: String,
    /// State before; `None` when the instance was created.
    pub from: Option<State>,
    /// State after; `None` when the instance was removed (superseded by an
    /// edit or its event deleted). A delivery attempt has `from == to`.
    pub to: Option<State>,
    /// Why, in words.
    pub reason: String,
    /// The channel, for a delivery attempt.
    pub channel: Option<String>,
    /// Delivery latency in milliseconds, when the caller measured it.
    pub latency_ms: Option<i64>,
    /// A note about sync (an edit that lost), not a state change; `key` is
    /// then the synced entity.
    pub sync_note: bool,
}

/// One delivery attempt as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// The channel (`notify`, `stdout`, …).
    pub channel: String,
    /// What came of it.
    pub outcome: Outcome,
    /// The error text, for a failure.
    pub error: Option<String>,
    /// Latency in milliseconds, when measured.
    pub latency_ms: Option<i64>,
    /// When it was recorded.
    pub at: DateTime<Utc>,
}

/// The advisory single-writer lease, as held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// Who holds it (an id unique per running engine).
    pub owner: String,
    /// Valid until this instant (exclusive); renew well before.
    pub until: DateTime<Utc>,
}

/// A calendar that is an ICS feed (schema 0007).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscription {
    /// The calendar whose content the feed replaces.
    pub calendar: CalendarId,
    /// Its name.
    pub name: String,
    /// Where the feed is fetched (http or https).
    pub url: String,
    /// The chosen refresh interval, in seconds.
    pub every_secs: i64,
    /// `ETag` of the last good body.
    pub etag: Option<String>,
    /// `Last-Modified` of the last good body.
    pub last_modified: Option<String>,
    /// The last attempt, whatever its outcome.
    pub last_refresh: Option<DateTime<Utc>>,
    /// The last successful attempt (a body applied, or 304).
    pub last_ok: Option<DateTime<Utc>>,
    /// Why the last attempt failed (`None` after a success).
    pub last_error: Option<String>,
    /// Consecutive failed attempts.
    pub failures: i64,
    /// When the next refresh is due.
    pub next_at: DateTime<Utc>,
}
