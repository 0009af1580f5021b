//! A whole calendar file into one calendar: added to what is there
//! ([`Mode::Merge`], `kairos import`) or replacing it ([`Mode::Replace`],
//! `kairos import --replace` and every subscription refresh: one path).

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use kairos_core::Limits;
use kairos_core::model::{Calendar, Event};
use kairos_proto::Body;
use kairos_store::{Form, Store, StoredEvent};

use super::{At, ImportReport, MATERIALISED_UNTIL, Target, calendar_named, finish, put_series};
use crate::error::EngineError;
use crate::materialise::{CalendarLabel, fingerprint};
use crate::series::{encode, rid_key, settle};
use crate::sync::caldav::Origin;
use crate::sync::record_as;

/// What an import does with what the calendar already holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Adds new events and updates changed ones; nothing is deleted.
    #[default]
    Merge,
    /// The file becomes the calendar's content: as `Merge`, and every
    /// series (or override) the file no longer has is deleted, its pending
    /// reminders dropped, and the deletion recorded for sync. Unchanged
    /// series are not touched (their reminders keep their keys and states).
    Replace,
}

/// [`import_with`] in [`Mode::Merge`].
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
    import_with(store, name, cal, Mode::Merge, now, horizon, floating)
}

/// Stores `cal`'s events under calendar `name` (created if needed) and
/// schedules their reminders from `now` up to the materialisation horizon,
/// in one transaction. Each series that changed (or, replacing, went) is
/// recorded for sync. A changed series' pending reminders are recomputed:
/// an unchanged alarm keeps its key, a moved one gets the new time (and
/// key), acknowledged ones stay acknowledged. A shown reminder of a task
/// the file marks done is acknowledged; the engine that showed it takes it
/// back when told the database changed (`engine/shown.rs`).
///
/// Each changed series goes through [`put_series`], the one write path an
/// edit and a synced op take too.
///
/// # Errors
/// Store failures; the core's expansion limits.
pub fn import_with(
    store: &mut Store,
    name: &str,
    cal: &Calendar,
    mode: Mode,
    now: DateTime<Utc>,
    horizon: Duration,
    floating: Tz,
) -> Result<ImportReport, EngineError> {
    let at = At {
        now,
        horizon,
        floating,
        origin: Origin::Here,
    };
    import_at(store, name, cal, mode, at)
}

/// [`import_with`], its changes recorded as coming from `at.origin`.
pub(crate) fn import_at(
    store: &mut Store,
    name: &str,
    cal: &Calendar,
    mode: Mode,
    at: At,
) -> Result<ImportReport, EngineError> {
    let At {
        now,
        horizon,
        floating,
        origin,
    } = at;
    // Rows still in the text form of schema 8 (no engine host has run
    // since the upgrade) would never compare equal to the file's typed
    // components: every series would count as changed and be re-planned
    // from now, dropping what fell due while nothing ran. Convert first
    // (a no-op once done); a row that does not read stays text.
    crate::series::convert_legacy(store)?;
    let (cal_id, cal_uid) = calendar_named(store, name, now)?;
    let label = CalendarLabel {
        uid: &cal_uid,
        name,
    };
    let t = Target::of(store, cal_id, label, now, horizon, floating)?;
    // The file's series, each component as it will be stored.
    let mut file: BTreeMap<&str, Vec<Event>> = BTreeMap::new();
    for ev in &cal.events {
        file.entry(&ev.uid).or_default().push(settle(ev.clone()));
    }
    let mut report = ImportReport {
        events: cal.events.len(),
        ..ImportReport::default()
    };
    store.write(|tx| -> Result<(), EngineError> {
        // By UID, then master first: each series one run of rows.
        let rows = tx.events_of(cal_id)?;
        let stored: BTreeMap<&str, &[StoredEvent]> = rows
            .chunk_by(|a, b| a.uid == b.uid)
            .map(|run| (run[0].uid.as_str(), run))
            .collect();
        let gone_uids: Vec<&str> = stored
            .keys()
            .copied()
            .filter(|u| !file.contains_key(u))
            .collect();
        let mut written: Vec<(&str, Vec<Event>)> = Vec::new();
        for (uid, comps) in file {
            let old = stored.get(uid).copied().unwrap_or_default();
            let changed = comps.iter().filter(|ev| !is_stored(ev, old)).count();
            let rids: BTreeSet<String> = comps.iter().map(rid_key).collect();
            let others: Vec<StoredEvent> = old
                .iter()
                .filter(|r| !rids.contains(&r.recurrence_id))
                .cloned()
                .collect();
            // Replacing, an override that left the file changes its series.
            if changed == 0 && (mode == Mode::Merge || others.is_empty()) {
                continue;
            }
            report.changed += changed;
            let mut all = comps;
            if mode == Mode::Merge {
                // Merging keeps the stored components the file leaves out.
                all.extend(crate::series::decode(&others, name, &Limits::default())?.events);
            }
            written.push((uid, all));
        }
        // Already settled: as stored (the file's) or read from the store.
        let ops: Vec<(&str, String)> = written
            .iter()
            .map(|(uid, comps)| (*uid, crate::series::wire_text_of(comps)))
            .collect();
        if !written.is_empty() {
            let w = put_series(tx, &t, written)?;
            report.dropped += w.dropped;
            report.scheduled += w.scheduled;
        }
        let mut gone = Vec::new();
        if mode == Mode::Replace {
            for uid in gone_uids {
                tx.delete_event(cal_id, uid, None)?;
                report.dropped += tx.delete_pending_for_event(
                    cal_id,
                    uid,
                    None,
                    "event no longer in the calendar's source: deleted",
                    now,
                )?;
                gone.push(uid);
            }
        }
        report.deleted = gone.len();
        if ops.is_empty() && gone.is_empty() {
            tx.meta_set(MATERIALISED_UNTIL, &t.until.to_rfc3339())?;
        } else {
            finish(tx, &t)?;
        }
        for (uid, ics) in ops {
            let body = Body::SeriesPut {
                calendar: cal_uid.clone(),
                uid: uid.to_owned(),
                ics,
            };
            record_as(tx, body, now, origin)?;
        }
        for uid in gone {
            let body = Body::SeriesDelete {
                calendar: cal_uid.clone(),
                uid: uid.to_owned(),
                caldav: false,
            };
            record_as(tx, body, now, origin)?;
        }
        Ok(())
    })?;
    Ok(report)
}

/// Does calendar `name` already hold series `uid` exactly as `comps`
/// would be stored (each component, and no other)? Then writing `comps`
/// would change nothing: no op, no re-plan. (A CalDAV object another of the
/// person's devices fetched first and Kairos sync brought here.)
///
/// # Errors
/// Store failures.
pub fn holds(store: &Store, name: &str, uid: &str, comps: &[Event]) -> Result<bool, EngineError> {
    let Some(cal) = store
        .read(|r| r.calendars())?
        .into_iter()
        .find(|c| c.name == name)
    else {
        return Ok(false);
    };
    Ok(store.read(|r| holds_in(r, cal.id, uid, comps))?)
}

/// [`holds`] for calendar `cal_id`, in a read or a transaction.
pub(crate) fn holds_in(
    r: &kairos_store::Reader<'_>,
    cal_id: kairos_store::CalendarId,
    uid: &str,
    comps: &[Event],
) -> Result<bool, kairos_store::StoreError> {
    let rows = r.series_events(cal_id, uid)?;
    Ok(rows.len() == comps.len() && comps.iter().all(|ev| is_stored(&settle(ev.clone()), &rows)))
}

/// Is `ev` stored among `rows` exactly as it would be written now?
fn is_stored(ev: &Event, rows: &[StoredEvent]) -> bool {
    let rid = rid_key(ev);
    rows.iter().any(|r| {
        r.recurrence_id == rid
            && r.form == Form::Typed
            && r.rule_version == fingerprint(ev)
            && r.body == encode(ev)
    })
}
