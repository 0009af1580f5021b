//! Tasks (`VTODO`) in the engine. A task is stored, planned, synced and
//! fired like an event (its alarms count from `DTSTART` and, with
//! `RELATED=END`, from `DUE`); what is particular is that it can be *done*:
//! - [`open_tasks`] lists what is still to do, due soonest first;
//! - [`done`] marks a task (or, for a recurring task, its current
//!   occurrence) done, through the same path as any edit, so the change is
//!   recorded for sync and the pending reminders go in the same
//!   transaction;
//! - [`settle_closed`] (called wherever a series is written, here or from
//!   another device) acknowledges what a done task's reminders still hold:
//!   one shown or firing at that moment is taken back.
//!
//! The *current* occurrence of a recurring task is the earliest one that is
//! not done and comes after the last one that is, looking back at most
//! [`LOOK_BACK_DAYS`]: a daily task nobody ticked off for a week shows its
//! oldest open day, one ticked off yesterday shows today.

use chrono::{DateTime, Duration, NaiveDate, Utc};
use chrono_tz::Tz;
use kairos_core::Limits;
use kairos_core::model::{Calendar, End, Event, When};
use kairos_core::query::{Moment, Occurrence, occurrences};
use kairos_core::time::local_of;
use kairos_store::{CalendarId, State, Store, StoreError};

use crate::channel::Withdrawal;

mod settle;
use crate::error::EngineError;
use crate::import::replace;
pub(crate) use settle::{TASK_DONE, settle_closed};

/// How far back the current occurrence of a recurring task is looked for.
pub const LOOK_BACK_DAYS: i64 = 366;
/// How far ahead.
const LOOK_AHEAD_DAYS: i64 = 5 * 366;

/// One open task as `kairos tasks` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskView {
    /// Calendar name.
    pub calendar: String,
    /// Task `UID`.
    pub uid: String,
    /// `SUMMARY`.
    pub summary: Option<String>,
    /// Due time of the current occurrence; `None` for an undated task.
    pub due: Option<DateTime<Utc>>,
    /// The due date, for a task due on a date (no time of day).
    pub due_date: Option<NaiveDate>,
    /// For a recurring task, the current occurrence (its original start,
    /// as instance keys write it).
    pub occurrence: Option<String>,
    /// `PRIORITY` 1 (highest) – 9.
    pub priority: Option<u8>,
    /// `PERCENT-COMPLETE`.
    pub percent: Option<u8>,
    /// Due before now.
    pub overdue: bool,
}

/// What [`done`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Done {
    /// Calendar name.
    pub calendar: String,
    /// Task `UID`.
    pub uid: String,
    /// The occurrence marked done, for a recurring task.
    pub occurrence: Option<String>,
    /// Pending reminders dropped.
    pub dropped: usize,
    /// Reminders of it that were showing (or firing), now acknowledged:
    /// for the caller's channels to take back.
    pub withdrawals: Vec<Withdrawal>,
}

/// Errors of [`done`].
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    /// No task has this UID.
    #[error("no task with UID {0:?}")]
    NotFound(String),
    /// Several calendars hold a task with this UID.
    #[error("task {uid:?} is in several calendars ({calendars}): name one with --calendar")]
    Ambiguous {
        /// The UID.
        uid: String,
        /// Their names.
        calendars: String,
    },
    /// Done already.
    #[error("task {0:?} is already done")]
    AlreadyDone(String),
    /// The engine's own errors.
    #[error(transparent)]
    Engine(#[from] EngineError),
}

impl From<StoreError> for TaskError {
    fn from(e: StoreError) -> Self {
        Self::Engine(e.into())
    }
}

/// The stored components of `calendar`, read back.
pub(crate) fn stored(store: &Store, id: CalendarId, name: &str) -> Result<Calendar, EngineError> {
    crate::series::decode(&store.events_of(id)?, name, &Limits::default())
}

/// The key form of an occurrence's original start.
fn occurrence_text(m: &Moment) -> String {
    match m.date {
        Some(d) => d.format("%Y-%m-%d").to_string(),
        None => m.instant.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
    }
}

/// The due moment of an occurrence: its end when it has one (`DUE`), else
/// its start.
fn due_of(o: &Occurrence<'_>) -> Moment {
    o.end.unwrap_or(o.start)
}

/// The current occurrence of recurring task `uid` (see the module doc).
fn current<'a>(
    series: &'a Calendar,
    now: DateTime<Utc>,
    floating: Tz,
) -> Result<Option<Occurrence<'a>>, kairos_core::Error> {
    let from = now - Duration::days(LOOK_BACK_DAYS);
    let all = occurrences(
        series,
        from,
        now + Duration::days(LOOK_AHEAD_DAYS),
        floating,
        &Limits::default(),
    )?;
    let after_last_done = all
        .iter()
        .rposition(|o| o.event.is_closed_task())
        .map_or(0, |i| i + 1);
    Ok(all
        .into_iter()
        .skip(after_last_done)
        .find(|o| !o.event.is_closed_task()))
}

fn one_series(cal: &Calendar, uid: &str) -> Calendar {
    Calendar {
        name: None,
        events: cal
            .events
            .iter()
            .filter(|e| e.uid == uid)
            .cloned()
            .collect(),
        extra: Vec::new(),
    }
}

/// Every open task, due soonest first (undated ones last, then by
/// priority).
///
/// # Errors
/// Store failures; a stored series that no longer reads.
pub fn open_tasks(
    store: &Store,
    now: DateTime<Utc>,
    floating: Tz,
) -> Result<Vec<TaskView>, EngineError> {
    let floating = crate::meta::database_zone(store, floating)?;
    let mut out = Vec::new();
    for c in store.calendars()? {
        let rows = store.events_of(c.id)?;
        // One series decoded at a time (rows come by UID): a whole calendar
        // decoded at once is a peak of memory that the desktop app's
        // thread keeps after the call (docs/benchmarks.md, "app memory").
        for rows in rows.chunk_by(|a, b| a.uid == b.uid) {
            let cal = crate::series::decode(rows, &c.name, &Limits::default())?;
            for master in cal.events.iter().filter(|e| e.recurrence_id.is_none()) {
                let Some(todo) = &master.todo else { continue };
                let series = one_series(&cal, &master.uid);
                let view = |due: Option<Moment>, occurrence: Option<String>, ev: &Event| {
                    let instant = due.map(|m| m.instant);
                    TaskView {
                        calendar: c.name.clone(),
                        uid: master.uid.clone(),
                        summary: ev.summary.clone(),
                        due: instant,
                        due_date: due.and_then(|m| m.date),
                        occurrence,
                        priority: ev.todo.as_ref().and_then(|t| t.priority),
                        percent: ev.todo.as_ref().and_then(|t| t.percent),
                        // A task due on a date is overdue from the next day.
                        overdue: match due {
                            Some(Moment { date: Some(d), .. }) => {
                                d < now.with_timezone(&floating).date_naive()
                            }
                            _ => instant.is_some_and(|d| d < now),
                        },
                    }
                };
                if todo.is_undated() {
                    if !master.is_closed_task() {
                        out.push(view(None, None, master));
                    }
                } else if master.is_recurring() {
                    let cur = current(&series, now, floating).map_err(|source| {
                        EngineError::Calendar {
                            calendar: c.name.clone(),
                            uid: master.uid.clone(),
                            source,
                        }
                    })?;
                    if let Some(o) = cur {
                        let occ = o.recurrence_id.as_ref().unwrap_or(&o.start);
                        out.push(view(Some(due_of(&o)), Some(occurrence_text(occ)), o.event));
                    }
                } else if !master.is_closed_task() {
                    let o = kairos_core::query::occurrences(
                        &series,
                        DateTime::<Utc>::MIN_UTC,
                        DateTime::<Utc>::MAX_UTC,
                        floating,
                        &Limits::default(),
                    )
                    .ok()
                    .and_then(|v| v.first().map(due_of));
                    out.push(view(o, None, master));
                }
            }
        }
    }
    out.sort_by(|a, b| {
        let due = |t: &TaskView| (t.due.is_none(), t.due);
        let prio = |t: &TaskView| t.priority.unwrap_or(10);
        (due(a), prio(a), &a.summary, &a.uid).cmp(&(due(b), prio(b), &b.summary, &b.uid))
    });
    Ok(out)
}

/// Moment `m` written like `like`: a date, or a wall time in `like`'s zone.
fn when_like(m: &Moment, like: When, floating: Tz) -> When {
    match (m.date, like) {
        (Some(d), _) => When::Date(d),
        (None, When::DateTime { zone, .. }) => When::DateTime {
            local: local_of(m.instant, zone, floating),
            zone,
        },
        (None, When::Date(_)) => When::Date(local_of(m.instant, like.zone(), floating).date()),
    }
}

/// Marks task `uid` done at `now` (in calendar `calendar` when given): a
/// single task as a whole, a recurring one's current occurrence by an
/// override (`RECURRENCE-ID`, `STATUS:COMPLETED`). Recorded for sync; its
/// pending reminders are dropped and shown ones acknowledged, in one
/// transaction.
///
/// # Errors
/// [`TaskError`].
pub fn done(
    store: &mut Store,
    uid: &str,
    calendar: Option<&str>,
    now: DateTime<Utc>,
    horizon: Duration,
    floating: Tz,
) -> Result<Done, TaskError> {
    let zone = crate::meta::database_zone(store, floating)?;
    let mut found = Vec::new();
    for c in store.calendars()? {
        if calendar.is_some_and(|n| n != c.name) {
            continue;
        }
        let cal = stored(store, c.id, &c.name)?;
        let series = one_series(&cal, uid);
        if series.events.iter().any(|e| e.todo.is_some()) {
            found.push((c.name, series));
        }
    }
    let (name, mut series) = match found.len() {
        0 => return Err(TaskError::NotFound(uid.to_owned())),
        1 => found.remove(0),
        _ => {
            let names: Vec<String> = found.into_iter().map(|(n, _)| n).collect();
            return Err(TaskError::Ambiguous {
                uid: uid.to_owned(),
                calendars: names.join(", "),
            });
        }
    };
    let Some(master) = series
        .events
        .iter()
        .find(|e| e.recurrence_id.is_none())
        .cloned()
    else {
        return Err(TaskError::NotFound(uid.to_owned()));
    };
    let mark = |e: &mut Event| {
        e.status = Some("COMPLETED".into());
        if let Some(t) = e.todo.as_mut() {
            t.completed = Some(now);
            t.percent = Some(100);
        }
    };
    let mut occurrence = None;
    if master.is_recurring() {
        let cur = current(&series, now, zone).map_err(|source| EngineError::Calendar {
            calendar: name.clone(),
            uid: uid.to_owned(),
            source,
        })?;
        let Some(o) = cur else {
            return Err(TaskError::AlreadyDone(uid.to_owned()));
        };
        let orig = o.recurrence_id.unwrap_or(o.start);
        let rid = when_like(&orig, master.start, zone);
        occurrence = Some(occurrence_text(&orig));
        let mut ov = o.event.clone();
        if ov.recurrence_id.is_none() {
            ov.recurrence_id = Some(rid);
            ov.this_and_future = false;
            ov.start = when_like(&o.start, master.start, zone);
            ov.end = match (master.end, o.end) {
                (Some(End::At(w)), Some(e)) => Some(End::At(when_like(&e, w, zone))),
                (end, _) => end,
            };
            ov.rrules.clear();
            ov.exrules.clear();
            ov.rdates.clear();
            ov.rdate_periods.clear();
            ov.exdates.clear();
        }
        mark(&mut ov);
        series
            .events
            .retain(|e| e.recurrence_id.is_none() || e.recurrence_id != ov.recurrence_id);
        series.events.push(ov);
    } else {
        if master.is_closed_task() {
            return Err(TaskError::AlreadyDone(uid.to_owned()));
        }
        for e in series
            .events
            .iter_mut()
            .filter(|e| e.recurrence_id.is_none())
        {
            mark(e);
        }
    }
    let before = pending_of(store, &name, uid)?;
    let (_, withdrawals) = replace(store, &name, uid, &series.events, now, horizon, floating)?;
    Ok(Done {
        dropped: before.saturating_sub(pending_of(store, &name, uid)?),
        calendar: name,
        uid: uid.to_owned(),
        occurrence,
        withdrawals,
    })
}

/// How many reminders of task `uid` in calendar `name` are pending.
fn pending_of(store: &Store, name: &str, uid: &str) -> Result<usize, StoreError> {
    let mut n = 0;
    for c in store.calendars()?.into_iter().filter(|c| c.name == name) {
        n += store
            .instances_of_event(c.id, uid)?
            .iter()
            .filter(|i| i.state == State::Pending)
            .count();
    }
    Ok(n)
}
