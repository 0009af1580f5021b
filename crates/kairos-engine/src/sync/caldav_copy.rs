//! A linked calendar's series as the CalDAV side sees it: one `VCALENDAR`
//! text per `UID` and its hash. kairos-caldav keeps, per server object, the
//! hash of the series as stored right after its last sync; a series whose
//! hash still matches is the server's copy, unchanged here, and any other
//! (edited, or never written to the server) holds a change made here.
//!
//! Joining a Kairos sync account reads this ([`Synced::origin`]): only a
//! series that is the server's copy is sent marked ([`super::caldav::MARK`]);
//! an edit not yet written to the server is sent as what it is, an edit
//! made here, so every linked device applies it and writes it back.

use std::collections::HashMap;

use kairos_store::{CalendarId, StoreError, StoredEvent, Tx};
use sha2::{Digest, Sha256};

use super::caldav::Origin;
use crate::error::EngineError;

/// Wraps stored components into one `VCALENDAR` object.
#[must_use]
pub fn wrap<'a>(components: impl Iterator<Item = &'a str>) -> String {
    let mut out =
        String::from("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Kairos//CalDAV//EN\r\n");
    for c in components {
        out.push_str(c.trim_end());
        out.push_str("\r\n");
    }
    out.push_str("END:VCALENDAR\r\n");
    out
}

/// Hex SHA-256.
#[must_use]
pub fn hash(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The components of one series of calendar `cal` (master first, then
/// overrides by `RECURRENCE-ID`) as the one object the CalDAV sync writes.
///
/// # Errors
/// A component that cannot be read back.
pub fn series_text(group: &[&StoredEvent], cal: CalendarId) -> Result<String, EngineError> {
    let mut group = group.to_vec();
    group.sort_by(|a, b| a.recurrence_id.cmp(&b.recurrence_id));
    let blocks = group
        .iter()
        .map(|e| crate::series::component_text(e, &format!("#{}", cal.0)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(wrap(blocks.iter().map(String::as_str)))
}

/// The hashes kairos-caldav kept at the last CalDAV sync of one linked
/// calendar, by series `UID` (read once per calendar, not once per series);
/// `None`: the calendar is not linked here.
pub(crate) struct Synced {
    cal: CalendarId,
    hashes: Option<HashMap<String, Vec<String>>>,
}

impl Synced {
    /// Reads calendar `cal`'s.
    ///
    /// # Errors
    /// Store failures.
    pub(crate) fn of(tx: &Tx<'_>, cal: CalendarId) -> Result<Self, StoreError> {
        let hashes = match tx.caldav_calendar_of(cal)? {
            None => None,
            Some(cc) => {
                let mut by_uid: HashMap<String, Vec<String>> = HashMap::new();
                for o in tx.caldav_objects(cc.id)? {
                    by_uid.entry(o.uid).or_default().push(o.local_hash);
                }
                Some(by_uid)
            }
        };
        Ok(Self { cal, hashes })
    }

    /// Where series `uid` (its components `group`) comes from, for the
    /// `put` that joining an account records: fetched (the server's copy,
    /// unchanged here since this device's last CalDAV sync) or made here
    /// (an edit or a new series not yet written to the server). A calendar
    /// not linked here: made here (the mark only applies to linked
    /// calendars anyway).
    ///
    /// # Errors
    /// A component that cannot be read back.
    pub(crate) fn origin(&self, uid: &str, group: &[StoredEvent]) -> Result<Origin, EngineError> {
        let Some(synced) = self.hashes.as_ref().and_then(|h| h.get(uid)) else {
            return Ok(Origin::Here);
        };
        let refs: Vec<&StoredEvent> = group.iter().collect();
        let here = hash(&series_text(&refs, self.cal)?);
        Ok(if synced.contains(&here) {
            Origin::Fetched
        } else {
            Origin::Here
        })
    }
}
