//! Kairos sync and CalDAV together (issue #19 §2: "nothing is applied
//! twice and keys agree on every device").
//!
//! The rule: **a device that links a calendar to a CalDAV collection takes
//! that calendar's series from the CalDAV server, and from Kairos sync
//! only what no CalDAV link put on the server.** A series op recorded by a
//! device that links the calendar carries [`MARK`] as the first line of
//! its `ics` (a `VCALENDAR`-level property: every reader, older peers and
//! the server's replica too, reads it as a calendar property and ignores
//! it). A device that links the calendar itself applies such an op's
//! register (so its clock, cursor and later ops' `base` agree with the
//! account) but not its content: that content is, or will be, on the
//! server, and this device's own CalDAV sync brings it. An unmarked op (an
//! edit made on a device without the link) is applied as usual, and the
//! linked device writes it back to the server. A device without the link
//! applies every op.
//!
//! Deletions carry no text, so they carry no mark: they are applied
//! everywhere, which is harmless (deleting what is gone changes nothing).
//!
//! Architecture Invariant: this module knows the `caldav_calendars` link
//! and the op's text; no HTTP (that is kairos-caldav's).

use kairos_proto::Body;
use kairos_store::{StoreError, Tx};

/// The first line of a series op's `ics` recorded by a device that links
/// the calendar to CalDAV.
pub const MARK: &str = "X-KAIROS-SOURCE:CALDAV";

/// `meta` key (local, never synced): set, to the op's stamp, when a series
/// op was left to this device's CalDAV sync. The server has a change this
/// device has not fetched yet: a running host syncs its accounts at once
/// (not at their next interval, when the old reminder may have rung) and
/// clears it ([`fetch_done`]).
pub const FETCH_DUE: &str = "caldav.fetch_due";

/// Clears [`FETCH_DUE`] if it still holds `seen` (a later op's mark stays
/// for the next sync).
///
/// # Errors
/// Store failures.
pub fn fetch_done(store: &mut kairos_store::Store, seen: &str) -> Result<(), StoreError> {
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

/// `body`, marked when it is a series put of a calendar linked here.
pub(crate) fn mark(tx: &Tx<'_>, body: Body) -> Result<Body, StoreError> {
    match body {
        Body::SeriesPut { calendar, uid, ics } if !is_marked(&ics) && linked(tx, &calendar)? => {
            Ok(Body::SeriesPut {
                ics: format!("{MARK}\r\n{ics}"),
                calendar,
                uid,
            })
        }
        other => Ok(other),
    }
}

/// Whether a series op's text was recorded by a device with a CalDAV link.
#[must_use]
pub fn is_marked(ics: &str) -> bool {
    ics.strip_prefix(MARK)
        .is_some_and(|rest| rest.starts_with("\r\n") || rest.starts_with('\n'))
}

/// Whether `body`'s content is left to this device's own CalDAV sync: a
/// marked series put of a calendar linked here.
pub(crate) fn left_to_caldav(tx: &Tx<'_>, body: &Body) -> Result<bool, StoreError> {
    match body {
        Body::SeriesPut { calendar, ics, .. } if is_marked(ics) => linked(tx, calendar),
        _ => Ok(false),
    }
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
