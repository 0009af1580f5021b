//! Working time in the engine (issue #11 §3): each calendar's
//! [`WorkTime`] (its working week; holidays from every calendar marked as a
//! holiday feed), and re-planning when either changes.
//!
//! A reminder a working-day rule moves keeps its key (the key names the
//! alarm of the occurrence, not when it goes off), so when the holidays or a
//! week change, a pending instance is *moved* (same row, new trigger), never
//! inserted a second time; one already delivered stays delivered.
//!
//! On a paired database the settings are account settings: a change is
//! recorded as a `calendar.work` op (its own last-writer-wins register,
//! `work/UID`) and one from another device is applied here by [`set_in`],
//! re-planning the same way. The holiday feed's events sync like any
//! calendar's.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;
use kairos_core::Limits;
use kairos_core::workdays::{self, MON_FRI, WorkTime};
use kairos_store::{CalendarId, NewInstance, Reader, Store, StoreError, Tx};

use crate::error::EngineError;
use crate::materialise::{CalendarLabel, plan_with};
use crate::meta::{database_zone, materialised_until};

pub use kairos_store::WorkSettings;

/// Every holiday that a rule planning triggers in `[from, to)` may consult:
/// the all-day dates of every holiday calendar, with the rules' reach added.
///
/// # Errors
/// Store failures; a holiday feed beyond the core's limits.
pub fn holiday_dates(
    r: &Reader<'_>,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Result<BTreeSet<NaiveDate>, EngineError> {
    let mut out = BTreeSet::new();
    let (from, to) = (from - workdays::max_move(), to + workdays::max_move());
    for s in r.work_settings()?.into_iter().filter(|s| s.holidays) {
        let feed = crate::series::decode(&r.events_of(s.id)?, &s.name, &Limits::default())?;
        let dates = workdays::holidays(&feed, from, to, &Limits::default()).map_err(|source| {
            EngineError::Calendar {
                calendar: s.name.clone(),
                uid: "(holidays)".into(),
                source,
            }
        })?;
        out.extend(dates);
    }
    Ok(out)
}

/// Calendar `cal`'s working time for planning triggers in `[from, to)`.
///
/// # Errors
/// As [`holiday_dates`].
pub fn work_time(
    r: &Reader<'_>,
    cal: CalendarId,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Result<WorkTime, EngineError> {
    Ok(WorkTime {
        week: week_of(&r.work_settings()?, cal),
        holidays: holiday_dates(r, from, to)?,
    })
}

/// Calendar `cal`'s working week among `weeks` (Monday–Friday if unset).
pub(crate) fn week_of(weeks: &[WorkSettings], cal: CalendarId) -> u8 {
    weeks
        .iter()
        .find(|w| w.id == cal)
        .map_or(MON_FRI, |w| w.week)
}

/// Is `cal` a holiday feed?
pub(crate) fn is_holidays(r: &Reader<'_>, cal: CalendarId) -> Result<bool, StoreError> {
    Ok(r.work_settings()?.iter().any(|s| s.id == cal && s.holidays))
}

/// Re-plans the reminders of `cal`'s series that have a working-day rule
/// over `[now, until)` under `work`: a pending instance whose trigger moved
/// is moved (same key); one that moved past `until` is removed (the next
/// materialisation finds it again); a new one is inserted. Snoozes and
/// instances in any other state are left alone. Returns how many changed.
fn replan(
    tx: &Tx<'_>,
    cal: &WorkSettings,
    work: &WorkTime,
    now: DateTime<Utc>,
    until: DateTime<Utc>,
    floating: Tz,
) -> Result<usize, EngineError> {
    let mut parsed = crate::series::decode(&tx.events_of(cal.id)?, &cal.name, &Limits::default())?;
    let ruled: BTreeSet<String> = parsed
        .events
        .iter()
        .filter(|e| e.alarms.iter().any(|a| workdays::rule_text(a).is_some()))
        .map(|e| e.uid.clone())
        .collect();
    parsed.events.retain(|e| ruled.contains(&e.uid));
    if parsed.events.is_empty() || until <= now {
        return Ok(0);
    }
    let label = CalendarLabel {
        uid: &cal.uid,
        name: &cal.name,
    };
    // From a rule's reach before now: a reminder moved into the past is
    // moved there (and fires now, late) rather than lost.
    let from = now - workdays::max_move();
    let planned = plan_with(
        label,
        &parsed,
        from,
        until,
        floating,
        &Limits::default(),
        work,
    )
    .map_err(|source| EngineError::Calendar {
        calendar: cal.name.clone(),
        uid: "(working days)".into(),
        source,
    })?;
    let mut pending = BTreeMap::new();
    for uid in &ruled {
        for i in tx.instances_of_event(cal.id, uid)? {
            if i.state == kairos_store::State::Pending && i.snooze_of.is_none() {
                pending.insert(i.key, i.trigger_at);
            }
        }
    }
    const WHY: &str = "working time changed";
    let mut changed = 0;
    let mut new: Vec<NewInstance> = Vec::new();
    let mut seen = BTreeSet::new();
    for p in &planned {
        seen.insert(p.key.as_str());
        if pending.contains_key(&p.key) {
            changed += usize::from(tx.move_pending(&p.key, p.trigger, WHY, now)?);
        } else if p.trigger >= now {
            new.push(p.instance(cal.id));
        }
    }
    for key in pending.keys().filter(|k| !seen.contains(k.as_str())) {
        changed += usize::from(tx.delete_pending(key, WHY, now)?);
    }
    changed += tx.insert_instances(&new, now)?;
    crate::sync::acks::enforce_on_new(tx, new.iter().map(|i| &i.key), now)?;
    Ok(changed)
}

/// Re-plans every calendar (after a holiday feed changed), in `tx`.
///
/// # Errors
/// Store failures; the core's limits.
pub(crate) fn replan_all(
    tx: &Tx<'_>,
    now: DateTime<Utc>,
    until: DateTime<Utc>,
    floating: Tz,
) -> Result<usize, EngineError> {
    let holidays = holiday_dates(tx, now, until)?;
    let mut changed = 0;
    for cal in tx.work_settings()? {
        let work = WorkTime {
            week: cal.week,
            holidays: holidays.clone(),
        };
        changed += replan(tx, &cal, &work, now, until, floating)?;
    }
    Ok(changed)
}

/// Sets calendar `name`'s working week and/or holiday flag (`None`: keep)
/// and re-plans what that changes, in one transaction: every calendar when
/// the holiday flag changed, else this one. On a paired database a change
/// is recorded for sync (`calendar.work`, an account setting), so it
/// reaches the other devices and moves their reminders too. Returns the
/// new settings and how many pending reminders changed here.
///
/// # Errors
/// No calendar of that name (NotFound); an empty week; store failures.
pub fn set_work_time(
    store: &mut Store,
    name: &str,
    week: Option<u8>,
    holidays: Option<bool>,
    now: DateTime<Utc>,
    fallback_floating: Tz,
) -> Result<(WorkSettings, usize), EngineError> {
    let floating = database_zone(store, fallback_floating)?;
    let until = materialised_until(store)?.unwrap_or(now).max(now);
    store.write(|tx| -> Result<_, EngineError> {
        let Some(old) = tx.work_settings()?.into_iter().find(|s| s.name == name) else {
            return Err(EngineError::Store(StoreError::NotFound {
                path: String::new(),
                what: format!("calendar {name:?}"),
            }));
        };
        let (new, changed) = apply(
            tx,
            &old,
            week.unwrap_or(old.week),
            holidays.unwrap_or(old.holidays),
            now,
            until,
            floating,
        )?;
        if (new.week, new.holidays) != (old.week, old.holidays) {
            crate::sync::record(tx, work_op(&new), now)?;
        }
        Ok((new, changed))
    })
}

/// The `calendar.work` op of these settings.
fn work_op(s: &WorkSettings) -> kairos_proto::Body {
    kairos_proto::Body::CalendarWork {
        calendar: s.uid.clone(),
        week: s.week,
        holidays: s.holidays,
    }
}

/// Records calendar `cal`'s working time for sync unless it is the
/// default (Monday–Friday, not a holiday feed): what joining an account
/// sends. Returns whether an op was recorded.
///
/// # Errors
/// Store failures.
pub(crate) fn record_if_set(
    tx: &Tx<'_>,
    cal: CalendarId,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    match tx.work_settings()?.into_iter().find(|s| s.id == cal) {
        Some(s) if s.week != MON_FRI || s.holidays => {
            Ok(crate::sync::record(tx, work_op(&s), now)?.is_some())
        }
        _ => Ok(false),
    }
}

/// Sets calendar `cal`'s working time from another device (`calendar.work`
/// won its register) and re-plans, in the caller's transaction; records
/// nothing. Returns how many pending reminders changed.
///
/// # Errors
/// A week outside 1–127 (kairos-proto refuses such an op first); store
/// failures.
pub(crate) fn set_in(
    tx: &Tx<'_>,
    cal: kairos_store::Calendar,
    week: u8,
    holidays: bool,
    now: DateTime<Utc>,
    until: DateTime<Utc>,
    floating: Tz,
) -> Result<usize, EngineError> {
    let Some(old) = tx.work_settings()?.into_iter().find(|s| s.id == cal.id) else {
        return Ok(0);
    };
    Ok(apply(tx, &old, week, holidays, now, until, floating)?.1)
}

/// Stores `week`/`holidays` for `old`'s calendar and re-plans: every
/// calendar when the holiday flag changed, else this one.
fn apply(
    tx: &Tx<'_>,
    old: &WorkSettings,
    week: u8,
    holidays: bool,
    now: DateTime<Utc>,
    until: DateTime<Utc>,
    floating: Tz,
) -> Result<(WorkSettings, usize), EngineError> {
    let new = WorkSettings {
        week,
        holidays,
        ..old.clone()
    };
    tx.set_work_settings(new.id, new.week, new.holidays)?;
    let changed = if new.holidays != old.holidays {
        replan_all(tx, now, until, floating)?
    } else if new.week != old.week {
        let work = WorkTime {
            week: new.week,
            holidays: holiday_dates(tx, now, until)?,
        };
        replan(tx, &new, &work, now, until, floating)?
    } else {
        0
    };
    Ok((new, changed))
}
