//! The tasks list and ticking a task off, for the desktop.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use kairos_engine::tasks::{TaskError, done, open_tasks};

use crate::App;
use crate::api::{ApiError, EventRef, TaskItem};
use crate::convert::{fmt_date, fmt_minute, wall_in};
use crate::error::ApiResult;

impl From<TaskError> for ApiError {
    fn from(e: TaskError) -> Self {
        match e {
            TaskError::NotFound(_) => Self::not_found(e.to_string()),
            TaskError::Ambiguous { .. } | TaskError::AlreadyDone(_) => Self::invalid(e.to_string()),
            TaskError::Engine(e) => e.into(),
        }
    }
}

impl App {
    /// The open tasks of the visible calendars, due soonest first (undated
    /// last); a recurring task appears once, as its current occurrence.
    ///
    /// # Errors
    /// Store failures; a stored task that no longer reads.
    pub fn list_tasks(&self, now: DateTime<Utc>) -> ApiResult<Vec<TaskItem>> {
        let tz = self.display_tz();
        let calendars: HashMap<String, (i64, String)> = self
            .list_calendars()?
            .into_iter()
            .filter(|c| c.visible)
            .map(|c| (c.name, (c.id, c.color)))
            .collect();
        Ok(open_tasks(&self.store, now, tz)?
            .into_iter()
            .filter_map(|t| {
                let (id, color) = calendars.get(&t.calendar)?.clone();
                let due = match (t.due_date, t.due) {
                    (Some(d), _) => Some(fmt_date(d)),
                    (None, Some(i)) => Some(fmt_minute(wall_in(i, tz))),
                    (None, None) => None,
                };
                Some(TaskItem {
                    event: EventRef {
                        calendar_id: id,
                        uid: t.uid,
                        recurrence_id: t.occurrence,
                    },
                    title: t.summary.unwrap_or_else(|| "(no title)".into()),
                    due,
                    priority: t.priority,
                    overdue: t.overdue,
                    color,
                })
            })
            .collect())
    }

    /// Marks a task done: a single task as a whole, a recurring task's
    /// current occurrence (the one [`App::list_tasks`] shows). Its pending
    /// reminders go; one showing is acknowledged (the shell then closes its
    /// notification); the change syncs like any edit.
    ///
    /// # Errors
    /// Unknown task, one done already, an occurrence that is not the
    /// current one, store failures.
    pub fn complete_task(&mut self, event: &EventRef, now: DateTime<Utc>) -> ApiResult<()> {
        let name = self.calendar(event.calendar_id)?.name;
        let tz = self.display_tz();
        if let Some(rid) = &event.recurrence_id {
            let current = self
                .list_tasks(now)?
                .into_iter()
                .find(|t| t.event.calendar_id == event.calendar_id && t.event.uid == event.uid)
                .and_then(|t| t.event.recurrence_id);
            if current.as_deref() != Some(rid.as_str()) {
                return Err(ApiError::invalid(format!(
                    "task {:?}: occurrence {rid} is not the one to do next ({}); \
                     mark it done in the editor",
                    event.uid,
                    current.unwrap_or_else(|| "none".into())
                )));
            }
        }
        done(
            &mut self.store,
            &event.uid,
            Some(&name),
            now,
            self.horizon,
            tz,
        )?;
        Ok(())
    }
}
