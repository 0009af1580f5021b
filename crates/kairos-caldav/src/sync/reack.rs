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
use crate::local::{LocalSeries, RemoteObject, local_series};
use crate::snooze::SnoozeMark;
use kairos_core::model::Event;

/// What Kairos writes on one series' alarms: dismissals and snoozes.
#[derive(Debug, Clone, Default)]
pub(super) struct Marks {
    acks: Vec<Mark>,
    snoozes: Vec<SnoozeMark>,
}

impl Marks {
    /// The components of series `uid` in `text` with these marks on.
    fn onto(&self, text: &str, uid: &str) -> Option<Vec<Event>> {
        let text = self
            .acks
            .iter()
            .fold(text.to_owned(), |t, m| mark_text(&t, &m.alarm, m.at));
        let mut comps = RemoteObject::read(&text).series.remove(uid)?;
        for s in &self.snoozes {
            crate::snooze::mark(&mut comps, s);
        }
        crate::snooze::end_snoozes(&mut comps);
        Some(comps)
    }
}

/// Writes of one acknowledgement that meet a 412 before it gives up for
/// this sync (the next sync marks it again: nothing is lost).
pub const ACK_TRIES: usize = 3;

impl Run<'_> {
    /// RFC 9074 `ACKNOWLEDGED`s and snooze alarms in a server copy of
    /// series `uid`, applied to its reminders here.
    pub(super) fn acks_in(&mut self, store: &mut Store, uid: &str, comps: &[Event]) -> Result<()> {
        let (local, now) = (self.local_cal, self.apply.now);
        let out = &mut self.report.acked;
        if crate::acks::any(comps) {
            crate::acks::apply(store, local, uid, comps, now, out)?;
        }
        crate::snooze::apply_in(store, local, uid, comps, now, out)
    }

    /// Dismissals and snoozes made in Kairos onto the stored copies'
    /// alarms (the write-back step then sends them). `known`: the series
    /// here, if nothing was written since they were read. Whether it
    /// changed a series here.
    pub(super) fn mark_acks(
        &mut self,
        store: &mut Store,
        known: Option<&BTreeMap<String, LocalSeries>>,
    ) -> Result<bool> {
        let read;
        let here = match known {
            Some(h) => h,
            None => {
                read = local_series(store, self.local_cal)?;
                &read
            }
        };
        let acks = pending(store, self.local_cal, here)?;
        let snoozes = crate::snooze::pending(store, self.local_cal, here)?;
        let mut by_uid: BTreeMap<String, Marks> = BTreeMap::new();
        for m in &acks {
            by_uid
                .entry(m.uid.clone())
                .or_default()
                .acks
                .push(m.clone());
        }
        for m in &snoozes {
            by_uid
                .entry(m.uid.clone())
                .or_default()
                .snoozes
                .push(m.clone());
        }
        let mut wrote = false;
        for (uid, ms) in by_uid {
            let Some(l) = here.get(&uid) else { continue };
            let unchanged = self
                .tracked
                .values()
                .any(|o| o.uid == uid && o.local_hash == l.hash);
            if let Some(comps) = ms.onto(&l.text, &uid) {
                self.apply.edit(store, &uid, &comps)?;
                wrote = true;
            }
            if unchanged {
                self.ack_only.insert(uid, ms);
            }
        }
        self.report.acknowledged_there = acks.len();
        self.report.snoozed_there = snoozes.len();
        Ok(wrote)
    }

    /// The write of series `uid`'s acknowledgements to `href` met a 412:
    /// the server's copy, marked again, written with its ETag (bounded).
    pub(super) fn reack(
        &mut self,
        store: &mut Store,
        href: &str,
        uid: &str,
        marks: &Marks,
    ) -> Result<()> {
        for _ in 0..ACK_TRIES {
            let Some(f) = self.fetch(&[href.to_owned()])?.into_iter().next() else {
                // Deleted on the server meanwhile: the next sync deletes it here.
                return Ok(());
            };
            let fresh = RemoteObject::read(&f.data);
            self.warn(href, &fresh);
            if let Some(comps) = fresh.series.get(uid) {
                self.acks_in(store, uid, comps)?;
            }
            let Some(comps) = marks.onto(&f.data, uid) else {
                return Ok(()); // Another series now: the next sync sorts it out.
            };
            self.apply.edit(store, uid, &comps)?;
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
