//! Step 1: what changed on the server.

use std::collections::BTreeSet;

use http::StatusCode;
use libdav::caldav::ListCalendarResources;
use libdav::dav::SyncCollection;

use super::{Listing, Run};
use crate::dav::DavFailure;
use crate::error::Result;

impl Run<'_> {
    /// Adds the objects of [`Run::taken`] series to what the pull fetches
    /// (the server may hold a newer copy than the one brought here).
    pub(super) fn refetch_taken(&self, listing: &mut Listing) {
        for o in self.tracked.values() {
            if self.taken.contains(&o.uid) && !listing.changed.iter().any(|(h, _)| h == &o.href) {
                listing.changed.push((o.href.clone(), o.etag.clone()));
            }
        }
    }

    pub(super) fn list_remote(&self) -> Result<Listing> {
        let href = self.cc.href.as_str();
        let mut token = self.cc.sync_token.as_deref();
        loop {
            let mut req = SyncCollection::new(href);
            if let Some(t) = token {
                req = req.with_sync_token(t);
            }
            match self.dav.run_raw(self.dav.client.request(req))? {
                Ok(r) => {
                    let mut changed = Vec::new();
                    for c in r.changed {
                        let etag = c.etag.unwrap_or_default();
                        if token.is_some()
                            && self.tracked.get(&c.href).is_some_and(|o| o.etag == etag)
                        {
                            continue; // Our own write, seen already.
                        }
                        changed.push((c.href, etag));
                    }
                    let mut deleted = r.deleted;
                    if token.is_none() {
                        deleted = self.missing_from(&changed);
                        changed.retain(|(h, e)| self.tracked.get(h).is_none_or(|o| &o.etag != e));
                    }
                    return Ok(Listing {
                        changed,
                        deleted,
                        token: Some(r.new_sync_token),
                        method: "sync-collection",
                    });
                }
                Err(e) => match DavFailure::from(e) {
                    // RFC 6578 §3.2: the token is no longer valid: start afresh.
                    DavFailure::Precondition(p) if p == "valid-sync-token" && token.is_some() => {
                        token = None;
                    }
                    f @ (DavFailure::Network(_) | DavFailure::Status(StatusCode::UNAUTHORIZED)) => {
                        return Err(self
                            .dav
                            .explain("REPORT sync-collection", &self.url(href), f));
                    }
                    _ => return self.list_by_etag(),
                },
            }
        }
    }

    /// Tracked objects the server no longer lists.
    pub(super) fn missing_from(&self, listed: &[(String, String)]) -> Vec<String> {
        let listed: BTreeSet<&str> = listed.iter().map(|(h, _)| h.as_str()).collect();
        self.tracked
            .keys()
            .filter(|h| !listed.contains(h.as_str()))
            .cloned()
            .collect()
    }

    pub(super) fn list_by_etag(&self) -> Result<Listing> {
        let href = self.cc.href.as_str();
        let r = self.dav.run(
            "REPORT calendar-query",
            &self.url(href),
            self.dav.client.request(ListCalendarResources::new(href)),
        )?;
        let listed: Vec<(String, String)> = r
            .resources
            .into_iter()
            .map(|l| (l.href, l.etag.unwrap_or_default()))
            .collect();
        let deleted = self.missing_from(&listed);
        let changed = listed
            .into_iter()
            .filter(|(h, e)| self.tracked.get(h).is_none_or(|o| &o.etag != e))
            .collect();
        Ok(Listing {
            changed,
            deleted,
            token: None,
            method: "etag",
        })
    }
}
