//! One sync of one CalDAV calendar with its Kairos calendar.
//!
//! 1. What changed on the server ([`list`]): the first sync lists by
//!    `PROPFIND` (Depth 1, ETags) and asks for no token; later ones use
//!    `sync-collection` (RFC 6578) from the stored token (without one, an
//!    initial `sync-collection` compared by ETag gives the first token);
//!    a server without that report is listed by `calendar-query` and
//!    compared by ETag each time.
//! 2. The changed objects' data (`calendar-multiget`), applied through the
//!    engine's import path unless the series was also edited here (then
//!    [`crate::plan::winner`] decides, and the loser goes to `kairos log`).
//! 3. What changed here since the last sync (a series whose hash differs
//!    from the one recorded, one that is gone, one that is new) is written
//!    back: `PUT` with `If-Match`, `DELETE` with `If-Match`, `PUT` with
//!    `If-None-Match: *`. A 412 re-fetches the object and resolves as in 2,
//!    unless the only change here is RFC 9074 acknowledgements and snoozes
//!    (then they are re-applied on the fresh copy: [`reack`]).
//! 4. The new ETags, hashes and token are recorded.
//!
//! Series Kairos sync brought while this calendar's CalDAV sync failed
//! (`kairos_engine::sync::caldav::taken`) are fetched again in step 2 and
//! take the server's copy; step 3 never writes them back nor deletes them
//! there. Whether the sync succeeded is recorded per calendar by
//! [`crate::account`] (`sync_attempted`).

mod list;
mod pull;
mod reack;
mod write;

pub use write::pending_here;

use std::collections::{BTreeMap, BTreeSet};

use kairos_store::{CaldavCalendar, CaldavObject, CalendarId, Store};

use crate::dav::Dav;
use crate::discover::absolute;
use crate::error::Result;
use crate::local::{Apply, RemoteObject, local_series};

const CALENDAR_TYPE: &str = "text/calendar; charset=utf-8";

/// What one sync did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// The Kairos calendar.
    pub calendar: String,
    /// `propfind` (a first sync), `sync-collection` or `etag`.
    pub method: &'static str,
    /// Objects fetched from the server.
    pub fetched: usize,
    /// Series added or changed here from the server.
    pub changed_here: usize,
    /// Series deleted here because they were deleted on the server.
    pub deleted_here: usize,
    /// Objects written to the server (edits and new series made here).
    pub written_there: usize,
    /// Objects deleted on the server (deleted here).
    pub deleted_there: usize,
    /// Conflicts resolved (each logged).
    pub conflicts: usize,
    /// Reminders acknowledged here because the server's copy of their
    /// alarm carries an RFC 9074 `ACKNOWLEDGED` (another client).
    pub acknowledged_here: usize,
    /// What those acknowledgements did (keys, withdrawals of what was
    /// shown), for the host to tell the engine.
    pub acked: crate::acks::Acked,
    /// Alarms dismissed in Kairos marked `ACKNOWLEDGED` for the server
    /// (written back with the series).
    pub acknowledged_there: usize,
    /// Reminders snoozed here because the server's copy carries an RFC
    /// 9074 snooze alarm for their alarm (another client).
    pub snoozed_here: usize,
    /// Reminders snoozed in Kairos written as RFC 9074 snooze alarms.
    pub snoozed_there: usize,
    /// Lenient reading's repairs and skipped objects.
    pub warnings: Vec<String>,
    /// HTTP requests this sync sent (a quiet `sync-collection` sync: 1).
    pub requests: usize,
}

/// A server object fetched this sync.
struct Fetched {
    href: String,
    etag: String,
    data: String,
}

/// What the server says changed.
struct Listing {
    /// `(href, etag)` of new or changed objects.
    changed: Vec<(String, String)>,
    /// Hrefs of deleted objects.
    deleted: Vec<String>,
    token: Option<String>,
    method: &'static str,
}

/// The state of one sync in progress.
struct Run<'a> {
    dav: &'a Dav,
    cc: &'a CaldavCalendar,
    local_cal: CalendarId,
    apply: Apply<'a>,
    tracked: BTreeMap<String, CaldavObject>,
    report: SyncReport,
    /// Inside the resolution of a 412: a second 412 is an error, not a loop.
    retrying: bool,
    /// Series (by `UID`) whose only change here since the last sync is the
    /// acknowledgements marked this sync: a 412 on their write re-applies
    /// the marks on the server's fresh copy instead of a conflict.
    ack_only: BTreeMap<String, reack::Marks>,
    /// Series whose copy here is the server's as another device fetched
    /// it, brought by Kairos sync while this calendar's CalDAV sync failed
    /// (`kairos_engine::sync::caldav::taken`): re-fetched, never written
    /// back as edits made here.
    taken: BTreeSet<String>,
}

/// Syncs CalDAV calendar `cc` with its Kairos calendar (`apply.calendar`).
///
/// # Errors
/// Network, authentication and protocol failures (nothing is recorded for
/// the steps not done: the next sync picks them up), store failures.
pub fn sync_calendar(
    store: &mut Store,
    dav: &Dav,
    cc: &CaldavCalendar,
    local_cal: CalendarId,
    apply: Apply<'_>,
) -> Result<SyncReport> {
    let sent_before = dav.requests();
    let cal_uid = store
        .calendars()?
        .into_iter()
        .find(|c| c.id == local_cal)
        .map(|c| c.uid)
        .unwrap_or_default();
    let taken = kairos_engine::sync::caldav::taken(store, &cal_uid)?;
    let tracked = store
        .read(|r| r.caldav_objects(cc.id))?
        .into_iter()
        .map(|o| (o.href.clone(), o))
        .collect();
    let mut run = Run {
        dav,
        cc,
        local_cal,
        apply,
        tracked,
        report: SyncReport {
            calendar: apply.calendar.to_owned(),
            ..SyncReport::default()
        },
        retrying: false,
        ack_only: BTreeMap::new(),
        taken: taken.keys().cloned().collect(),
    };
    let mut listing = run.list_remote()?;
    run.refetch_taken(&mut listing);
    run.report.method = listing.method;
    let before = local_series(store, local_cal)?;
    let mut handled = BTreeSet::new();
    run.pull(store, &listing, &before, &mut handled)?;
    // The series as read before step 2 stay valid until something here is
    // written: a quiet sync reads and hashes them once, not three times.
    let pulled = !listing.changed.is_empty() || !listing.deleted.is_empty();
    let marked = run.mark_acks(store, (!pulled).then_some(&before))?;
    run.push(store, &handled, (!pulled && !marked).then_some(&before))?;
    store.write(|tx| tx.caldav_calendar_synced(cc.id, listing.token.as_deref(), apply.now))?;
    kairos_engine::sync::caldav::taken_done(store, &cal_uid, &taken)?;
    run.report.requests = dav.requests() - sent_before;
    Ok(run.report)
}

impl Run<'_> {
    pub(super) fn url(&self, href: &str) -> String {
        absolute(self.dav.base(), href)
    }

    pub(super) fn fetch(&mut self, hrefs: &[String]) -> Result<Vec<Fetched>> {
        let got = self.dav.fetch(&self.cc.href, hrefs)?;
        self.report.fetched += got.len();
        Ok(got
            .into_iter()
            .filter_map(|r| {
                let c = r.content.ok()?;
                Some(Fetched {
                    href: r.href,
                    etag: c.etag,
                    data: c.data,
                })
            })
            .collect())
    }

    pub(super) fn note(&self, store: &mut Store, uid: &str, reason: &str) -> Result<()> {
        let key = format!("caldav/{}/{uid}", self.apply.calendar);
        store.write(|tx| tx.sync_note(&key, reason, self.apply.now))?;
        Ok(())
    }

    pub(super) fn warn(&mut self, href: &str, obj: &RemoteObject) {
        for w in &obj.warnings {
            self.report.warnings.push(format!("{href}: {w}"));
        }
    }
}
