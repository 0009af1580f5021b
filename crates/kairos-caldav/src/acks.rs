//! RFC 9074 acknowledgements that arrive from the server: another client
//! dismissed an alarm and wrote `ACKNOWLEDGED:<utc>` on its `VALARM`.
//!
//! For a series just applied from the server, every open Kairos reminder
//! of that alarm (same `UID`, same alarm: its `UID`, else its position
//! `#N`, as reminder keys name it) whose trigger is at or before the
//! `ACKNOWLEDGED` time is dismissed through the engine's acknowledge path
//! ([`kairos_engine::actions::dismiss_from`]): recorded for Kairos sync
//! (devices without the CalDAV account get it too) and withdrawn where
//! shown. An acknowledged reminder is not open any more, so a second sync
//! of the same object changes nothing.
//!
//! Limit: an `ACKNOWLEDGED` on an override's alarm (a `RECURRENCE-ID`
//! component) is matched like one on the master: by alarm and time, in
//! every occurrence (a trigger before the acknowledgement time has gone
//! off in any case).

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use kairos_core::model::{Event, alarm_key};
use kairos_engine::actions::dismiss_from;
use kairos_engine::channel::Withdrawal;
use kairos_engine::sync::acks::base_key;
use kairos_store::{CalendarId, State, Store};

use crate::error::Result;

/// Who acknowledged, as the audit log and the withdrawal name it.
pub const BY: &str = "CalDAV";

/// What acknowledgements from the server did here.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Acked {
    /// The reminders (base keys) acknowledged.
    pub keys: Vec<String>,
    /// What was shown here and must be taken back.
    pub withdrawals: Vec<Withdrawal>,
    /// The reminders (base keys) snoozed, and until when, by an RFC 9074
    /// snooze alarm on the server ([`crate::snooze`]).
    pub snoozed: Vec<(String, DateTime<Utc>)>,
}

/// Whether any alarm of `comps` carries an `ACKNOWLEDGED`.
#[must_use]
pub fn any(comps: &[Event]) -> bool {
    comps
        .iter()
        .any(|e| e.alarms.iter().any(|a| a.acknowledged.is_some()))
}

fn open(s: State) -> bool {
    matches!(
        s,
        State::Pending | State::Firing | State::Delivered | State::Failed | State::Missed
    )
}

/// Applies the `ACKNOWLEDGED`s of series `uid` (`comps`, as applied into
/// calendar `local`) to its reminders; adds what it did to `out`.
///
/// # Errors
/// Store failures.
pub fn apply(
    store: &mut Store,
    local: CalendarId,
    uid: &str,
    comps: &[Event],
    now: DateTime<Utc>,
    out: &mut Acked,
) -> Result<()> {
    let mut acks: Vec<(String, DateTime<Utc>)> = Vec::new();
    for ev in comps {
        // An alarm with a live snooze alarm is snoozed, not dismissed: its
        // `ACKNOWLEDGED` is the snooze's (crate::snooze).
        let snoozed = crate::snooze::snoozing(ev);
        let key_of = |uid: &str| {
            ev.alarms
                .iter()
                .position(|a| a.uid.as_deref() == Some(uid))
                .map(|n| alarm_key(Some(uid), n))
        };
        for (i, a) in ev.alarms.iter().enumerate() {
            let Some(t) = a.acknowledged else { continue };
            if let Some(of) = &a.snooze_of {
                // A handled snooze: the reminder it carried is done.
                if let Some(k) = key_of(of) {
                    acks.push((k, t));
                }
            } else if a.uid.as_ref().is_none_or(|u| !snoozed.contains(u)) {
                acks.push((alarm_key(a.uid.as_deref(), i), t));
            }
        }
    }
    if acks.is_empty() {
        return Ok(());
    }
    let instances = store.read(|r| r.instances_of_event(local, uid))?;
    let bases: BTreeSet<String> = instances
        .iter()
        .filter(|i| open(i.state))
        .filter(|i| {
            acks.iter()
                .any(|(id, t)| &i.alarm == id && i.trigger_at <= *t)
        })
        .map(|i| base_key(&i.key).to_owned())
        .collect();
    for base in bases {
        let w = dismiss_from(store, &base, BY, now)?;
        out.withdrawals.extend(w);
        out.keys.push(base);
    }
    Ok(())
}
