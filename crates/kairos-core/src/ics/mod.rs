//! iCalendar (RFC 5545) text: [`lexer`] splits it into located content lines and
//! components, `import` maps them to the model, `export` writes the model back.
//!
//! We parse content lines ourselves rather than through `calcard` or `icalendar`:
//! both are lenient by design (they keep going past a broken line and do not
//! report where it was), and our contract is one clear error naming the line and
//! property. `calcard` is still used for what it does best, mapping Windows and
//! vendor `TZID`s to IANA zones (see `tz`).

mod export;
mod import;
pub mod lexer;
pub mod values;

pub use export::{duration as format_duration, write_calendar};
pub use import::parse_calendar;
