//! The Kairos calendar core: what events, alarms and recurrences *mean*, and
//! when things happen. Pure computation: no I/O, no clock, no async, no SQL.
//! Every function that needs "now" takes it as an argument.
//!
//! The pieces, in the order data flows through them:
//! - [`ics`] reads iCalendar text into the [`model`] (and writes it back),
//!   naming the line and property of anything it rejects;
//! - [`tz`] maps `TZID`s, including Windows names and custom `VTIMEZONE`s, to
//!   IANA zones; [`time`] applies RFC 5545's rules for local times in DST gaps
//!   and overlaps and for nominal versus exact durations;
//! - [`recur`] expands `RRULE`/`RDATE`/`EXDATE` lazily, from any instant;
//! - [`query`] answers window queries with overrides applied, and [`alarms`]
//!   turns occurrences into trigger instants with stable [`alarms::InstanceKey`]s.
//!
//! ```
//! use kairos_core::{ics, query, Limits};
//! let text = "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:standup\r\nSUMMARY:Stand-up\r\n\
//!             DTSTART;TZID=Europe/Berlin:20260323T090000\r\nRRULE:FREQ=DAILY;COUNT=10\r\n\
//!             END:VEVENT\r\nEND:VCALENDAR\r\n";
//! let cal = ics::parse_calendar(text.as_bytes(), &Limits::default()).unwrap();
//! let from = "2026-03-28T00:00:00Z".parse().unwrap();
//! let to = "2026-03-31T00:00:00Z".parse().unwrap();
//! let occ = query::occurrences(&cal, from, to, chrono_tz::UTC, &Limits::default()).unwrap();
//! // 09:00 Berlin stays 09:00 across the change to summer time on 29 March.
//! let starts: Vec<_> = occ.iter().map(|o| o.start.display(chrono_tz::UTC)).collect();
//! assert_eq!(starts, ["2026-03-28T09:00:00+01:00", "2026-03-29T09:00:00+02:00", "2026-03-30T09:00:00+02:00"]);
//! ```

pub mod alarms;
pub mod error;
pub mod escalation;
#[doc(hidden)]
pub mod fuzzing;
pub mod ics;
pub mod model;
mod order;
pub mod query;
pub mod recur;
pub mod time;
pub mod tz;
mod upcoming;
pub mod workdays;

pub use error::{Error, Limits};
