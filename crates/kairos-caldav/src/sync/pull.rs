//! Step 2: the server's changes in; an object edited on both sides is a
//! conflict ([`crate::plan::winner`] decides, the loser goes to
//! `kairos log`); one deleted there but edited here is written back.

use std::collections::{BTreeMap, BTreeSet};

use kairos_store::{CaldavObject, Store};

use super::{Fetched, Listing, Run};
use crate::error::Result;
use crate::local::{LocalSeries, RemoteObject, local_series};
use crate::plan::{Winner, modified, winner};

impl Run<'_> {
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
        if records.is_empty() {
            return Ok(());
        }
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
}
