//! Kairos's persistence: one SQLite file holding calendars, events, reminder
//! instances, their deliveries and an audit trail. This is the only crate that
//! knows SQL.
//!
//! What it owns:
//! - the schema, from the numbered, append-only files in the workspace's
//!   `migrations/` (embedded at build time, applied at [`Store::open`] with
//!   `rusqlite_migration`); SQLite is bundled, in WAL mode, with foreign keys
//!   on and a busy timeout;
//! - typed queries and transactions as closures ([`Store::write`],
//!   [`Store::read`]); the idempotency rules that make a reminder fire once:
//!   unique instance keys, guarded state transitions ([`Tx::transition`]), at
//!   most one successful delivery per instance and channel, enforced by the
//!   database itself;
//! - an advisory single-writer lease ([`Tx::try_acquire_lease`]);
//! - errors that name the file, say what to do, and classify themselves
//!   ([`StoreError::kind`], [`StoreError::is_retryable`]).
//!
//! What it does not know: iCalendar or the engine's typed form (an event's
//! body is stored verbatim, tagged with its [`Form`]; the
//! instance key is whatever string the caller computed), which state changes
//! are legal (the engine's state machine), tokio or any async runtime (every
//! call blocks: run it on a dedicated thread), channels, and the clock: every
//! time is an argument, stored as unix milliseconds UTC.
//!
//! Opening never changes a file it then refuses: one that is not a database,
//! not Kairos's, or from a newer Kairos is left byte for byte as it was.
//!
//! ```
//! use chrono::{TimeZone, Utc};
//! use kairos_store::{NewInstance, Outcome, Recorded, State, Store};
//!
//! let mut store = Store::open_in_memory()?;
//! let now = Utc.with_ymd_and_hms(2026, 3, 23, 8, 0, 0).unwrap();
//! let cal = store.ensure_calendar("work", now)?;
//! store.insert_instances(
//!     &[NewInstance {
//!         key: "work/standup/2026-03-23T08:00:00Z/#0".into(),
//!         calendar: cal,
//!         event_uid: "standup".into(),
//!         occurrence: "2026-03-23T08:00:00Z".into(),
//!         alarm: "#0".into(),
//!         repetition: 0,
//!         rule_version: 1,
//!         trigger_at: Utc.with_ymd_and_hms(2026, 3, 23, 7, 45, 0).unwrap(),
//!         snooze_of: None,
//!         payload: r#"{"summary":"Stand-up"}"#.into(),
//!     }],
//!     now,
//! )?;
//! let due = store.due(now, 10)?;
//! let key = &due[0].key;
//! // Claim, deliver, record: one transaction; a second engine's claim fails.
//! store.write(|tx| {
//!     assert!(tx.transition(key, &[State::Pending], State::Firing, "due", now)?);
//!     let r = tx.record_delivery(key, "stdout", Outcome::Delivered, None, Some(3), now)?;
//!     assert_eq!(r, Recorded::Recorded);
//!     tx.transition(key, &[State::Firing], State::Delivered, "shown", now)
//! })?;
//! assert!(!store.transition(key, &[State::Pending], State::Firing, "due", now)?);
//! assert_eq!(store.audit_of(key)?.len(), 4); // scheduled, firing, delivery, delivered
//! # Ok::<(), kairos_store::StoreError>(())
//! ```

mod error;
mod open;
mod sql;
mod store;
mod sync;
mod types;

pub use error::{ErrorKind, Result, StoreError};
pub use open::{APPLICATION_ID, Options, SCHEMA_VERSION};
pub use sql::{
    CaldavAccount, CaldavCalendar, CaldavObject, Delivered, OutboxRow, RefreshResult, Register,
};
pub use store::{Reader, Store, Tx};
pub use sync::WalSync;
pub use types::{
    AuditRow, Calendar, CalendarId, CalendarSettings, Delivery, Form, Instance, Lease, NewInstance,
    Outcome, Recorded, State, StoredEvent, Subscription, WorkSettings,
};
