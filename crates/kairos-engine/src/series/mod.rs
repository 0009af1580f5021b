//! The one place where the engine turns a series into its stored and wire
//! forms and back. Everything else passes the core's typed model
//! ([`Event`], [`Calendar`]).
//!
//! Both forms are still iCalendar text today: a stored row is one `VEVENT`
//! (or `VTODO`) block, an op's `ics` is the series' blocks in a row. The
//! typed stored form (issue #18 §2) replaces [`encode`] and [`decode`] here
//! and in no other file; the wire keeps [`wire_text`] and [`from_wire`].

use chrono::{DateTime, Utc};
use kairos_core::Limits;
use kairos_core::model::{Calendar, Event, When, Zone};
use kairos_store::StoredEvent;

use crate::error::EngineError;

/// One component as stored: a `VEVENT` (or a task's `VTODO`) block of
/// iCalendar text.
pub(crate) fn encode(ev: &Event) -> String {
    let one = Calendar {
        name: None,
        events: vec![ev.clone()],
        extra: Vec::new(),
    };
    // DTSTAMP is kept from the source when it has one; otherwise a fixed
    // stamp, so that re-importing the same file changes nothing.
    let text = kairos_core::ics::write_calendar(&one, DateTime::<Utc>::UNIX_EPOCH);
    let kind = if ev.todo.is_some() { "VTODO" } else { "VEVENT" };
    let start = text.find(&format!("BEGIN:{kind}")).unwrap_or(0);
    let end = text
        .rfind(&format!("END:{kind}"))
        .map_or(text.len(), |i| i + "END:\r\n".len() + kind.len());
    text[start..end.min(text.len())].to_owned()
}

/// The stored components `events` of calendar `name`, read back (strictly:
/// the store holds only what [`encode`] wrote).
///
/// # Errors
/// A stored component that no longer reads (named by its calendar).
pub(crate) fn decode(
    events: &[StoredEvent],
    name: &str,
    limits: &Limits,
) -> Result<Calendar, EngineError> {
    let mut text =
        String::from("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Kairos//engine//EN\r\n");
    for e in events {
        text.push_str(e.ics.trim_end());
        text.push_str("\r\n");
    }
    text.push_str("END:VCALENDAR\r\n");
    kairos_core::ics::parse_calendar(text.as_bytes(), limits).map_err(|source| {
        EngineError::Calendar {
            calendar: name.to_owned(),
            uid: "(calendar)".into(),
            source,
        }
    })
}

/// The key a component's row has beside its `UID`: `""` for a master,
/// else its `RECURRENCE-ID` as [`rid_text`] writes it.
pub(crate) fn rid_key(ev: &Event) -> String {
    ev.recurrence_id.as_ref().map(rid_text).unwrap_or_default()
}

/// A `RECURRENCE-ID` as the store keys it: `YYYYMMDD`, or the local time
/// with its zone (`Europe/Berlin:20260310T090000`, `…Z`, or floating).
fn rid_text(w: &When) -> String {
    match w {
        When::Date(d) => d.format("%Y%m%d").to_string(),
        When::DateTime { local, zone } => {
            let t = local.format("%Y%m%dT%H%M%S");
            match zone {
                Zone::Utc => format!("{t}Z"),
                Zone::Floating => t.to_string(),
                Zone::Tz(tz) => format!("{}:{t}", tz.name()),
                // Stored as UTC, as kairos_core's export writes it.
                Zone::Custom(c) => format!("{}Z", c.resolve(*local).format("%Y%m%dT%H%M%S")),
            }
        }
    }
}

/// The stored components of one series as one op's `ics` text (the sync
/// wire's form).
pub(crate) fn wire_text<'a>(components: impl Iterator<Item = &'a StoredEvent>) -> String {
    let mut out = String::new();
    for c in components {
        out.push_str(c.ics.trim_end());
        out.push_str("\r\n");
    }
    out
}

/// The components an op's `ics` text holds.
///
/// # Errors
/// Text that does not read as iCalendar components.
pub(crate) fn from_wire(ics: &str) -> Result<Vec<Event>, kairos_core::Error> {
    let text = format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Kairos//sync//EN\r\n{}\r\nEND:VCALENDAR\r\n",
        ics.trim_end()
    );
    kairos_core::ics::parse_calendar(text.as_bytes(), &Limits::default()).map(|c| c.events)
}
