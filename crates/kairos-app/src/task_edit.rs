//! The editor's form for a task (`VTODO`): its `start` field is the due
//! time. A task the form writes is anchored on `DUE` (its `DTSTART` is kept
//! only when the task had one before the due time), and its reminders count
//! from `DUE` (`RELATED=END`, as RFC 5545 wants for a task without
//! `DTSTART`).

use chrono::{DateTime, Utc};
use kairos_core::model::{End, Event, Related, Todo, Trigger, When};

use crate::api::TaskMark;

/// The mark of `ev` if it is a task.
#[must_use]
pub fn mark_of(ev: &Event) -> Option<TaskMark> {
    ev.todo.as_ref().map(|t| TaskMark {
        done: ev.is_closed_task(),
        priority: t.priority,
    })
}

/// The due moment of a task for the views and the form: `DUE` when it
/// has one, else its start.
#[must_use]
pub fn due_of(ev: &Event) -> When {
    match ev.end {
        Some(End::At(w)) if ev.todo.is_some() => w,
        _ => ev.start,
    }
}

/// Makes `ev` (built from the form, `start` = the due time) the task
/// `mark` says: due at its start, done or not at `now`.
pub fn apply(ev: &mut Event, mark: &TaskMark, base: Option<&Event>, now: DateTime<Utc>) {
    let due = ev.start;
    let old = base.and_then(|b| b.todo.clone()).unwrap_or_default();
    // Keep a DTSTART the task had, when it is still before the due time.
    let kept_start = base
        .filter(|b| old.has_start && b.start.is_date() == due.is_date())
        .map(|b| b.start)
        .filter(|s| s.local() <= due.local());
    ev.start = kept_start.unwrap_or(due);
    ev.end = kept_start.map(|_| End::At(due));
    let was_done = base.is_some_and(Event::is_closed_task);
    ev.status = match (mark.done, was_done) {
        (true, true) => base.and_then(|b| b.status.clone()),
        (true, false) => Some("COMPLETED".into()),
        (false, true) => Some("NEEDS-ACTION".into()),
        (false, false) => base.and_then(|b| b.status.clone()),
    };
    ev.todo = Some(Todo {
        has_start: kept_start.is_some(),
        has_due: true,
        completed: match (mark.done, was_done) {
            (true, true) => old.completed,
            (true, false) => Some(now),
            (false, _) => None,
        },
        percent: match (mark.done, old.percent) {
            (true, _) => Some(100),
            (false, Some(100)) => None,
            (false, p) => p,
        },
        priority: mark.priority.filter(|p| (1..=9).contains(p)),
    });
    if kept_start.is_none() {
        for a in &mut ev.alarms {
            if let Trigger::Relative { related, .. } = &mut a.trigger {
                *related = Related::End;
            }
        }
    }
}
