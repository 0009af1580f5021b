//! Acknowledgements made in Kairos onto the stored copies (RFC 9074
//! `ACKNOWLEDGED`), and their re-application when the write meets a 412.
//!
//! A series whose only change here is an acknowledgement is not an edit
//! that competes with the server's: when the server's copy changed between
//! our read and our write (`412 Precondition Failed`), the server's copy is
//! taken as it is, the same marks are put on it, and it is written again
//! with the new `If-Match`, at most [`ACK_TRIES`] times. No conflict, nothing
//! in `kairos log`: neither side loses anything.

use std::collections::BTreeMap;

use http::StatusCode;
use kairos_store::{CaldavObject, Store};

use super::Run;
use crate::acks_out::{Mark, mark_text, pending};
use crate::error::{CaldavError, Result};
use crate::local::{RemoteObject, local_series};

/// Writes of one acknowledgement that meet a 412 before it gives up for
/// this sync (the next sync marks it again: nothing is lost).
pub const ACK_TRIES: usize = 3;

impl Run<'_> {
    /// Dismissals made in Kairos onto the stored copies' alarms (the
    /// write-back step then sends them).
    pub(super) fn mark_acks(&mut self, store: &mut Store) -> Result<()> {
        let here = local_series(store, self.local_cal)?;
        let marks = pending(store, self.local_cal, &here)?;
        let mut by_uid: BTreeMap<String, Vec<Mark>> = BTreeMap::new();
        for m in &marks {
            by_uid.entry(m.uid.clone()).or_default().push(m.clone());
        }
        for (uid, ms) in by_uid {
            let Some(l) = here.get(&uid) else { continue };
            let unchanged = self
                .tracked
                .values()
                .any(|o| o.uid == uid && o.local_hash == l.hash);
            let text = ms
                .iter()
                .fold(l.text.clone(), |t, m| mark_text(&t, &m.alarm, m.at));
            let obj = RemoteObject::read(&text);
            if let Some(comps) = obj.series.get(&uid) {
                self.apply.replace(store, &uid, comps)?;
            }
            if unchanged {
                self.ack_only.insert(uid, ms);
            }
        }
        self.report.acknowledged_there = marks.len();
        Ok(())
    }

    /// The write of series `uid`'s acknowledgements to `href` met a 412:
    /// the server's copy, marked again, written with its ETag (bounded).
    pub(super) fn reack(
        &mut self,
        store: &mut Store,
        href: &str,
        uid: &str,
        marks: &[Mark],
    ) -> Result<()> {
        for _ in 0..ACK_TRIES {
            let Some(f) = self.fetch(&[href.to_owned()])?.into_iter().next() else {
                // Deleted on the server meanwhile: the next sync deletes it here.
                return Ok(());
            };
            let fresh = RemoteObject::read(&f.data);
            self.warn(href, &fresh);
            if let Some(comps) = fresh.series.get(uid) {
                crate::acks::apply(
                    store,
                    self.local_cal,
                    uid,
                    comps,
                    self.apply.now,
                    &mut self.report.acked,
                )?;
            }
            let text = marks
                .iter()
                .fold(f.data.clone(), |t, m| mark_text(&t, &m.alarm, m.at));
            let obj = RemoteObject::read(&text);
            let Some(comps) = obj.series.get(uid) else {
                return Ok(()); // Another series now: the next sync sorts it out.
            };
            self.apply.replace(store, uid, comps)?;
            self.report.changed_here += 1;
            let Some(l) = local_series(store, self.local_cal)?.remove(uid) else {
                return Ok(());
            };
            match self.send(href, &l.text, Some(&f.etag))? {
                Ok(etag) => {
                    self.report.written_there += 1;
                    let o = CaldavObject {
                        href: href.to_owned(),
                        uid: uid.to_owned(),
                        etag,
                        local_hash: l.hash.clone(),
                    };
                    store.write(|tx| tx.caldav_object_put(self.cc.id, &o))?;
                    self.tracked.insert(o.href.clone(), o);
                    return Ok(());
                }
                Err(e) if e.status() == Some(StatusCode::PRECONDITION_FAILED) => {}
                Err(e) => return Err(self.dav.explain("PUT", &self.url(href), e)),
            }
        }
        Err(CaldavError::Protocol {
            what: "PUT",
            url: self.url(href),
            reason: format!(
                "the object changed on the server during each of {ACK_TRIES} writes of an \
                 acknowledgement; the next sync writes it again"
            ),
        })
    }
}
