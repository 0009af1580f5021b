//! Step 3: edits, deletions and new series made here, written back with
//! conditions; a 412 re-fetches and resolves as a conflict.

use std::collections::{BTreeMap, BTreeSet};

use http::StatusCode;
use kairos_store::{CaldavCalendar, CaldavObject, CalendarId, Store};
use libdav::dav::{Delete, PutResource};

use super::{CALENDAR_TYPE, Run};
use crate::dav::DavFailure;
use crate::error::{CaldavError, Result};
use crate::local::{LocalSeries, RemoteObject, local_series};
use crate::plan::{Winner, object_name};

/// Whether calendar `cc` (synced into `local`) holds a change made here
/// since its last sync: a series edited, deleted or new.
///
/// # Errors
/// The database.
pub fn pending_here(store: &Store, cc: &CaldavCalendar, local: CalendarId) -> Result<bool> {
    let tracked = store.read(|r| r.caldav_objects(cc.id))?;
    let here = local_series(store, local)?;
    if !crate::acks_out::pending(store, local, &here)?.is_empty() {
        return Ok(true);
    }
    let mut known = BTreeSet::new();
    for o in tracked.iter().filter(|o| !o.uid.is_empty()) {
        known.insert(o.uid.as_str());
        if here.get(&o.uid).is_none_or(|l| l.hash != o.local_hash) {
            return Ok(true);
        }
    }
    Ok(here.keys().any(|u| !known.contains(u.as_str())))
}

impl Run<'_> {
    /// Step 3: edits, deletions and new series made here, written back.
    /// `known`: the series here, if nothing was written since they were read.
    pub(super) fn push(
        &mut self,
        store: &mut Store,
        handled: &BTreeSet<String>,
        known: Option<&BTreeMap<String, LocalSeries>>,
    ) -> Result<()> {
        let read;
        let here = match known {
            Some(h) => h,
            None => {
                read = local_series(store, self.local_cal)?;
                &read
            }
        };
        let todo: Vec<CaldavObject> = self
            .tracked
            .values()
            .filter(|o| !handled.contains(&o.href) && !o.uid.is_empty())
            .cloned()
            .collect();
        for o in todo {
            if self.taken.contains(&o.uid) {
                // The server's copy (or gone there): nothing made here.
                continue;
            }
            match here.get(&o.uid) {
                None => self.delete_there(store, &o)?,
                Some(l) if l.hash != o.local_hash => self.put(store, &o.href, l, Some(&o.etag))?,
                Some(_) => {}
            }
        }
        let known: BTreeSet<String> = self.tracked.values().map(|o| o.uid.clone()).collect();
        for l in here.values() {
            if !known.contains(&l.uid) && !self.taken.contains(&l.uid) {
                self.create(store, l)?;
            }
        }
        Ok(())
    }

    /// A new series: `PUT` with `If-None-Match: *`.
    pub(super) fn create(&mut self, store: &mut Store, l: &LocalSeries) -> Result<()> {
        let href = format!("{}{}", self.cc.href, object_name(&l.uid));
        self.put(store, &href, l, None)
    }

    /// One conditional `PUT` of `text` to `href` (`If-Match: etag`, or
    /// `If-None-Match: *` when `etag` is `None`): the new ETag, or why not.
    pub(super) fn send(
        &self,
        href: &str,
        text: &str,
        etag: Option<&str>,
    ) -> Result<std::result::Result<String, DavFailure>> {
        // RFC 5545 §3.6.5: the VTIMEZONEs its TZIDs name (the body only).
        let body = crate::zones::with_vtimezones(text, crate::zones::year_of(self.apply.now));
        let c = &self.dav.client;
        let res = match etag {
            Some(e) => self.dav.run_raw(c.request(PutResource::new(href).update(
                body,
                CALENDAR_TYPE,
                e,
            )))?,
            None => self
                .dav
                .run_raw(c.request(PutResource::new(href).create(body, CALENDAR_TYPE)))?,
        };
        Ok(res
            .map(|r| r.etag.unwrap_or_default())
            .map_err(DavFailure::from))
    }

    /// Writes `l` to `href` (`If-Match: etag`, or `If-None-Match: *` when
    /// `etag` is `None`); a 412 re-fetches and resolves: a series whose
    /// only change here is acknowledgements gets them re-applied on the
    /// server's fresh copy ([`Run::reack`]), any other edit is a conflict.
    pub(super) fn put(
        &mut self,
        store: &mut Store,
        href: &str,
        l: &LocalSeries,
        etag: Option<&str>,
    ) -> Result<()> {
        match self.send(href, &l.text, etag)? {
            Ok(etag) => {
                self.report.written_there += 1;
                let o = CaldavObject {
                    href: href.to_owned(),
                    uid: l.uid.clone(),
                    etag,
                    local_hash: l.hash.clone(),
                };
                store.write(|tx| tx.caldav_object_put(self.cc.id, &o))?;
                self.tracked.insert(o.href.clone(), o);
                Ok(())
            }
            Err(f) if f.status() == Some(StatusCode::PRECONDITION_FAILED) && !self.retrying => {
                self.retrying = true;
                let r = match self.ack_only.remove(&l.uid) {
                    Some(marks) if etag.is_some() => self.reack(store, href, &l.uid, &marks),
                    _ => self.refetch_and_resolve(store, href, Some(l)),
                };
                self.retrying = false;
                r
            }
            Err(f) => Err(self.dav.explain("PUT", &self.url(href), f)),
        }
    }

    /// A series deleted here: `DELETE` with `If-Match`; a 412 (changed on
    /// the server meanwhile) keeps the server's edit.
    pub(super) fn delete_there(&mut self, store: &mut Store, o: &CaldavObject) -> Result<()> {
        let url = self.url(&o.href);
        let res = self.dav.run_raw(
            self.dav
                .client
                .request(Delete::new(&o.href).with_etag(o.etag.clone())),
        )?;
        match res.map_err(DavFailure::from) {
            Ok(_) => {
                self.report.deleted_there += 1;
                self.forget(store, &o.href)
            }
            Err(f) if f.status() == Some(StatusCode::NOT_FOUND) => self.forget(store, &o.href),
            Err(f) if f.status() == Some(StatusCode::PRECONDITION_FAILED) => {
                self.refetch_and_resolve(store, &o.href, None)
            }
            Err(f) => Err(self.dav.explain("DELETE", &url, f)),
        }
    }

    pub(super) fn refetch_and_resolve(
        &mut self,
        store: &mut Store,
        href: &str,
        here: Option<&LocalSeries>,
    ) -> Result<()> {
        let got = self.fetch(&[href.to_owned()])?;
        let Some(f) = got.into_iter().next() else {
            return Err(CaldavError::Protocol {
                what: "calendar-multiget",
                url: self.url(href),
                reason: "the server refused a conditional write (412) but then gave no object"
                    .to_owned(),
            });
        };
        let obj = RemoteObject::read(&f.data);
        self.warn(href, &obj);
        let Some(uid) = obj.uid().map(str::to_owned) else {
            return Ok(());
        };
        if self.conflict(store, &f, &obj, here)? == Winner::Server {
            self.record(store, vec![(f.href, uid, f.etag)])?;
        }
        Ok(())
    }
}
