//! Putting calendar data into the store and keeping instances in step with it:
//! an edited event's pending instances are recomputed in the same
//! transaction; delivered ones stay (and, having the same key when only text
//! changed, are never sent again).

use std::collections::BTreeSet;

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use kairos_core::Limits;
use kairos_core::model::{Calendar, Event, When, Zone};
use kairos_store::{NewInstance, Store, StoreError};

use crate::engine::EngineError;
use crate::materialise::{fingerprint, plan};

/// Meta key: instances exist for every trigger before this instant.
pub const MATERIALISED_UNTIL: &str = "materialised_until";

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
}

/// One event component as stored: a `VEVENT` block of iCalendar text.
fn component_text(ev: &Event) -> String {
    let one = Calendar {
        name: None,
        events: vec![ev.clone()],
        extra: Vec::new(),
    };
    // DTSTAMP is kept from the source when it has one; otherwise a fixed
    // stamp, so that re-importing the same file changes nothing.
    let text = kairos_core::ics::write_calendar(&one, DateTime::<Utc>::UNIX_EPOCH);
    let start = text.find("BEGIN:VEVENT").unwrap_or(0);
    let end = text
        .rfind("END:VEVENT")
        .map_or(text.len(), |i| i + "END:VEVENT\r\n".len());
    text[start..end.min(text.len())].to_owned()
}

/// A `RECURRENCE-ID` as the store keys it: `YYYYMMDD`, or the local time
/// with its zone (`Europe/Berlin:20260310T090000`, `…Z`, or floating).
fn rid_text(w: &When) -> String {
    match w {
        When::Date(d) => d.format("%Y%m%d").to_string(),
        When::DateTime { local, zone } => {
            let t = local.format("%Y%m%dT%H%M%S");
            match zone {
                Zone::Utc => format!("{t}Z"),
                Zone::Floating => t.to_string(),
                Zone::Tz(tz) => format!("{}:{t}", tz.name()),
                // Stored as UTC, as kairos_core's export writes it.
                Zone::Custom(c) => format!("{}Z", c.resolve(*local).format("%Y%m%dT%H%M%S")),
            }
        }
    }
}

/// Meta's "materialised until", if set.
///
/// # Errors
/// Store failures.
pub fn materialised_until(store: &Store) -> Result<Option<DateTime<Utc>>, StoreError> {
    Ok(store
        .meta_get(MATERIALISED_UNTIL)?
        .and_then(|v| DateTime::parse_from_rfc3339(&v).ok())
        .map(|t| t.with_timezone(&Utc)))
}

/// The zone floating times are planned in: the database's
/// ([`crate::engine::FLOATING_ZONE`], set by the desktop app) when it has one,
/// else `fallback` (`--tz`, the system's). Every planner of this database
/// then agrees, so one alarm never gets two keys from two zones.
///
/// # Errors
/// Store failures.
pub fn database_zone(store: &Store, fallback: Tz) -> Result<Tz, EngineError> {
    Ok(zone_named(
        store.meta_get(crate::engine::FLOATING_ZONE)?,
        fallback,
    ))
}

/// The zone a `FLOATING_ZONE` value names, else `fallback`.
pub(crate) fn zone_named(value: Option<String>, fallback: Tz) -> Tz {
    value.and_then(|z| z.parse().ok()).unwrap_or(fallback)
}

/// Stores `cal`'s events under calendar `name` and schedules their
/// reminders from `now` up to the materialisation horizon.
///
/// # Errors
/// Store failures; the core's expansion limits.
pub fn import(
    store: &mut Store,
    name: &str,
    cal: &Calendar,
    now: DateTime<Utc>,
    horizon: Duration,
    floating: Tz,
) -> Result<ImportReport, EngineError> {
    let limits = Limits::default();
    let floating = database_zone(store, floating)?;
    let until = materialised_until(store)?.unwrap_or(now + horizon).max(now);
    let planned = if until > now {
        plan(name, cal, now, until, floating, &limits)
    } else {
        Ok(Vec::new())
    }
    .map_err(|source| EngineError::Calendar {
        calendar: name.to_owned(),
        uid: "(file)".into(),
        source,
    })?;
    let mut report = ImportReport {
        events: cal.events.len(),
        ..ImportReport::default()
    };
    store.write(|tx| -> Result<(), EngineError> {
        let cal_id = tx.ensure_calendar(name, now)?;
        let mut changed_uids = BTreeSet::new();
        for ev in &cal.events {
            let rid = ev.recurrence_id.as_ref().map(rid_text).unwrap_or_default();
            if tx.put_event(
                cal_id,
                &ev.uid,
                &rid,
                &component_text(ev),
                fingerprint(ev),
                now,
            )? {
                report.changed += 1;
                changed_uids.insert(ev.uid.as_str());
            }
        }
        let (dropped, scheduled) = reschedule(tx, cal_id, &changed_uids, &planned, now)?;
        report.dropped = dropped;
        report.scheduled = scheduled;
        tx.meta_set(MATERIALISED_UNTIL, &until.to_rfc3339())?;
        Ok(())
    })?;
    Ok(report)
}

/// Drops the pending instances of `uids` and inserts their planned ones.
fn reschedule(
    tx: &kairos_store::Tx<'_>,
    cal_id: kairos_store::CalendarId,
    uids: &BTreeSet<&str>,
    planned: &[crate::materialise::Planned],
    now: DateTime<Utc>,
) -> Result<(usize, usize), StoreError> {
    let mut dropped = 0;
    for uid in uids {
        dropped +=
            tx.delete_pending_for_event(cal_id, uid, None, "event changed: recomputed", now)?;
    }
    let new: Vec<NewInstance> = planned
        .iter()
        .filter(|p| uids.contains(p.uid.as_str()))
        .map(|p| NewInstance {
            key: p.key.clone(),
            calendar: cal_id,
            event_uid: p.uid.clone(),
            occurrence: p.occurrence.clone(),
            alarm: p.alarm.clone(),
            repetition: p.repetition,
            rule_version: p.fingerprint,
            trigger_at: p.trigger,
            snooze_of: None,
            payload: serde_json::to_string(&p.payload).unwrap_or_else(|_| "{}".into()),
        })
        .collect();
    Ok((dropped, tx.insert_instances(&new, now)?))
}

/// Replaces every component (master and overrides) of series `uid` in
/// calendar `name` with `comps` (all of that `UID`; empty deletes the
/// series), and recomputes its pending instances, in one transaction.
/// Delivered instances whose schedule did not change keep their keys and
/// are not sent again.
///
/// # Errors
/// Store failures; the core's expansion limits; a component of another UID.
#[allow(clippy::too_many_arguments)]
pub fn replace_series(
    store: &mut Store,
    name: &str,
    uid: &str,
    comps: &[Event],
    now: DateTime<Utc>,
    horizon: Duration,
    floating: Tz,
) -> Result<ImportReport, EngineError> {
    let limits = Limits::default();
    let floating = database_zone(store, floating)?;
    let cal = Calendar {
        name: None,
        events: comps.to_vec(),
        extra: Vec::new(),
    };
    let until = materialised_until(store)?.unwrap_or(now + horizon).max(now);
    let planned = if until > now && !comps.is_empty() {
        plan(name, &cal, now, until, floating, &limits)
    } else {
        Ok(Vec::new())
    }
    .map_err(|source| EngineError::Calendar {
        calendar: name.to_owned(),
        uid: uid.to_owned(),
        source,
    })?;
    let mut report = ImportReport {
        events: comps.len(),
        changed: comps.len(),
        ..ImportReport::default()
    };
    store.write(|tx| -> Result<(), EngineError> {
        let cal_id = tx.ensure_calendar(name, now)?;
        tx.delete_event(cal_id, uid, None)?;
        for ev in comps {
            let rid = ev.recurrence_id.as_ref().map(rid_text).unwrap_or_default();
            tx.put_event(cal_id, uid, &rid, &component_text(ev), fingerprint(ev), now)?;
        }
        let uids = BTreeSet::from([uid]);
        let (dropped, scheduled) = reschedule(tx, cal_id, &uids, &planned, now)?;
        report.dropped = dropped;
        report.scheduled = scheduled;
        tx.meta_set(MATERIALISED_UNTIL, &until.to_rfc3339())?;
        Ok(())
    })?;
    Ok(report)
}
