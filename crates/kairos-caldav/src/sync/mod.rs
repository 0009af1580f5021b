//! One sync of one CalDAV calendar with its Kairos calendar.
//!
//! 1. What changed on the server: `sync-collection` (RFC 6578) from the
//!    stored token; without a token, or when the server has no such
//!    report, a full listing compared by ETag (`calendar-query`).
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
mod reack;
mod write;

pub use write::pending_here;

use std::collections::{BTreeMap, BTreeSet};

use kairos_store::{CaldavCalendar, CaldavObject, CalendarId, Store};

use crate::dav::Dav;
use crate::discover::absolute;
use crate::error::Result;
use crate::local::{Apply, LocalSeries, RemoteObject, local_series};
use crate::plan::{Winner, modified, winner};

const CALENDAR_TYPE: &str = "text/calendar; charset=utf-8";

/// What one sync did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// The Kairos calendar.
    pub calendar: String,
    /// `sync-collection` or `etag`.
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
    run.mark_acks(store)?;
    run.push(store, &handled)?;
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

    /// Step 2: server changes in, local edits of the same series resolved.
    pub(super) fn pull(
        &mut self,
        store: &mut Store,
        listing: &Listing,
        here: &BTreeMap<String, LocalSeries>,
        handled: &mut BTreeSet<String>,
    ) -> Result<()> {
        let hrefs: Vec<String> = listing.changed.iter().map(|(h, _)| h.clone()).collect();
        let fetched = self.fetch(&hrefs)?;
        let mut fresh = Vec::new();
        let mut records = Vec::new();
        for f in fetched {
            handled.insert(f.href.clone());
            let obj = RemoteObject::read(&f.data);
            self.warn(&f.href, &obj);
            let Some(uid) = obj.uid().map(str::to_owned) else {
                // Unreadable: remember its ETag so it is not fetched again.
                records.push((f.href, String::new(), f.etag));
                continue;
            };
            let base = self.tracked.get(&f.href).map(|o| o.local_hash.clone());
            // A copy here identical to the server's: another device of the
            // person fetched it first (before this device linked the
            // calendar) and Kairos sync brought it, or an edit made on a
            // device without the link reached here over Kairos sync and the
            // server through another device. Nothing to apply, no conflict.
            let known = here.contains_key(&uid) && self.holds_all(store, &obj)?;
            // A copy Kairos sync brought while CalDAV failed is the
            // server's, maybe older: the server's copy now replaces it.
            let edited_here = !self.taken.contains(&uid)
                && match (here.get(&uid), &base) {
                    (Some(l), Some(b)) => &l.hash != b,
                    (Some(_), None) => !known,
                    (None, Some(_)) => true,
                    (None, None) => false,
                };
            // Acknowledgements first: applying the server's version
            // re-plans from now, and a trigger already past is not planned
            // again (its reminder would be gone before it is matched).
            for (u, comps) in &obj.series {
                self.acks_in(store, u, comps)?;
            }
            if known {
                records.push((f.href, uid, f.etag));
                continue;
            }
            if edited_here {
                if self.conflict(store, &f, &obj, here.get(&uid))? == Winner::Here {
                    continue; // `put` recorded the new ETag.
                }
            } else if here.contains_key(&uid) {
                for (u, comps) in &obj.series {
                    self.apply.replace(store, u, comps)?;
                }
                self.report.changed_here += 1;
            } else {
                fresh.extend(obj.series.into_values());
                self.report.changed_here += 1;
            }
            records.push((f.href, uid, f.etag));
        }
        self.apply.add_all(store, fresh)?;
        self.report.acknowledged_here = self.report.acked.keys.len();
        self.report.snoozed_here = self.report.acked.snoozed.len();
        for href in &listing.deleted {
            handled.insert(href.clone());
            self.remote_deleted(store, href, here)?;
        }
        self.record(store, records)
    }

    /// Records objects as synced with the series' hash as stored now.
    pub(super) fn record(
        &mut self,
        store: &mut Store,
        records: Vec<(String, String, String)>,
    ) -> Result<()> {
        let now_here = local_series(store, self.local_cal)?;
        let id = self.cc.id;
        let objs: Vec<CaldavObject> = records
            .into_iter()
            .map(|(href, uid, etag)| CaldavObject {
                local_hash: now_here
                    .get(&uid)
                    .map(|l| l.hash.clone())
                    .unwrap_or_default(),
                href,
                uid,
                etag,
            })
            .collect();
        store.write(|tx| -> Result<()> {
            for o in &objs {
                tx.caldav_object_put(id, o)?;
            }
            Ok(())
        })?;
        for o in objs {
            self.tracked.insert(o.href.clone(), o);
        }
        Ok(())
    }

    pub(super) fn forget(&mut self, store: &mut Store, href: &str) -> Result<()> {
        store.write(|tx| tx.caldav_object_delete(self.cc.id, href))?;
        self.tracked.remove(href);
        Ok(())
    }

    /// An object deleted on the server: deleted here too, unless it was
    /// edited here since (then the edit is written back: nothing lost).
    pub(super) fn remote_deleted(
        &mut self,
        store: &mut Store,
        href: &str,
        here: &BTreeMap<String, LocalSeries>,
    ) -> Result<()> {
        let Some(t) = self.tracked.get(href).cloned() else {
            return Ok(());
        };
        match here.get(&t.uid) {
            Some(l) if l.hash != t.local_hash => {
                self.note(
                    store,
                    &t.uid,
                    "deleted on the server but edited here: the edit here is kept and written back",
                )?;
                self.report.conflicts += 1;
                self.forget(store, href)?;
                self.create(store, l)?;
            }
            Some(_) => {
                self.apply.replace(store, &t.uid, &[])?;
                self.report.deleted_here += 1;
                self.forget(store, href)?;
            }
            None => self.forget(store, href)?,
        }
        Ok(())
    }

    /// Whether every series of `obj` is here exactly as the server has it.
    fn holds_all(&self, store: &Store, obj: &RemoteObject) -> Result<bool> {
        for (u, comps) in &obj.series {
            if !self.apply.holds(store, u, comps)? {
                return Ok(false);
            }
        }
        Ok(!obj.series.is_empty())
    }

    /// Both sides changed one series: the later wins, the loser is logged.
    pub(super) fn conflict(
        &mut self,
        store: &mut Store,
        f: &Fetched,
        obj: &RemoteObject,
        here: Option<&LocalSeries>,
    ) -> Result<Winner> {
        if here.is_some() && self.holds_all(store, obj)? {
            // The same version on both sides (after a 412: another device
            // wrote what this one was writing): nothing to resolve.
            return Ok(Winner::Server);
        }
        self.report.conflicts += 1;
        let uid = obj.uid().unwrap_or_default().to_owned();
        let Some(l) = here else {
            // Deleted here, changed there: the server's edit is kept.
            self.note(
                store,
                &uid,
                "deleted here but changed on the server: the server's version is kept",
            )?;
            for (u, comps) in &obj.series {
                self.apply.replace(store, u, comps)?;
            }
            return Ok(Winner::Server);
        };
        match winner(modified(&f.data), l.updated_at) {
            Winner::Server => {
                let reason = format!(
                    "edit here lost to the server's (CalDAV conflict); the version that lost:\n{}",
                    l.text
                );
                self.note(store, &uid, &reason)?;
                for (u, comps) in &obj.series {
                    self.apply.replace(store, u, comps)?;
                }
                Ok(Winner::Server)
            }
            Winner::Here => {
                let reason = format!(
                    "the server's edit lost to the edit here (CalDAV conflict); the version that lost:\n{}",
                    f.data
                );
                self.note(store, &uid, &reason)?;
                self.put(store, &f.href, l, Some(&f.etag))?;
                Ok(Winner::Here)
            }
        }
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
