//! Settling a done task: what its reminders still hold is acknowledged.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use kairos_core::model::{Event, When};
use kairos_store::{CalendarId, State, StoreError, Tx};

use crate::channel::{WithdrawReason, Withdrawal};
use crate::sync::acks::OPEN;

/// The audit reason of a reminder acknowledged because its task is done
/// (read back by the engine's reconciliation to say "done", not "dismissed").
pub(crate) const TASK_DONE: &str = "task done";

/// After series `comps` (all of one UID) were written to `cal_id`: the
/// instances of its done occurrences (all of them when the task as a whole
/// is done) that can still fire or are shown are acknowledged. Returns the
/// shown ones, to be taken back.
///
/// # Errors
/// Store failures.
pub(crate) fn settle_closed(
    tx: &Tx<'_>,
    cal_id: CalendarId,
    comps: &[Event],
    floating: Tz,
    now: DateTime<Utc>,
) -> Result<Vec<Withdrawal>, StoreError> {
    let Some(uid) = comps.first().map(|e| e.uid.as_str()) else {
        return Ok(Vec::new());
    };
    let whole = comps
        .iter()
        .any(|e| e.recurrence_id.is_none() && e.is_closed_task());
    let closed: Vec<String> = comps
        .iter()
        .filter(|e| e.is_closed_task())
        .filter_map(|e| e.recurrence_id)
        .map(|rid| match rid {
            When::Date(d) => d.format("%Y-%m-%d").to_string(),
            w => w.instant(floating).format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        })
        .collect();
    if !whole && closed.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for i in tx.instances_of_event(cal_id, uid)? {
        if !(whole || closed.contains(&i.occurrence)) {
            continue;
        }
        let shown = matches!(i.state, State::Delivered | State::Missed | State::Firing);
        if tx.transition(&i.key, &OPEN, State::Acknowledged, TASK_DONE, now)? && shown {
            out.push(Withdrawal {
                key: i.key.clone(),
                by: TASK_DONE.into(),
                reason: WithdrawReason::Done,
            });
        }
    }
    Ok(out)
}
