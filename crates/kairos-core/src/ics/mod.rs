//! iCalendar (RFC 5545) text: [`lexer`] splits it into located content lines and
//! components, `import` maps them to the model, `export` writes the model back.
//!
//! Reading is strict ([`parse_calendar`]: the first problem refuses the file,
//! naming its line and property) or lenient ([`parse_calendar_lenient`]: a
//! broken event, alarm or property is skipped or repaired with a [`Warning`],
//! and everything else is imported). Both run the same code; see `warning`.
//!
//! We parse content lines ourselves rather than through `calcard` or `icalendar`:
//! both are lenient by design without saying what they dropped or where, and
//! our contract is a clear line and property for every problem. `calcard` is
//! still used for what it does best, mapping Windows and vendor `TZID`s to
//! IANA zones (see `tz`).

mod alarm;
mod dates;
mod decode;
mod export;
mod import;
pub mod lexer;
mod nesting;
mod series;
mod structure;
mod todo;
pub mod values;
mod warning;
mod zones;

pub use export::{custom_zones, duration as format_duration, write_calendar};
pub(crate) use import::raw;
pub use import::{parse_calendar, parse_calendar_lenient, parse_calendar_strict};
pub use warning::Warning;
pub(crate) use warning::{At, Sink};
pub(crate) use zones::name as zone_name;
