//! ICS URL subscriptions (issue #19 §1): a calendar whose content is a
//! feed on the web, kept current.
//!
//! - [`url`]: which URLs are taken (`webcal://` is fetched as `https://`);
//! - [`fetch`]: one GET with `If-None-Match` / `If-Modified-Since`, gzip,
//!   bounded redirects, connect and total timeouts, and a size limit read
//!   incrementally ([`fetch::Limits`]);
//! - [`body`]: is it a calendar? (empty, HTML and garbage are refused:
//!   they must never wipe the calendar);
//! - [`schedule`]: when next — jittered interval, exponential backoff,
//!   `Retry-After` (pure);
//! - [`refresh`]: subscribe, refresh, remove — the content replaced through
//!   the engine's import in `Mode::Replace`, the path `kairos import
//!   --replace` takes;
//! - [`runner`]: the loop a host (`kairos daemon`, the desktop app) runs on
//!   a thread of its own.
//!
//! It knows HTTP and the schedule; it knows no SQL (the rows are
//! `kairos-store`'s) and no iCalendar text beyond handing bytes to the
//! core's lenient reader.

pub mod body;
pub mod error;
pub mod fetch;
pub mod refresh;
pub mod runner;
pub mod schedule;
pub mod url;

pub use error::{FeedError, Kind};
pub use fetch::{Fetcher, Limits};
pub use refresh::{Outcome, Refreshed, Refresher};
