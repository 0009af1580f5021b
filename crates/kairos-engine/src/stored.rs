//! Stored components read back: one calendar's rows as the core's model.

use kairos_core::Limits;
use kairos_core::model::Calendar;
use kairos_store::StoredEvent;

use crate::engine::EngineError;

/// The stored components `events` of calendar `name`, parsed (strictly: the
/// store holds only what the importer wrote).
///
/// # Errors
/// A stored component that no longer reads (named by its calendar).
pub(crate) fn calendar(
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
