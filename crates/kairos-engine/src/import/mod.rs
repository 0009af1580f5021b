//! Putting calendar data into the store and keeping instances in step with it:
//! an edited event's pending instances are recomputed in the same
//! transaction; delivered ones stay (and, having the same key when only text
//! changed, are never sent again).
//!
//! One path for every change of a series: [`write_series`] (in the caller's
//! transaction) is what a file import, an edit in the app and an op from
//! another device all end in. Local changes are also recorded for sync
//! ([`crate::sync::record`]) in the same transaction.

use std::collections::BTreeSet;

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use kairos_core::Limits;
use kairos_core::model::{Calendar, Event};
use kairos_core::workdays::WorkTime;
use kairos_proto::Body;
use kairos_store::{CalendarId, NewInstance, State, Store, StoreError, Tx};

use crate::channel::Withdrawal;
use crate::error::EngineError;
use crate::materialise::{CalendarLabel, Planned, fingerprint, plan_with};
pub use crate::meta::{MATERIALISED_UNTIL, database_zone, materialised_until};
use crate::sync::{acks, record};

mod file;
mod replace;
pub use file::{Mode, holds, import, import_with};
pub(crate) use file::{holds_in, import_at};
pub use replace::replace_series;
pub(crate) use replace::{replace, replace_at};

/// What an import changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// Event components (masters and overrides) read.
    pub events: usize,
    /// Of those, new or changed.
    pub changed: usize,
    /// Pending instances dropped because their event changed.
    pub dropped: usize,
    /// Instances added.
    pub scheduled: usize,
    /// Series deleted because the file no longer has them
    /// ([`Mode::Replace`] only).
    pub deleted: usize,
}

/// When and how a change is written, and where it came from (what its
/// sync op says: [`crate::sync::caldav`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct At {
    /// Now.
    pub now: DateTime<Utc>,
    /// The engine's horizon.
    pub horizon: Duration,
    /// The zone for floating times.
    pub floating: Tz,
    /// A change made here or one fetched from a CalDAV server.
    pub origin: crate::sync::caldav::Origin,
}

/// Where a series is written and how its reminders are planned.
#[derive(Debug, Clone)]
pub(crate) struct Target<'a> {
    /// The calendar's row.
    pub cal_id: CalendarId,
    /// Its uid and name.
    pub label: CalendarLabel<'a>,
    /// Now.
    pub now: DateTime<Utc>,
    /// Reminders are planned up to here (the materialised horizon).
    pub until: DateTime<Utc>,
    /// The zone of floating times.
    pub floating: Tz,
    /// The calendar's working time (for alarms with a working-day rule).
    pub work: WorkTime,
}

impl<'a> Target<'a> {
    /// The target for calendar `cal` of `store` at `now`.
    pub(crate) fn of(
        store: &Store,
        cal_id: CalendarId,
        label: CalendarLabel<'a>,
        now: DateTime<Utc>,
        horizon: Duration,
        floating: Tz,
    ) -> Result<Self, EngineError> {
        let until = materialised_until(store)?.unwrap_or(now + horizon).max(now);
        Ok(Self {
            cal_id,
            label,
            now,
            until,
            floating: database_zone(store, floating)?,
            work: store.read(|r| crate::workdays::work_time(r, cal_id, now, until))?,
        })
    }

    fn plan(&self, cal: &Calendar, uid: &str) -> Result<Vec<Planned>, EngineError> {
        if self.until <= self.now || cal.events.is_empty() {
            return Ok(Vec::new());
        }
        plan_with(
            self.label,
            cal,
            self.now,
            self.until,
            self.floating,
            &Limits::default(),
            &self.work,
        )
        .map_err(|source| EngineError::Calendar {
            calendar: self.label.name.to_owned(),
            uid: uid.to_owned(),
            source,
        })
    }
}

/// What [`write_series`] did.
#[derive(Debug, Default)]
pub(crate) struct Written {
    /// Pending instances dropped.
    pub dropped: usize,
    /// Instances added.
    pub scheduled: usize,
    /// Shown reminders of tasks now done, to be taken back.
    pub withdrawals: Vec<Withdrawal>,
}

/// Replaces every component (master and overrides) of series `uid` with
/// `comps` (all of that `UID`; empty deletes the series) and recomputes its
/// pending instances, in the caller's transaction. Delivered instances
/// whose schedule did not change keep their keys and are not sent again;
/// those of a task now done are acknowledged.
///
/// # Errors
/// Store failures; the core's expansion limits.
pub(crate) fn write_series(
    tx: &Tx<'_>,
    t: &Target<'_>,
    uid: &str,
    comps: &[Event],
) -> Result<Written, EngineError> {
    let written = put_series(tx, t, vec![(uid, comps.to_vec())])?;
    finish(tx, t)?;
    Ok(written)
}

/// [`write_series`] for several series of one calendar (each `UID` with
/// all its components), without [`finish`]: a file's changed series are
/// planned together and their reminders rescheduled in one batch.
pub(crate) fn put_series(
    tx: &Tx<'_>,
    t: &Target<'_>,
    series: Vec<(&str, Vec<Event>)>,
) -> Result<Written, EngineError> {
    let label = match series.as_slice() {
        [(uid, _)] => *uid,
        _ => "(file)",
    };
    // Stored as every replica reads it (see `series::settle`), and planned
    // from what is stored, so the keys are the ones a later materialise
    // (or another device) computes. Each series is a run of `cal.events`.
    let mut runs = Vec::with_capacity(series.len());
    let mut cal = one_calendar(&[]);
    for (uid, comps) in series {
        let from = cal.events.len();
        cal.events
            .extend(comps.into_iter().map(crate::series::settle));
        runs.push((uid, from..cal.events.len()));
    }
    let planned = t.plan(&cal, label)?;
    for (uid, run) in &runs {
        tx.delete_event(t.cal_id, uid, None)?;
        for ev in &cal.events[run.clone()] {
            let rid = crate::series::rid_key(ev);
            tx.put_event(
                t.cal_id,
                uid,
                &rid,
                &crate::series::encode(ev),
                fingerprint(ev),
                t.now,
            )?;
        }
    }
    let uids: BTreeSet<&str> = runs.iter().map(|(uid, _)| *uid).collect();
    let (dropped, scheduled) = reschedule(tx, t.cal_id, &uids, &planned, t.now)?;
    let mut withdrawals = Vec::new();
    for (_, run) in runs {
        withdrawals.extend(crate::tasks::settle_closed(
            tx,
            t.cal_id,
            &cal.events[run],
            t.floating,
            t.now,
        )?);
    }
    Ok(Written {
        dropped,
        scheduled,
        withdrawals,
    })
}

/// After series of calendar `t` were written: a holiday feed that changed
/// moves every calendar's working-day reminders; the horizon is recorded.
pub(crate) fn finish(tx: &Tx<'_>, t: &Target<'_>) -> Result<(), EngineError> {
    if crate::workdays::is_holidays(tx, t.cal_id)? {
        crate::workdays::replan_all(tx, t.now, t.until, t.floating)?;
    }
    tx.meta_set(MATERIALISED_UNTIL, &t.until.to_rfc3339())?;
    Ok(())
}

fn one_calendar(comps: &[Event]) -> Calendar {
    Calendar {
        name: None,
        events: comps.to_vec(),
        extra: Vec::new(),
    }
}

/// The calendar called `name` (created, and recorded for sync, if new),
/// with its uid.
///
/// # Errors
/// Store failures.
pub fn calendar_named(
    store: &mut Store,
    name: &str,
    now: DateTime<Utc>,
) -> Result<(CalendarId, String), EngineError> {
    store.write(|tx| -> Result<_, EngineError> {
        let known = tx.calendars()?.into_iter().find(|c| c.name == name);
        if let Some(c) = known {
            return Ok((c.id, c.uid));
        }
        let id = tx.ensure_calendar(name, now)?;
        // Created just above, in this transaction.
        let Some(c) = tx.calendars()?.into_iter().find(|c| c.id == id) else {
            return Err(created_not_found(name));
        };
        record_new(tx, &c, now)?;
        Ok((c.id, c.uid))
    })
}

/// The calendar whose uid is `uid`: the one already here (made by this
/// device or received over Kairos sync), or a new one called `name` (or
/// `name (N)` when that is taken), recorded for sync.
///
/// A calendar that several devices reach on their own (the same CalDAV
/// collection) gets the same `uid` on each, so its reminders have the same
/// keys everywhere and it is one calendar, not one per device.
///
/// # Errors
/// Store failures.
pub fn calendar_with_uid(
    store: &mut Store,
    uid: &str,
    name: &str,
    now: DateTime<Utc>,
) -> Result<kairos_store::Calendar, EngineError> {
    store.write(|tx| -> Result<_, EngineError> {
        if let Some(c) = tx.calendar_by_uid(uid)? {
            return Ok(c);
        }
        tx.ensure_calendar_uid(uid, name, now)?;
        let Some(c) = tx.calendar_by_uid(uid)? else {
            return Err(created_not_found(name));
        };
        record_new(tx, &c, now)?;
        Ok(c)
    })
}

/// Records calendar `c`, just made here, for sync.
fn record_new(
    tx: &Tx<'_>,
    c: &kairos_store::Calendar,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    record(
        tx,
        Body::CalendarPut {
            calendar: c.uid.clone(),
            name: c.name.clone(),
            color: c.color.clone(),
        },
        now,
    )
    .map(|_| ())
}

/// A calendar made in this transaction that cannot be read back.
fn created_not_found(name: &str) -> EngineError {
    EngineError::Store(StoreError::NotFound {
        path: String::new(),
        what: format!("calendar {name:?}"),
    })
}

/// Drops the pending instances of `uids` and inserts their planned ones
/// (those of reminders acknowledged already follow their record at once).
fn reschedule(
    tx: &Tx<'_>,
    cal_id: CalendarId,
    uids: &BTreeSet<&str>,
    planned: &[Planned],
    now: DateTime<Utc>,
) -> Result<(usize, usize), StoreError> {
    let mut dropped = 0;
    // A snooze is no planned instance: an edit of the series keeps it (it
    // is put back below while the reminder it carries is still snoozed).
    let mut snoozes = Vec::new();
    for uid in uids {
        // Not for a series deleted (no components left).
        if !tx.series_events(cal_id, uid)?.is_empty() {
            snoozes.extend(
                tx.instances_of_event(cal_id, uid)?
                    .into_iter()
                    .filter(|i| i.snooze_of.is_some() && i.state == State::Pending),
            );
        }
        dropped +=
            tx.delete_pending_for_event(cal_id, uid, None, "event changed: recomputed", now)?;
    }
    let new: Vec<NewInstance> = planned
        .iter()
        .filter(|p| uids.contains(p.uid.as_str()))
        .map(|p| p.instance(cal_id))
        .collect();
    let added = tx.insert_instances(&new, now)?;
    acks::enforce_on_new(tx, new.iter().map(|i| &i.key), now)?;
    let mut kept = Vec::new();
    for i in snoozes {
        let Some(base) = i.snooze_of.clone() else {
            continue;
        };
        if tx.get(&base)?.is_some_and(|b| b.state == State::Snoozed) {
            kept.push(NewInstance {
                key: i.key,
                calendar: i.calendar,
                event_uid: i.event_uid,
                occurrence: i.occurrence,
                alarm: i.alarm,
                repetition: i.repetition,
                rule_version: i.rule_version,
                trigger_at: i.trigger_at,
                snooze_of: i.snooze_of,
                payload: i.payload,
            });
        }
    }
    tx.insert_instances(&kept, now)?;
    Ok((dropped, added))
}
