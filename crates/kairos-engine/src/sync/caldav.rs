//! Kairos sync and CalDAV together (issue #19: "nothing is applied twice,
//! nothing is lost, keys agree on every device").
//!
//! The rule: **a device that links a calendar to a CalDAV collection takes
//! from the CalDAV server what came from the server, and from Kairos sync
//! everything else.** A series op whose content a device's CalDAV sync
//! fetched (written by [`import_fetched`] / [`replace_fetched`]: the pull,
//! a conflict the server won) carries [`MARK`] as the first line of its
//! `ics` (a `VCALENDAR`-level property: every reader, older peers and the
//! server's replica too, reads it as a calendar property and ignores it);
//! a deletion fetched from the server carries `"caldav": true` (a field
//! added within v1; older peers and servers ignore or drop it, and then the
//! deletion is applied everywhere, as before). A device that links the
//! calendar itself applies such an op's register (so its clock, cursor and
//! later ops' `base` agree with the account) but not its content: that
//! content is on the server, and this device's own CalDAV sync brings it
//! ([`FETCH_DUE`]). So a late op never overwrites a newer server copy, nor
//! deletes an object re-created on the server since (a deletion stamped by
//! a clock running ahead).
//!
//! Everything made in Kairos is unmarked, on a linked device too: an edit,
//! an import into a linked calendar, RFC 9074 marks of a dismissal. Every
//! device applies it and each linked device writes it to the server (the
//! first write wins, the others find the server holds it), so an edit whose
//! own device never wrote it (a `PUT` refused, the device closed first)
//! still reaches the server and every device. Joining an account, a
//! device's series of a linked calendar that are its copy of the server's
//! (unchanged since its last CalDAV sync) are marked, so a stale copy is
//! never written back over a newer one; one edited here and not yet
//! written to the server is not ([`super::caldav_copy`]).
//!
//! Fallback: while a calendar's last CalDAV sync attempt failed
//! ([`sync_attempted`], recorded by kairos-caldav for every attempt),
//! marked ops are applied in full here, and each is remembered with its
//! stamp ([`taken`]). When CalDAV works again, the sync re-fetches those
//! series and takes the server's copy (identical: nothing is written; newer:
//! it replaces the one Kairos sync brought) and never writes one back as an
//! edit made here. A series edited here since (its register moved past the
//! op's stamp) is an edit like any other.
//!
//! Any device: an op whose series is already held exactly (or a delete of
//! one not held) writes nothing and logs no lost edit.
//!
//! Architecture Invariant: this module knows the `caldav_calendars` link,
//! its own `meta` keys and the op's text; no HTTP (that is kairos-caldav's).

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use kairos_core::model::{Calendar, Event};
use kairos_proto::{Body, Hlc};
use kairos_store::{CalendarId, Store, StoreError, Tx};

use crate::error::EngineError;
use crate::import::{ImportReport, Mode};

/// The first line of a series op's `ics` whose content a device's CalDAV
/// sync fetched from the server.
pub const MARK: &str = "X-KAIROS-SOURCE:CALDAV";

/// `meta` key (local, never synced): set, to the op's stamp, when a series
/// op was left to this device's CalDAV sync. The server has a change this
/// device has not fetched yet: a running host syncs its accounts at once
/// (not at their next interval, when the old reminder may have rung) and
/// clears it ([`fetch_done`]).
pub const FETCH_DUE: &str = "caldav.fetch_due";

/// `meta` key prefix (local, never synced), + the Kairos calendar's uid:
/// present while the calendar's last CalDAV sync attempt failed (the value
/// is when). See [`sync_attempted`].
const FAILING: &str = "caldav.failing.";

/// `meta` key prefix (local), + the Kairos calendar's uid: JSON object
/// `{series UID: op stamp}` of the marked ops whose content was applied
/// here while the calendar's CalDAV sync was failing ([`taken`]).
const TAKEN: &str = "caldav.taken.";

/// Where a series change recorded for sync comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Made here: an edit, an import, a synced op's consequences.
    Here,
    /// Fetched from the CalDAV server by this device's CalDAV sync.
    Fetched,
}

/// Clears [`FETCH_DUE`] if it still holds `seen` (a later op's mark stays
/// for the next sync).
///
/// # Errors
/// Store failures.
pub fn fetch_done(store: &mut Store, seen: &str) -> Result<(), StoreError> {
    store.write(|tx| {
        if tx.meta_get(FETCH_DUE)?.as_deref() == Some(seen) {
            tx.meta_delete(FETCH_DUE)?;
        }
        Ok(())
    })
}

/// Whether calendar `cal_uid` is synced with a CalDAV collection here.
///
/// # Errors
/// Store failures.
pub fn linked(tx: &Tx<'_>, cal_uid: &str) -> Result<bool, StoreError> {
    match tx.calendar_by_uid(cal_uid)? {
        Some(c) => Ok(tx.caldav_calendar_of(c.id)?.is_some()),
        None => Ok(false),
    }
}

/// Records how the CalDAV sync attempt of Kairos calendar `cal` ended:
/// `ok` false (it failed) turns the fallback on, true turns it off. While
/// it is on, marked ops of the calendar are applied here in full (nothing
/// waits for a CalDAV sync that does not come), and each is remembered
/// ([`taken`]) so the recovering sync does not take it for an edit here.
///
/// # Errors
/// Store failures.
pub fn sync_attempted(
    store: &mut Store,
    cal: CalendarId,
    ok: bool,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let Some(c) = store.calendars()?.into_iter().find(|c| c.id == cal) else {
        return Ok(());
    };
    let key = format!("{FAILING}{}", c.uid);
    store.write(|tx| {
        if ok {
            tx.meta_delete(&key)
        } else {
            tx.meta_set(&key, &now.to_rfc3339())
        }
    })
}

/// Forgets this module's per-calendar state of Kairos calendar `cal`
/// ([`sync_attempted`]'s failing mark, [`taken`]'s list), in the caller's
/// transaction: the calendar is no longer linked (its CalDAV account was
/// removed), so nothing reads them again.
///
/// # Errors
/// Store failures.
pub fn forget(tx: &Tx<'_>, cal: CalendarId) -> Result<(), StoreError> {
    let Some(c) = tx.calendars()?.into_iter().find(|c| c.id == cal) else {
        return Ok(());
    };
    tx.meta_delete(&format!("{FAILING}{}", c.uid))?;
    tx.meta_delete(&format!("{TAKEN}{}", c.uid))
}

/// Whether the last CalDAV sync attempt of calendar `cal_uid` failed.
fn failing(tx: &Tx<'_>, cal_uid: &str) -> Result<bool, StoreError> {
    Ok(tx.meta_get(&format!("{FAILING}{cal_uid}"))?.is_some())
}

fn read_taken(text: Option<String>) -> BTreeMap<String, String> {
    text.and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// Series of calendar `cal_uid` whose content here is a copy of the
/// server's that came over Kairos sync while CalDAV failed (by UID, with
/// the op's stamp), and that nothing changed since: the series' register
/// still holds that stamp. The CalDAV sync must not write them back as
/// edits made here (the server's copy may be newer): it re-fetches them.
/// A series edited here since is not listed (that edit is written back).
///
/// # Errors
/// Store failures.
pub fn taken(store: &Store, cal_uid: &str) -> Result<BTreeMap<String, String>, StoreError> {
    store.read(|r| {
        let all = read_taken(r.meta_get(&format!("{TAKEN}{cal_uid}"))?);
        let mut out = BTreeMap::new();
        for (uid, stamp) in all {
            let reg = r.register(&format!("series/{cal_uid}/{uid}"))?;
            if reg.is_some_and(|g| g.hlc == stamp) {
                out.insert(uid, stamp);
            }
        }
        Ok(out)
    })
}

/// Forgets the [`taken`] entries a completed CalDAV sync handled: all those
/// read before it, unless a later op replaced one meanwhile.
///
/// # Errors
/// Store failures.
pub fn taken_done(
    store: &mut Store,
    cal_uid: &str,
    before: &BTreeMap<String, String>,
) -> Result<(), StoreError> {
    let key = format!("{TAKEN}{cal_uid}");
    store.write(|tx| {
        let mut all = read_taken(tx.meta_get(&key)?);
        let mut keep = BTreeMap::new();
        for (uid, stamp) in std::mem::take(&mut all) {
            // Handled by the sync, or stale (the series changed since: its
            // register never comes back to this stamp).
            let reg = tx.register(&format!("series/{cal_uid}/{uid}"))?;
            if before.get(&uid) != Some(&stamp) && reg.is_some_and(|g| g.hlc == stamp) {
                keep.insert(uid, stamp);
            }
        }
        let all = keep;
        if all.is_empty() {
            tx.meta_delete(&key)
        } else {
            tx.meta_set(&key, &serde_json::to_string(&all).unwrap_or_default())
        }
    })
}

/// `body`, marked when its content (or its deletion) was fetched from the
/// CalDAV server of a calendar linked here.
pub(crate) fn mark(tx: &Tx<'_>, body: Body, origin: Origin) -> Result<Body, StoreError> {
    match body {
        Body::SeriesPut { calendar, uid, ics }
            if origin == Origin::Fetched && !is_marked(&ics) && linked(tx, &calendar)? =>
        {
            Ok(Body::SeriesPut {
                ics: format!("{MARK}\r\n{ics}"),
                calendar,
                uid,
            })
        }
        Body::SeriesDelete {
            calendar,
            uid,
            caldav: false,
        } if origin == Origin::Fetched && linked(tx, &calendar)? => Ok(Body::SeriesDelete {
            calendar,
            uid,
            caldav: true,
        }),
        other => Ok(other),
    }
}

/// Whether a series op's text was fetched from a CalDAV server.
#[must_use]
pub fn is_marked(ics: &str) -> bool {
    ics.strip_prefix(MARK)
        .is_some_and(|rest| rest.starts_with("\r\n") || rest.starts_with('\n'))
}

/// Whether `body`'s content is left to this device's own CalDAV sync: a
/// marked series put or delete of a calendar linked here whose CalDAV sync
/// works.
/// When it does not ([`sync_attempted`]), the content is applied and the
/// op remembered ([`taken`]).
pub(crate) fn left_to_caldav(tx: &Tx<'_>, body: &Body, stamp: &Hlc) -> Result<bool, StoreError> {
    let (calendar, uid) = match body {
        Body::SeriesPut { calendar, uid, ics } if is_marked(ics) => (calendar, uid),
        Body::SeriesDelete {
            calendar,
            uid,
            caldav: true,
        } => (calendar, uid),
        _ => return Ok(false),
    };
    if !linked(tx, calendar)? {
        return Ok(false);
    }
    if !failing(tx, calendar)? {
        return Ok(true);
    }
    let key = format!("{TAKEN}{calendar}");
    let mut all = read_taken(tx.meta_get(&key)?);
    all.insert(uid.clone(), stamp.to_string());
    tx.meta_set(&key, &serde_json::to_string(&all).unwrap_or_default())?;
    Ok(false)
}

/// [`crate::import::import`] of objects fetched from the CalDAV server: the
/// ops recorded are marked.
///
/// # Errors
/// As [`crate::import::import`].
pub fn import_fetched(
    store: &mut Store,
    name: &str,
    cal: &Calendar,
    now: DateTime<Utc>,
    horizon: Duration,
    floating: Tz,
) -> Result<ImportReport, EngineError> {
    let at = crate::import::At {
        now,
        horizon,
        floating,
        origin: Origin::Fetched,
    };
    crate::import::import_at(store, name, cal, Mode::Merge, at)
}

/// [`crate::import::replace_series`] of a series fetched from the CalDAV
/// server (or deleted there): the op recorded is marked.
///
/// # Errors
/// As [`crate::import::replace_series`].
pub fn replace_fetched(
    store: &mut Store,
    name: &str,
    uid: &str,
    comps: &[Event],
    now: DateTime<Utc>,
    horizon: Duration,
    floating: Tz,
) -> Result<ImportReport, EngineError> {
    let at = crate::import::At {
        now,
        horizon,
        floating,
        origin: Origin::Fetched,
    };
    crate::import::replace_at(store, name, uid, comps, at).map(|(r, _)| r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mark_is_a_whole_first_line() {
        assert!(is_marked(&format!("{MARK}\r\nBEGIN:VEVENT\r\n")));
        assert!(!is_marked("BEGIN:VEVENT\r\n"));
        assert!(!is_marked(&format!("{MARK}X\r\nBEGIN:VEVENT\r\n")));
        assert!(!is_marked(&format!("BEGIN:VEVENT\r\n{MARK}\r\n")));
    }
}
