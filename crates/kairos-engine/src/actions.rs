//! What a person does to a reminder: dismiss it (RFC 9074 `ACKNOWLEDGED`) or
//! snooze it (RFC 9074: a snooze is a new instance of its own, related to the
//! one it snoozes). Shared by the CLI and the desktop app; each is one
//! guarded transaction, so a dismissal racing with the engine's firing, or
//! with another window's snooze, has exactly one winner.

use chrono::{DateTime, Duration, Utc};
use kairos_store::{NewInstance, State, Store, StoreError};

/// Why an action did nothing.
#[derive(Debug, thiserror::Error)]
pub enum ActionError {
    /// No instance has this key.
    #[error("no reminder with key {0:?} (see `kairos upcoming`)")]
    NotFound(String),
    /// The instance is in a state the action does not apply to.
    #[error("reminder {key:?} is {state}; nothing to do")]
    NotApplicable {
        /// Instance key.
        key: String,
        /// Its state.
        state: State,
    },
    /// The snooze length is not positive or too long.
    #[error("snooze length must be between 1 minute and 7 days, got {0} s")]
    BadLength(i64),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
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

fn not_changed(store: &Store, key: &str) -> ActionError {
    match store.get(key) {
        Ok(None) => ActionError::NotFound(key.to_owned()),
        Ok(Some(i)) => ActionError::NotApplicable {
            key: key.to_owned(),
            state: i.state,
        },
        Err(e) => e.into(),
    }
}

/// Acknowledges `key`: it will not fire (again).
///
/// # Errors
/// Unknown key, a state it does not apply to, store failures.
pub fn dismiss(store: &mut Store, key: &str, now: DateTime<Utc>) -> Result<(), ActionError> {
    if store.transition(
        key,
        &DISMISSABLE,
        State::Acknowledged,
        "dismissed by the user",
        now,
    )? {
        Ok(())
    } else {
        Err(not_changed(store, key))
    }
}

/// Snoozes `key` for `length`: the instance becomes `snoozed` and a new one,
/// keyed `KEY~snooze@<instant>`, fires at `now + length`. Returns the new key
/// and its trigger.
///
/// # Errors
/// Unknown key, a state it does not apply to, a length outside 1 min – 7 days,
/// store failures.
pub fn snooze(
    store: &mut Store,
    key: &str,
    length: Duration,
    now: DateTime<Utc>,
) -> Result<(String, DateTime<Utc>), ActionError> {
    if length < Duration::seconds(1) || length > Duration::days(7) {
        return Err(ActionError::BadLength(length.num_seconds()));
    }
    let Some(orig) = store.get(key)? else {
        return Err(ActionError::NotFound(key.to_owned()));
    };
    let at = now + length;
    let new_key = format!("{key}~snooze@{}", at.format("%Y%m%dT%H%M%SZ"));
    let done = store.write(|tx| -> Result<bool, StoreError> {
        if !tx.transition(
            key,
            &SNOOZABLE,
            State::Snoozed,
            &format!("snoozed until {}", at.to_rfc3339()),
            now,
        )? {
            return Ok(false);
        }
        let inst = NewInstance {
            key: new_key.clone(),
            calendar: orig.calendar,
            event_uid: orig.event_uid.clone(),
            occurrence: orig.occurrence.clone(),
            alarm: orig.alarm.clone(),
            repetition: orig.repetition,
            rule_version: orig.rule_version,
            trigger_at: at,
            snooze_of: Some(key.to_owned()),
            payload: orig.payload.clone(),
        };
        tx.insert_instances(&[inst], now)?;
        Ok(true)
    })?;
    if done {
        Ok((new_key, at))
    } else {
        Err(not_changed(store, key))
    }
}
