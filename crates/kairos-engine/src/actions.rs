//! What a person does to a reminder: dismiss it (RFC 9074 `ACKNOWLEDGED`) or
//! snooze it (RFC 9074: a snooze is a new instance of its own, related to the
//! one it snoozes). Shared by the CLI and the desktop app; each is one
//! guarded transaction, so a dismissal racing with the engine's firing, or
//! with another window's snooze, has exactly one winner.

use chrono::{DateTime, Duration, Utc};
use kairos_proto::{AckState, Body, Hlc, Op};
use kairos_store::{State, Store, StoreError, Tx};

use crate::reminder::{base_key, snooze_key};
use crate::sync::acks::enforce;
use crate::sync::record;

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

pub use crate::reminder::{DISMISSABLE, SNOOZABLE};

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

/// Acknowledges the reminder `key` belongs to, everywhere: it (and any
/// snooze of it) will not fire again, here or, once synced, on the account's
/// other devices. Recorded for sync in the same transaction.
///
/// # Errors
/// Unknown key, a state it does not apply to, store failures.
pub fn dismiss(store: &mut Store, key: &str, now: DateTime<Utc>) -> Result<(), ActionError> {
    applicable(store, key, &DISMISSABLE)?;
    let base = base_key(key).to_owned();
    let body = Body::ReminderDismiss { key: base.clone() };
    store.write(|tx| -> Result<(), StoreError> {
        let ack = acknowledge(tx, body, now)?;
        // The instance named must end acknowledged even when it is not of
        // the reminder's instances this device knows by base (legacy
        // chained snooze keys).
        enforce(tx, &base, &ack, "here", now)?;
        tx.transition(
            key,
            &DISMISSABLE,
            State::Acknowledged,
            "dismissed by the user",
            now,
        )?;
        Ok(())
    })?;
    Ok(())
}

/// Acknowledges the reminder `key` belongs to as dismissed outside Kairos
/// (`by`, e.g. a CalDAV server's RFC 9074 `ACKNOWLEDGED`): the same path
/// as [`dismiss`] (recorded for Kairos sync, so devices without that
/// account get it too; every open instance of the reminder acknowledged),
/// and returns what was shown here and must be taken back.
///
/// # Errors
/// Store failures.
pub fn dismiss_from(
    store: &mut Store,
    key: &str,
    by: &str,
    now: DateTime<Utc>,
) -> Result<Vec<crate::channel::Withdrawal>, ActionError> {
    let base = base_key(key).to_owned();
    let body = Body::ReminderDismiss { key: base.clone() };
    let out = store.write(|tx| -> Result<_, StoreError> {
        let ack = acknowledge(tx, body, now)?;
        enforce(tx, &base, &ack, by, now)
    })?;
    Ok(out)
}

/// Snoozes the reminder `key` belongs to until `until`, as done outside
/// Kairos (`by`, e.g. a CalDAV server's RFC 9074 snooze alarm): the same
/// path as [`snooze`] (recorded for Kairos sync, the snooze instance keyed
/// `BASE~snooze@<until>` on every device) without its length limits (the
/// time is another client's), and returns what was shown here and must be
/// taken back.
///
/// # Errors
/// Store failures.
pub fn snooze_from(
    store: &mut Store,
    key: &str,
    until: DateTime<Utc>,
    by: &str,
    now: DateTime<Utc>,
) -> Result<Vec<crate::channel::Withdrawal>, ActionError> {
    let until = DateTime::from_timestamp(until.timestamp(), 0).unwrap_or(until);
    let base = base_key(key).to_owned();
    let body = Body::ReminderSnooze {
        key: base.clone(),
        until,
    };
    let out = store.write(|tx| -> Result<_, StoreError> {
        let ack = acknowledge(tx, body, now)?;
        enforce(tx, &base, &ack, by, now)
    })?;
    Ok(out)
}

/// Hides `key` on this device only ("hide here"): not recorded for sync,
/// so the account's other devices still remind. An escalating reminder is
/// hidden whole (its base and every repetition), so it stops nagging here.
///
/// # Errors
/// Unknown key, a state it does not apply to, store failures.
pub fn dismiss_here(store: &mut Store, key: &str, now: DateTime<Utc>) -> Result<(), ActionError> {
    let hidden = store.write(|tx| -> Result<bool, StoreError> {
        let hidden = tx.transition(
            key,
            &DISMISSABLE,
            State::Acknowledged,
            "dismissed on this device only",
            now,
        )?;
        if hidden {
            crate::escalate::quiet_here(tx, key, now)?;
        }
        Ok(hidden)
    })?;
    if hidden {
        Ok(())
    } else {
        Err(not_changed(store, key))
    }
}

/// Snoozes the reminder `key` belongs to for `length`: it becomes
/// `snoozed` and a new instance, keyed `BASE~snooze@<instant>` (the same on
/// every device), fires at `now + length`; an earlier snooze of the same
/// reminder is replaced. Recorded for sync. Returns the new key and its
/// trigger.
///
/// # Errors
/// Unknown key, a state it does not apply to, a length outside 1 s – 7 days,
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
    applicable(store, key, &SNOOZABLE)?;
    // Whole seconds: the key names the second, and every device must
    // compute the same one.
    let at = DateTime::from_timestamp(now.timestamp() + length.num_seconds(), 0).unwrap_or(now);
    let base = base_key(key).to_owned();
    let body = Body::ReminderSnooze {
        key: base.clone(),
        until: at,
    };
    store.write(|tx| -> Result<(), StoreError> {
        let ack = acknowledge(tx, body, now)?;
        enforce(tx, &base, &ack, "here", now)?;
        Ok(())
    })?;
    Ok((snooze_key(&base, at), at))
}

/// Fails unless `key` exists in one of `states`.
fn applicable(store: &Store, key: &str, states: &[State]) -> Result<(), ActionError> {
    match store.get(key)? {
        None => Err(ActionError::NotFound(key.to_owned())),
        Some(i) if states.contains(&i.state) => Ok(()),
        Some(i) => Err(ActionError::NotApplicable {
            key: key.to_owned(),
            state: i.state,
        }),
    }
}

/// Records an acknowledgement made here and returns the reminder's merged
/// record. On a database that never joined an account nothing is
/// recorded; the record is this op alone.
pub(crate) fn acknowledge(
    tx: &Tx<'_>,
    body: Body,
    now: DateTime<Utc>,
) -> Result<AckState, StoreError> {
    if let Some(op) = record(tx, body.clone(), now)? {
        let base = match &op.body {
            Body::ReminderDismiss { key } | Body::ReminderSnooze { key, .. } => key.clone(),
            _ => String::new(),
        };
        return Ok(tx
            .ack(&base)?
            .map(|t| crate::sync::decode_ack(&t))
            .unwrap_or_default());
    }
    let op = Op {
        id: "local:0".to_owned(),
        hlc: Hlc {
            ms: u64::try_from(now.timestamp_millis()).unwrap_or(0),
            counter: 0,
            device: "local".to_owned(),
        },
        device: "local".to_owned(),
        base: None,
        body,
    };
    let mut ack = AckState::default();
    ack.apply(&op);
    Ok(ack)
}
