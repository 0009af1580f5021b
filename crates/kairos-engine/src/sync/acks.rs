//! What an acknowledgement record (RFC 9074) does to the instances of one
//! reminder on this device. The same function serves a dismiss or snooze
//! made here and one that arrived from another device, so both end in the
//! same rows.
//!
//! A reminder is its base instance (`KEY`), its snoozes
//! (`KEY~snooze@…`) and, when it escalates, its repetitions
//! (`KEY~again@k`, see `crate::escalate`). Given the merged record:
//! - dismissed: every instance that can still fire or is shown becomes
//!   `acknowledged` (a `snoozed` one stays: its snooze is what is
//!   acknowledged);
//! - snoozed until T: the base becomes `snoozed`, the snooze instance
//!   `KEY~snooze@T` exists (pending unless it fired already), and every
//!   other snooze and every repetition of the reminder is acknowledged
//!   (the latest snooze won; a snoozed reminder stops escalating);
//! - open: nothing.
//!
//! An instance that was *shown* here (delivered, missed, or being
//! delivered) and is taken back is returned as a [`Withdrawal`], so the
//! channel that showed it can close it.

use chrono::{DateTime, Utc};
use kairos_proto::{AckState, Effective};
use kairos_store::{Instance, NewInstance, State, StoreError, Tx};

use crate::channel::{WithdrawReason, Withdrawal};
use crate::reminder::{DISMISSABLE, SNOOZABLE};
pub use crate::reminder::{base_key, snooze_key};

/// Instances a dismissal acknowledges: those that can still fire or are
/// shown (what [`DISMISSABLE`] names, but `snoozed`).
pub(crate) const OPEN: [State; 5] = [
    State::Pending,
    State::Firing,
    State::Delivered,
    State::Failed,
    State::Missed,
];

/// Shown to the person here: what a channel may have to take back.
fn shown(s: State) -> bool {
    matches!(s, State::Delivered | State::Missed | State::Firing)
}

/// Brings reminder `base`'s instances in line with `ack`. `by` names who
/// acknowledged (a device id, or "here"). Returns what was shown and is
/// taken back.
///
/// # Errors
/// Store failures.
pub fn enforce(
    tx: &Tx<'_>,
    base: &str,
    ack: &AckState,
    by: &str,
    now: DateTime<Utc>,
) -> Result<Vec<Withdrawal>, StoreError> {
    let mut out = Vec::new();
    let instances = tx.reminder_instances(base)?;
    match ack.effective() {
        Effective::Open => {}
        Effective::Dismissed => {
            for i in &instances {
                let reason = format!("dismissed by {by}");
                // A `snoozed` instance stays so: its snooze carries the
                // reminder, and is what gets acknowledged.
                if tx.transition(&i.key, &OPEN, State::Acknowledged, &reason, now)?
                    && shown(i.state)
                {
                    out.push(withdrawal(i, by, WithdrawReason::Dismissed));
                }
            }
        }
        Effective::Snoozed(until) => {
            let keep = snooze_key(base, until);
            for i in &instances {
                if i.key == keep {
                    continue;
                }
                let (to, from): (State, &[State]) = if i.key == base {
                    (State::Snoozed, &SNOOZABLE)
                } else {
                    (State::Acknowledged, &DISMISSABLE)
                };
                let reason = format!("snoozed until {} by {by}", until.to_rfc3339());
                if tx.transition(&i.key, from, to, &reason, now)? && shown(i.state) {
                    out.push(withdrawal(i, by, WithdrawReason::Snoozed));
                }
            }
            let template = instances
                .iter()
                .find(|i| i.key == base)
                .or(instances.first());
            if let Some(t) = template.filter(|_| !instances.iter().any(|i| i.key == keep)) {
                tx.insert_instances(&[snooze_of(t, base, &keep, until)], now)?;
            }
        }
    }
    Ok(out)
}

fn withdrawal(i: &Instance, by: &str, reason: WithdrawReason) -> Withdrawal {
    Withdrawal {
        key: i.key.clone(),
        by: by.to_owned(),
        reason,
    }
}

/// The snooze instance `key` of reminder `base`, modelled on one of its
/// instances.
fn snooze_of(t: &Instance, base: &str, key: &str, until: DateTime<Utc>) -> NewInstance {
    NewInstance {
        key: key.to_owned(),
        calendar: t.calendar,
        event_uid: t.event_uid.clone(),
        occurrence: t.occurrence.clone(),
        alarm: t.alarm.clone(),
        repetition: t.repetition,
        rule_version: t.rule_version,
        trigger_at: until,
        snooze_of: Some(base.to_owned()),
        payload: t.payload.clone(),
    }
}

/// After instances were inserted: those of reminders that already have an
/// acknowledgement record (it arrived before the event, or before the
/// occurrence came within the horizon) follow it at once.
///
/// # Errors
/// Store failures.
pub fn enforce_on_new(
    tx: &Tx<'_>,
    keys: impl Iterator<Item = impl AsRef<str>>,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let keys: Vec<_> = keys.collect();
    let keys: Vec<&str> = keys.iter().map(AsRef::as_ref).collect();
    crate::escalate::quiet_new(tx, &keys, now)?;
    if !tx.any_acks()? {
        return Ok(());
    }
    for k in keys {
        let base = base_key(k);
        if let Some(text) = tx.ack(base)? {
            let ack = super::decode_ack(&text);
            let by = ack
                .dismissed
                .as_ref()
                .or(ack.snooze.as_ref().map(|(h, _)| h))
                .map_or("another device", |h| h.device.as_str());
            enforce(tx, base, &ack, by, now)?;
        }
    }
    Ok(())
}
