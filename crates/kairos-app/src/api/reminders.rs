//! Reminders, settings and the app's status as the UI sees them.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{EventRef, SyncStatus};

/// A reminder that fired and is not dismissed: the reminder window's rows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ShownReminder {
    /// Instance key (for snooze/dismiss).
    pub key: String,
    /// The event it is about.
    pub event: EventRef,
    /// Summary.
    pub title: String,
    /// Location.
    pub location: Option<String>,
    /// Calendar colour.
    pub color: String,
    /// Occurrence start as the event wrote it (RFC 3339 with offset, or a date).
    pub occurrence_start: String,
    /// When it was due, instant.
    pub trigger: String,
    /// Fell due while Kairos was not running (shown later, as missed).
    pub missed: bool,
}

/// A pending reminder (tray menu, status bar).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct UpcomingReminder {
    /// Instance key.
    pub key: String,
    /// Summary.
    pub title: String,
    /// When it fires, instant.
    pub trigger: String,
}

/// Snooze a shown reminder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SnoozeRequest {
    /// Instance key.
    pub key: String,
    /// 1 – 10,080 (a week).
    pub minutes: u32,
}

/// User settings (stored in the database).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Settings {
    /// `auto` (from the OS), `en` or `zh-CN`.
    pub language: String,
    /// `system`, `light` or `dark`.
    pub theme: String,
    /// Display zone (IANA); `null` follows the system.
    pub time_zone: Option<String>,
    /// 0 = Sunday, 1 = Monday.
    pub week_start: u8,
    /// Snooze choices offered, minutes (1–10,080, at most 12).
    pub snooze_choices: Vec<u32>,
    /// What the notification's Snooze button does, minutes.
    pub default_snooze: u32,
    /// No pop-ups in this daily window (`HH:MM`–`HH:MM`, local);
    /// reminders still go to the reminder window.
    pub quiet_hours: Option<QuietHours>,
    /// Start Kairos when the user logs in.
    pub start_at_login: bool,
    /// Calendar new events go to.
    pub default_calendar: Option<i64>,
}

/// A daily quiet window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct QuietHours {
    /// `HH:MM`.
    pub start: String,
    /// `HH:MM` (before `start` means the window crosses midnight).
    pub end: String,
}

/// How reminders reach the person right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum NotifierState {
    /// OS notifications with Snooze/Dismiss buttons.
    Actions,
    /// OS notifications without buttons: the reminder window does the rest.
    NoActions,
    /// No notification service: the reminder window only.
    Unavailable,
}

/// The status bar and tray.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct AppStatus {
    /// Kairos version.
    pub version: String,
    /// Display zone in effect.
    pub time_zone: String,
    /// The system's zone.
    pub system_time_zone: String,
    /// Database file.
    pub database: String,
    /// OS notifications.
    pub notifier: NotifierState,
    /// Reminders paused (do-not-disturb) until this instant.
    pub paused_until: Option<String>,
    /// The next few pending reminders.
    pub next: Vec<UpcomingReminder>,
    /// Reminders fired and not yet dismissed.
    pub shown: u32,
    /// The sync connection.
    pub sync: SyncStatus,
}

/// Pause pop-ups (do-not-disturb).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Pause {
    /// For one hour.
    Hour,
    /// Until 08:00 tomorrow (display zone).
    UntilTomorrow,
    /// Resume now.
    Off,
}
