//! What the engine announces ([`EngineEvent`]) and what other parts of the
//! process tell it ([`Notice`]).

use chrono::{DateTime, Utc};

use crate::channel::Withdrawal;

/// What the engine announces to whoever subscribed ([`Engine::subscribe`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineEvent {
    /// A reminder was delivered (and recorded).
    Fired {
        /// Its key.
        key: String,
    },
    /// A reminder was acknowledged on another device (dismissed, or
    /// snoozed until `until`).
    Acknowledged {
        /// The reminder's base key.
        key: String,
        /// The device.
        by: String,
        /// `Some(until)` for a snooze, `None` for a dismissal.
        snoozed_until: Option<DateTime<Utc>>,
    },
    /// A reminder shown here was acknowledged elsewhere and taken back.
    Withdrawn(Withdrawal),
    /// The database changed under the engine (another process, another
    /// device): whoever shows its contents should read them again. Sent by
    /// the host that runs the engine.
    Changed,
}

/// What other parts of the process (the sync client) tell the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// Take this back from the channels that showed it.
    Withdraw(Withdrawal),
    /// Announce this (an acknowledgement from another device).
    Announce(EngineEvent),
}

/// Where other parts of the process hand the engine [`Notice`]s; the
/// engine's loop acts on them when it next wakes.
pub type NoticeSender = std::sync::mpsc::Sender<Notice>;
