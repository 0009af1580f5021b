//! Replacing one series as a whole (the app's edits, a task marked done).

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use kairos_core::model::Event;
use kairos_proto::Body;

use super::{At, ImportReport, Target, calendar_named, write_series};
use crate::channel::Withdrawal;
use crate::error::EngineError;
use crate::materialise::CalendarLabel;
use crate::sync::caldav::Origin;
use crate::sync::record_as;
use kairos_store::Store;

/// Replaces every component (master and overrides) of series `uid` in
/// calendar `name` with `comps` (all of that `UID`; empty deletes the
/// series), recomputes its pending instances and records the change for
/// sync, in one transaction.
///
/// # Errors
/// Store failures; the core's expansion limits.
pub fn replace_series(
    store: &mut Store,
    name: &str,
    uid: &str,
    comps: &[Event],
    now: DateTime<Utc>,
    horizon: Duration,
    floating: Tz,
) -> Result<ImportReport, EngineError> {
    replace(store, name, uid, comps, now, horizon, floating).map(|(r, _)| r)
}

/// [`replace_series`], also returning the shown reminders of a task now
/// done, for the caller's channels to take back.
pub(crate) fn replace(
    store: &mut Store,
    name: &str,
    uid: &str,
    comps: &[Event],
    now: DateTime<Utc>,
    horizon: Duration,
    floating: Tz,
) -> Result<(ImportReport, Vec<Withdrawal>), EngineError> {
    let at = At {
        now,
        horizon,
        floating,
        origin: Origin::Here,
    };
    replace_at(store, name, uid, comps, at)
}

/// [`replace_series`]'s work, its change recorded as coming from
/// `at.origin`.
pub(crate) fn replace_at(
    store: &mut Store,
    name: &str,
    uid: &str,
    comps: &[Event],
    at: At,
) -> Result<(ImportReport, Vec<Withdrawal>), EngineError> {
    let At {
        now,
        horizon,
        floating,
        origin,
    } = at;
    let (cal_id, cal_uid) = calendar_named(store, name, now)?;
    let label = CalendarLabel {
        uid: &cal_uid,
        name,
    };
    let t = Target::of(store, cal_id, label, now, horizon, floating)?;
    let (dropped, scheduled, withdrawals) = store.write(|tx| -> Result<_, EngineError> {
        let w = write_series(tx, &t, uid, comps)?;
        let done = (w.dropped, w.scheduled, w.withdrawals);
        let body = if comps.is_empty() {
            Body::SeriesDelete {
                calendar: cal_uid.clone(),
                uid: uid.to_owned(),
                caldav: false,
            }
        } else {
            let stored = tx.series_events(cal_id, uid)?;
            Body::SeriesPut {
                calendar: cal_uid.clone(),
                uid: uid.to_owned(),
                ics: crate::series::wire_text(stored.iter(), name)?,
            }
        };
        record_as(tx, body, now, origin)?;
        Ok(done)
    })?;
    let report = ImportReport {
        events: comps.len(),
        changed: comps.len(),
        dropped,
        scheduled,
        deleted: usize::from(comps.is_empty()),
    };
    Ok((report, withdrawals))
}
