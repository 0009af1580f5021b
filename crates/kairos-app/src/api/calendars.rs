//! The IPC types of the calendars sidebar.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::AlarmSpec;

/// One calendar, as the sidebar shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct CalendarInfo {
    /// Store id.
    pub id: i64,
    /// Name, unique.
    pub name: String,
    /// CSS colour, `#rrggbb`.
    pub color: String,
    /// Shown in the views.
    pub visible: bool,
    /// Reminders a new event in this calendar starts with.
    pub default_alarms: Vec<AlarmSpec>,
    /// Events (series count once) in it.
    pub events: u32,
    /// Working weekdays for working-day reminders: Monday = bit 0 …
    /// Sunday = bit 6 (31: Monday–Friday).
    pub work_week: u8,
    /// A holiday calendar: its all-day events are non-working days for
    /// every calendar's working-day reminders.
    pub holidays: bool,
}

/// Create (`id: null`) or change a calendar.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct CalendarInput {
    /// `null` to create.
    pub id: Option<i64>,
    /// Name, 1–200 characters, unique.
    pub name: String,
    /// `#rrggbb`.
    pub color: String,
    /// Shown in the views.
    pub visible: bool,
    /// Defaults for new events (at most 20).
    pub default_alarms: Vec<AlarmSpec>,
    /// Working weekdays, Monday = bit 0 … Sunday = bit 6; at least one.
    pub work_week: u8,
    /// A holiday calendar.
    pub holidays: bool,
}
