//! The IPC contract between the desktop shell and the web UI: every request
//! and response type, declared once here. `ui/src/ipc/bindings.ts` is
//! generated from these declarations (`cargo test -p kairos-app` fails when
//! the checked-in file is stale; `UPDATE_BINDINGS=1` rewrites it).
//!
//! Conventions, chosen so the UI needs no time-zone arithmetic:
//! - A **wall time** is `YYYY-MM-DDTHH:MM[:SS]` with no offset, read in a zone
//!   the type names (the display zone for views, the event's zone in the
//!   editor). A **date** is `YYYY-MM-DD`. An **instant** is RFC 3339 UTC.
//! - Ids are numbers; an occurrence is named by an [`EventRef`], whose
//!   `recurrence_id` is opaque to the UI (it is passed back as it came).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

mod caldav;
mod calendars;
mod error;
mod feeds;
mod history;
mod reminders;
mod sync;
mod tasks;
pub use caldav::{
    CaldavAccountView, CaldavAddRequest, CaldavCalendarView, CaldavDiscovery, CaldavEditRequest,
    CaldavLogin, CaldavProblem, RemoteCalendarView,
};
pub use calendars::{CalendarInfo, CalendarInput};
pub use error::{ApiError, ErrorKind};
pub use feeds::{FeedProblem, SubscribeRequest, SubscriptionView};
pub use history::LostEdit;
pub use reminders::{
    AppStatus, NotifierState, Pause, QuietHours, Settings, ShownReminder, SnoozeRequest,
    UpcomingReminder,
};
pub use sync::{DeviceView, JoinRequest, PairingCode, SyncAccount, SyncState, SyncStatus};
pub use tasks::{TaskItem, TaskMark};

/// A reminder of an event, as the editor shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AlarmSpec {
    /// `minutes` before the start (or end); negative means after.
    Before {
        /// Minutes before; 0 = at the time.
        minutes: i32,
        /// Relative to the event's start or its end.
        related: Related,
        /// Ring again until dismissed (absent: once).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        again: Option<Again>,
    },
    /// At a fixed wall time in the event's zone.
    At {
        /// Wall time `YYYY-MM-DDTHH:MM` in the event's zone.
        at: String,
        /// Ring again until dismissed (absent: once).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        again: Option<Again>,
    },
}

/// An escalating reminder (`X-KAIROS-ESCALATE`): it rings again every
/// `every_minutes` until it is dismissed or snoozed (here or on another
/// device), at most `max` more times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Again {
    /// Minutes between rings, 1–1440.
    pub every_minutes: u32,
    /// Rings after the first, 1–100.
    pub max: u32,
}

/// What a relative reminder is measured from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Related {
    /// The event's start.
    Start,
    /// The event's end.
    End,
}

/// One occurrence in a view range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct OccurrenceView {
    /// Names this occurrence for get/move/delete.
    pub event: EventRef,
    /// Summary (`"(no title)"` when empty).
    pub title: String,
    /// Wall time in the display zone, or a date for all-day occurrences.
    pub start: String,
    /// Exclusive end, same form as `start`.
    pub end: String,
    /// A date-only occurrence.
    pub all_day: bool,
    /// The calendar's colour.
    pub color: String,
    /// Location, if any.
    pub location: Option<String>,
    /// Part of a recurring series.
    pub recurring: bool,
    /// Has at least one reminder.
    pub has_alarms: bool,
    /// A task (shown on its due day, at its due time), or `null`.
    pub task: Option<TaskMark>,
}

/// Names an event, or one occurrence of a series.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
pub struct EventRef {
    /// Calendar id.
    pub calendar_id: i64,
    /// iCalendar `UID`.
    pub uid: String,
    /// Opaque: which occurrence of a series (`null` for a single event).
    pub recurrence_id: Option<String>,
}

/// A window of the views: `[from, to)` as wall times in the display zone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct RangeQuery {
    /// Inclusive start, wall time.
    pub from: String,
    /// Exclusive end, wall time (at most 400 days after `from`).
    pub to: String,
    /// At most this many occurrences starting on each day of the display
    /// zone (the month grid); the rest are only counted, in
    /// [`Occurrences::more`]. Multi-day and all-day occurrences count on
    /// their first day (`from`'s day when they began before it). 1–100;
    /// `null` for all.
    #[serde(default)]
    pub per_day: Option<u32>,
}

/// What a view range holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Occurrences {
    /// By start, then title. On a day capped by `per_day`: all-day and
    /// multi-day occurrences first, then by start, then title.
    pub items: Vec<OccurrenceView>,
    /// Days that have occurrences left out of `items`, by date.
    pub more: Vec<DayMore>,
}

/// How many occurrences of one day were left out (the month's "+N more").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct DayMore {
    /// `YYYY-MM-DD` in the display zone.
    pub date: String,
    /// Left out, at least 1.
    pub count: u32,
}

/// The editor's form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct EventDraft {
    /// Calendar id.
    pub calendar_id: i64,
    /// Summary, at most 1,000 characters.
    pub title: String,
    /// A date-only event.
    pub all_day: bool,
    /// Wall time in `tz`, or a date when `all_day`.
    pub start: String,
    /// Wall time in `tz`; for all-day events the LAST day (inclusive).
    pub end: String,
    /// IANA zone of `start`/`end` (ignored for all-day events).
    pub tz: String,
    /// Location.
    pub location: String,
    /// Notes (`DESCRIPTION`), at most 100,000 characters.
    pub notes: String,
    /// `RRULE` value (`FREQ=WEEKLY;BYDAY=MO`), or `null`.
    pub rrule: Option<String>,
    /// Reminders, at most 20.
    pub alarms: Vec<AlarmSpec>,
    /// `null` for an event; for a task, whether it is done and its
    /// priority, and `start` is its due time (`end` is not read).
    pub task: Option<TaskMark>,
}

/// Which occurrences an edit or delete applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// The whole series (or the single event).
    All,
    /// Only the occurrence named by the [`EventRef`].
    This,
    /// That occurrence and every later one.
    ThisAndFollowing,
}

/// An event as the editor opens it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct EventDetail {
    /// What was opened.
    pub event: EventRef,
    /// The form's content (of the occurrence when `event` names one).
    pub draft: EventDraft,
    /// Part of a recurring series (the editor then asks for a [`Scope`]).
    pub recurring: bool,
    /// Edits of the series that lost to another device's later edit,
    /// newest first (empty on a database that never synced).
    pub history: Vec<LostEdit>,
}

/// Save the editor: create (`event: null`) or change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SaveEvent {
    /// `null` to create a new event.
    pub event: Option<EventRef>,
    /// Which occurrences the change applies to (`all` for new events).
    pub scope: Scope,
    /// The form.
    pub draft: EventDraft,
}

/// Drag to move or resize in a view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct MoveEvent {
    /// The occurrence dragged.
    pub event: EventRef,
    /// Which occurrences move.
    pub scope: Scope,
    /// Wall-clock shift of the start, minutes.
    pub start_delta_minutes: i64,
    /// Wall-clock shift of the end, minutes (≠ start delta when resized).
    pub end_delta_minutes: i64,
}

/// Delete an event or some of its occurrences.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct DeleteEvent {
    /// What to delete.
    pub event: EventRef,
    /// Which occurrences.
    pub scope: Scope,
}

/// Import an `.ics` file into a calendar (created when missing).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ImportIcs {
    /// File path (from the file dialog).
    pub path: String,
    /// Calendar name.
    pub calendar: String,
}

/// What an import did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ImportSummary {
    /// Calendar it went into.
    pub calendar_id: i64,
    /// Event components read.
    pub events: u32,
    /// New or changed.
    pub changed: u32,
    /// Reminders scheduled.
    pub scheduled: u32,
    /// What could not be read as written and was skipped or repaired, one
    /// line each (`line 12 (VEVENT uid x): …: what was done`).
    pub warnings: Vec<String>,
}

/// Export to an `.ics` file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ExportIcs {
    /// File path (from the save dialog).
    pub path: String,
    /// One calendar, or `null` for all.
    pub calendar_id: Option<i64>,
}

/// Names of the events the shell emits to the UI (payloads in brackets).
pub mod events {
    /// Reminders changed: fired, snoozed, dismissed (no payload).
    pub const REMINDERS_CHANGED: &str = "kairos://reminders-changed";
    /// Calendar data changed outside the UI: an import, a subscription
    /// refreshed (or failed) in the background, another process or device
    /// (no payload).
    pub const DATA_CHANGED: &str = "kairos://data-changed";
    /// Open this event in the editor (an `EventRef`).
    pub const OPEN_EVENT: &str = "kairos://open-event";
    /// Show the reminder list (no payload).
    pub const SHOW_REMINDERS: &str = "kairos://show-reminders";
    /// The sync connection's state changed (a `SyncStatus`).
    pub const SYNC_CHANGED: &str = "kairos://sync-changed";
}
