//! The Kairos reminder engine: fires each reminder at its wall-clock time,
//! exactly once per (event, occurrence, alarm, channel), through crashes,
//! restarts, suspend and clock changes.
//!
//! This crate knows time, channels and the delivery state machine. It does not
//! know SQL (that is `kairos-store`) or iCalendar (that is `kairos-core`).
//!
//! Pieces so far:
//! - [`actions`]: dismiss and snooze, as one guarded transaction each;
//! - [`clock`]: time as an input ([`clock::Clock`]);
//! - [`wake`]: sleeping until a wall-clock instant, woken by clock changes;
//! - [`platform`]: what differs between operating systems (the timer,
//!   signals, the lock holder's PID, file permissions), with fallbacks;
//! - [`channel`]: where reminders go (`stdout`, `command`);
//! - [`policy`]: catch-up, failure classes and retry backoff;
//! - [`materialise`]: which instances exist, with which keys;
//! - [`preview`]: reminders beyond the horizon, computed read-only.

pub mod actions;
pub mod channel;
pub mod clock;
pub mod daemon;
pub mod engine;
pub mod error;
pub mod escalate;
pub mod events;
pub mod import;
pub mod materialise;
pub mod meta;
pub mod platform;
pub mod policy;
pub mod preview;
pub mod reminder;
pub mod series;
pub mod sync;
pub mod tasks;
pub use platform::wake;
pub mod workdays;
