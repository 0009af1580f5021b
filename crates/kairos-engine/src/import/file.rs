//! A whole calendar file into one calendar: added to what is there
//! ([`Mode::Merge`], `kairos import`) or replacing it ([`Mode::Replace`],
//! `kairos import --replace` and every subscription refresh: one path).

use std::collections::BTreeSet;

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use kairos_core::model::{Calendar, Event};
use kairos_proto::Body;
use kairos_store::Store;

use super::{ImportReport, MATERIALISED_UNTIL, Target, calendar_named, reschedule};
use crate::error::EngineError;
use crate::materialise::{CalendarLabel, fingerprint};
use crate::sync::record;

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
/// key), acknowledged ones stay acknowledged.
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
    let (cal_id, cal_uid) = calendar_named(store, name, now)?;
    let label = CalendarLabel {
        uid: &cal_uid,
        name,
    };
    let t = Target::of(store, cal_id, label, now, horizon, floating)?;
    let planned = t.plan(cal, "(file)")?;
    let mut report = ImportReport {
        events: cal.events.len(),
        ..ImportReport::default()
    };
    store.write(|tx| -> Result<(), EngineError> {
        let mut changed_uids = BTreeSet::new();
        let mut in_file = BTreeSet::new();
        for ev in &cal.events {
            let rid = crate::series::rid_key(ev);
            if tx.put_event(
                cal_id,
                &ev.uid,
                &rid,
                &crate::series::encode(ev),
                fingerprint(ev),
                now,
            )? {
                report.changed += 1;
                changed_uids.insert(ev.uid.clone());
            }
            in_file.insert((ev.uid.clone(), rid));
        }
        let mut gone = BTreeSet::new();
        if mode == Mode::Replace {
            let file_uids: BTreeSet<&str> = cal.events.iter().map(|e| e.uid.as_str()).collect();
            for stored in tx.events_of(cal_id)? {
                let key = (stored.uid, stored.recurrence_id);
                if in_file.contains(&key) {
                    continue;
                }
                tx.delete_event(cal_id, &key.0, Some(&key.1))?;
                if file_uids.contains(key.0.as_str()) {
                    // An override left the feed; its series stays.
                    changed_uids.insert(key.0);
                } else {
                    gone.insert(key.0);
                }
            }
        }
        let uids: BTreeSet<&str> = changed_uids.iter().map(String::as_str).collect();
        let (dropped, scheduled) = reschedule(tx, cal_id, &uids, &planned, now)?;
        report.dropped = dropped;
        report.scheduled = scheduled;
        for uid in &gone {
            report.dropped += tx.delete_pending_for_event(
                cal_id,
                uid,
                None,
                "event no longer in the calendar's source: deleted",
                now,
            )?;
        }
        report.deleted = gone.len();
        for uid in &uids {
            let comps: Vec<Event> = cal
                .events
                .iter()
                .filter(|e| e.uid == *uid)
                .cloned()
                .collect();
            crate::tasks::settle_closed(tx, cal_id, &comps, t.floating, now)?;
        }
        if !(uids.is_empty() && gone.is_empty()) && crate::workdays::is_holidays(tx, cal_id)? {
            crate::workdays::replan_all(tx, now, t.until, t.floating)?;
        }
        tx.meta_set(MATERIALISED_UNTIL, &t.until.to_rfc3339())?;
        for uid in uids {
            let stored = tx.series_events(cal_id, uid)?;
            let body = Body::SeriesPut {
                calendar: cal_uid.clone(),
                uid: uid.to_owned(),
                ics: crate::series::wire_text(stored.iter()),
            };
            record(tx, body, now)?;
        }
        for uid in gone {
            let body = Body::SeriesDelete {
                calendar: cal_uid.clone(),
                uid,
            };
            record(tx, body, now)?;
        }
        Ok(())
    })?;
    Ok(report)
}
