//! Helpers shared by the engine's integration tests.

use chrono::{DateTime, Utc};
use kairos_core::{Limits, ics};

/// An instant from RFC 3339.
pub fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .expect("instant")
        .with_timezone(&Utc)
}

/// The tests' usual "now": 2026-06-01 08:00 UTC.
pub fn now() -> DateTime<Utc> {
    at("2026-06-01T08:00:00Z")
}

/// A calendar from the components in `body` (LF line ends allowed).
pub fn cal(body: &str) -> kairos_core::model::Calendar {
    let text = format!(
        "BEGIN:VCALENDAR\r\n{}\r\nEND:VCALENDAR\r\n",
        body.trim().replace('\n', "\r\n")
    );
    ics::parse_calendar(text.as_bytes(), &Limits::default()).expect("valid")
}
