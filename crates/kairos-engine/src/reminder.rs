//! What names a reminder and what may be done to it: the key forms of its
//! snoozes and repetitions, and the states an action applies to. Depends on
//! nothing else in the crate.

use chrono::{DateTime, Utc};
use kairos_store::State;

/// What separates a base key from a repetition's number.
pub const AGAIN: &str = "~again@";

/// The key of the instance a snooze until `until` creates: the same on
/// every device.
#[must_use]
pub fn snooze_key(base: &str, until: DateTime<Utc>) -> String {
    format!("{base}~snooze@{}", until.format("%Y%m%dT%H%M%SZ"))
}

/// The reminder an instance key belongs to: the key without its
/// `~snooze@…` or `~again@k` part.
#[must_use]
pub fn base_key(key: &str) -> &str {
    let cut = [key.find("~snooze@"), key.find(AGAIN)]
        .into_iter()
        .flatten()
        .min();
    cut.map_or(key, |i| &key[..i])
}

/// States from which a reminder can be dismissed.
pub const DISMISSABLE: [State; 6] = [
    State::Pending,
    State::Firing,
    State::Delivered,
    State::Failed,
    State::Snoozed,
    State::Missed,
];

/// States from which a reminder can be snoozed.
pub const SNOOZABLE: [State; 5] = [
    State::Pending,
    State::Firing,
    State::Delivered,
    State::Failed,
    State::Missed,
];
