//! Two-way CalDAV accounts (issue #19 §2): a person's calendars on a CalDAV
//! server (Nextcloud, Fastmail, iCloud, Radicale, …) kept in step with
//! Kairos calendars.
//!
//! What it owns:
//! - discovery ([`discover`]): the URL's own `calendar-access`, RFC 6764's
//!   `/.well-known/caldav` and DNS `SRV`/`TXT`, the principal, the calendar
//!   home, the calendars with names, colours and components;
//! - sync ([`sync`]): `sync-collection` (RFC 6578) or ETag comparison in,
//!   conditional writes (`If-Match`, `If-None-Match: *`) out, conflicts by
//!   last writer wins with the loser in `kairos log` ([`plan`]);
//! - accounts ([`account`]), changing them ([`manage`]: calendars chosen,
//!   the list fetched anew, the password), and where their passwords live
//!   ([`secret`]: the OS secret store, or a 0600 file; never the
//!   database); an account's own CA is stored with it (TLS: kairos-tls).
//!
//! What it does not know: SQL (the store's `caldav_*` methods), how a
//! series is stored or its reminders planned (the engine's import path,
//! the same one `kairos import` and Kairos sync use), HTTP details beyond
//! what [libdav](https://docs.rs/libdav) asks of it ([`dav`]).
//!
//! Blocking: each network step runs to its end on a private
//! current-thread runtime, and the store is used between steps.

pub mod account;
pub mod acks;
pub mod acks_out;
pub mod dav;
pub mod discover;
mod error;
pub mod local;
pub mod manage;
pub mod plan;
pub mod secret;
pub mod snooze;
pub mod snooze_due;
pub mod status;
pub mod sync;
pub mod zones;

pub use account::When;
pub use error::{CaldavError, Result};
