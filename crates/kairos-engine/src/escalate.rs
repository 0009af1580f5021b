//! The engine's side of escalating reminders (`X-KAIROS-ESCALATE`, see
//! [`kairos_core::escalation`]).
//!
//! Each repetition is an instance of its own, keyed `BASE~again@k`
//! (k = 1..max) and due at the base trigger + k·every. The base key is the
//! key the alarm has without the rule, so adding, changing or removing a
//! rule never changes it. A repetition belongs to its base's reminder
//! ([`crate::sync::acks::base_key`] maps it back), so acknowledging any
//! instance of the reminder — here, or on another device through sync —
//! acknowledges the others, and the pending repetitions never fire
//! (`sync::acks::enforce`). Repetitions stored after the acknowledgement
//! (they came within the horizon later) follow it at once ([`quiet_new`]).

use chrono::{DateTime, Duration, Utc};
use kairos_core::alarms::AlarmHit;
use kairos_core::escalation;
use kairos_core::model::Calendar;
use kairos_store::{State, StoreError, Tx};

use crate::materialise::Planned;
use crate::reminder::base_key;

pub use crate::reminder::AGAIN;

/// The key of repetition `k` of the reminder `base`.
#[must_use]
pub fn again_key(base: &str, k: u32) -> String {
    format!("{base}{AGAIN}{k}")
}

/// How far before a window a base trigger may lie and still have a
/// repetition inside it: the longest rule's span in `cal` (zero when no
/// alarm escalates, so planning such a calendar is unchanged).
#[must_use]
pub(crate) fn reach(cal: &Calendar) -> Duration {
    cal.events
        .iter()
        .flat_map(|e| &e.alarms)
        .filter_map(escalation::of)
        .map(|e| e.span())
        .max()
        .unwrap_or_else(Duration::zero)
}

/// `planned[i]` is the instance of `hits[i]`, planned over a window that
/// starts [`reach`] before `from`. Keeps the instances due in
/// `[from, to)` and adds, for an escalating alarm, its repetitions due
/// there; the alarm's own `REPEAT` repetitions are dropped (the rule
/// replaces them).
pub(crate) fn expand(
    hits: &[AlarmHit<'_>],
    planned: Vec<Planned>,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Vec<Planned> {
    let mut out = Vec::with_capacity(planned.len());
    for (h, p) in hits.iter().zip(planned) {
        let Some(rule) = escalation::of(h.alarm) else {
            if p.trigger >= from {
                out.push(p);
            }
            continue;
        };
        if h.repetition > 0 {
            continue;
        }
        for k in 1..=rule.max {
            let at = p.trigger + rule.offset(k);
            if at >= to {
                break;
            }
            if at >= from {
                out.push(Planned {
                    key: again_key(&p.key, k),
                    repetition: k,
                    trigger: at,
                    ..p.clone()
                });
            }
        }
        if p.trigger >= from {
            out.push(p);
        }
    }
    out
}

/// Whether `key` is a repetition of an escalating reminder.
#[must_use]
pub fn is_repetition(key: &str) -> bool {
    key.contains(AGAIN)
}

/// Whether the reminder a repetition belongs to was already acknowledged
/// on this device (its base dismissed, hidden or snoozed): the repetition
/// must stay quiet. `false` for every other key.
///
/// # Errors
/// Store failures.
pub(crate) fn base_acknowledged(
    r: &kairos_store::Reader<'_>,
    key: &str,
) -> Result<bool, StoreError> {
    if !is_repetition(key) {
        return Ok(false);
    }
    Ok(r.get(base_key(key))?
        .is_some_and(|b| matches!(b.state, State::Acknowledged | State::Snoozed)))
}

/// Newly stored repetitions of a reminder already acknowledged here are
/// acknowledged at once. (A database that never joined an account keeps
/// no acknowledgement record, so the base's state is what tells.)
///
/// # Errors
/// Store failures.
pub(crate) fn quiet_new(tx: &Tx<'_>, keys: &[&str], now: DateTime<Utc>) -> Result<(), StoreError> {
    for key in keys {
        if base_acknowledged(tx, key)? {
            tx.transition(
                key,
                &[State::Pending],
                State::Acknowledged,
                "its reminder was acknowledged before it came due",
                now,
            )?;
        }
    }
    Ok(())
}

/// After `key` was hidden on this device only: if its reminder escalates,
/// the base and every other repetition are hidden too (hiding a nagging
/// reminder stops the nagging here).
///
/// # Errors
/// Store failures.
pub(crate) fn quiet_here(tx: &Tx<'_>, key: &str, now: DateTime<Utc>) -> Result<(), StoreError> {
    let base = base_key(key);
    let all = tx.reminder_instances(base)?;
    if !all.iter().any(|i| is_repetition(&i.key)) {
        return Ok(());
    }
    for i in all {
        if i.key != key && (i.key == base || is_repetition(&i.key)) {
            tx.transition(
                &i.key,
                &[
                    State::Pending,
                    State::Firing,
                    State::Delivered,
                    State::Failed,
                    State::Missed,
                ],
                State::Acknowledged,
                "dismissed on this device only (with its reminder)",
                now,
            )?;
        }
    }
    Ok(())
}
