//! Helpers shared by the integration tests.

use chrono::{DateTime, Utc};
use kairos_core::model::Calendar;
use kairos_core::{Limits, ics, query};

/// Parses an iCalendar text, panicking with the error (tests only).
pub fn cal(text: &str) -> Calendar {
    match ics::parse_calendar(text.as_bytes(), &Limits::default()) {
        Ok(c) => c,
        Err(e) => panic!("parse failed: {e}\n{text}"),
    }
}

/// Wraps VEVENT/VTIMEZONE text in a VCALENDAR.
pub fn wrap(body: &str) -> String {
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n{}\r\nEND:VCALENDAR\r\n",
        body.trim().replace('\n', "\r\n")
    )
}

/// An RFC 3339 instant (tests only).
pub fn t(s: &str) -> DateTime<Utc> {
    match DateTime::parse_from_rfc3339(s) {
        Ok(t) => t.with_timezone(&Utc),
        Err(e) => panic!("bad instant {s}: {e}"),
    }
}

/// The displayed starts of every occurrence in `[from, to)`, floating in `tz`.
pub fn starts(cal: &Calendar, from: &str, to: &str, tz: chrono_tz::Tz) -> Vec<String> {
    match query::occurrences(cal, t(from), t(to), tz, &Limits::default()) {
        Ok(v) => v.iter().map(|o| o.start.display(tz)).collect(),
        Err(e) => panic!("query failed: {e}"),
    }
}
