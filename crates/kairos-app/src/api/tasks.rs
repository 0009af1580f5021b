//! The IPC types of tasks (`VTODO`): the tasks list, and what marks an
//! occurrence or an editor form as a task.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::EventRef;

/// What makes an occurrence or a form a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct TaskMark {
    /// Completed (or cancelled): its reminders are stopped.
    pub done: bool,
    /// `PRIORITY` 1 (highest) – 9 (lowest), `null` for none.
    pub priority: Option<u8>,
}

/// One open task in the tasks list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct TaskItem {
    /// Names the task (for a recurring one, its current occurrence).
    pub event: EventRef,
    /// Summary (`"(no title)"` when empty).
    pub title: String,
    /// Due: a wall time in the display zone, a date for a date-only task,
    /// `null` for a task with no date.
    pub due: Option<String>,
    /// `PRIORITY` 1 – 9, or `null`.
    pub priority: Option<u8>,
    /// Due before now.
    pub overdue: bool,
    /// The calendar's colour.
    pub color: String,
}
