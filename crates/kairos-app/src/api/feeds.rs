//! The IPC types of ICS subscriptions (a calendar that is a feed on the
//! web: "Add calendar → From URL…", its status beside the calendar).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// One subscribed calendar, as the calendar list shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SubscriptionView {
    /// The calendar's id (its events are read-only in the editor: a
    /// refresh replaces them).
    pub calendar_id: i64,
    /// The calendar's name.
    pub calendar: String,
    /// Where it is fetched (`webcal://` is stored as `https://`).
    pub url: String,
    /// The refresh interval, minutes.
    pub every_minutes: u32,
    /// The last attempt, whatever its outcome, instant; `null` if never.
    pub last_refresh: Option<String>,
    /// The last successful attempt, instant; `null` if never.
    pub last_ok: Option<String>,
    /// Why the last attempt failed (`null` after a success); the calendar
    /// kept its last good copy.
    pub last_error: Option<FeedProblem>,
    /// When the next refresh is due, instant.
    pub next_refresh: String,
}

/// Why a feed could not be fetched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct FeedProblem {
    /// What kind of problem, for the UI's words (the same kinds a failed
    /// subscribe has: `feed_*`, or `internal`).
    pub kind: super::ErrorKind,
    /// The detail, in English (status, reason, limit).
    pub message: String,
}

/// "Add calendar → From URL…".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SubscribeRequest {
    /// `http://`, `https://` or `webcal://`.
    pub url: String,
    /// The calendar's name; empty: the feed's own name (`X-WR-CALNAME`),
    /// else the URL's host.
    pub calendar: String,
    /// Refresh interval, minutes: 5 to 10,080 (a week).
    pub every_minutes: u32,
}
