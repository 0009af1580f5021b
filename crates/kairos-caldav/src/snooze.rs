//! RFC 9074 snoozes, both ways.
//!
//! RFC 9074 §6 writes a snooze as a new `VALARM` with an absolute `TRIGGER`
//! at the snooze-until time and `RELATED-TO;RELTYPE=SNOOZE:<UID of the
//! snoozed alarm>`; the snoozed alarm itself gets `ACKNOWLEDGED`. For
//! Kairos a snooze alarm is not a reminder (the core plans none for it): it
//! says "the reminder of that alarm is snoozed until T".
//!
//! - Out: a reminder snoozed in Kairos (here or on another device, not one
//!   snoozed because the server said so) puts that on the series' stored
//!   copy. An alarm with no `UID` is given one ([`kairos_alarm_uid`]),
//!   which keeps its reminder keys (`#N`, see [`alarm_key`]); an existing
//!   snooze alarm of the same alarm is moved in place rather than another
//!   added (indices, hence keys, of later alarms never shift).
//! - In: a snooze alarm not yet acknowledged snoozes the latest open
//!   reminder of its alarm triggered at or before T, through the engine's
//!   snooze path ([`snooze_from`]): recorded for Kairos sync, withdrawn
//!   where shown. The snoozed alarm's `ACKNOWLEDGED` then means "snoozed",
//!   not "dismissed" ([`live`]); an `ACKNOWLEDGED` on the snooze alarm
//!   dismisses the reminder (see [`crate::acks`]).

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use kairos_core::model::{Alarm, Event, Trigger, When, alarm_key, kairos_alarm_uid};

pub use crate::snooze_due::occurrence_text;
use kairos_engine::actions::{SNOOZABLE, snooze_from};
use kairos_engine::sync::acks::base_key;
use kairos_store::{CalendarId, State, Store};

use crate::acks::{Acked, BY};
use crate::error::Result;
use crate::local::{LocalSeries, RemoteObject};

/// One reminder of one series snoozed in Kairos, to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnoozeMark {
    /// The series' `UID`.
    pub uid: String,
    /// The alarm, as reminder keys name it.
    pub alarm: String,
    /// When it was snoozed (the snoozed alarm's `ACKNOWLEDGED`).
    pub at: DateTime<Utc>,
    /// Until when (the snooze alarm's `TRIGGER`).
    pub until: DateTime<Utc>,
    /// The `RECURRENCE-ID` of the override that holds the snoozed
    /// occurrence (RFC 9074: the alarm of that instance); `None`: the
    /// master's.
    pub recurrence_id: Option<When>,
}

/// The override of `comps` for occurrence `occ` (as keys spell it).
fn override_of<'e>(comps: &'e [Event], occ: &str, floating: Tz) -> Option<&'e Event> {
    comps.iter().find(|e| {
        e.recurrence_id
            .as_ref()
            .is_some_and(|r| occurrence_text(r, floating) == occ)
    })
}

/// The time of a snooze alarm that is still to go off: absolute, not
/// acknowledged at or after it.
fn until(a: &Alarm) -> Option<DateTime<Utc>> {
    match a.trigger {
        Trigger::Absolute(t) if a.is_snooze() && a.acknowledged.is_none_or(|k| k < t) => Some(t),
        _ => None,
    }
}

/// The alarms (`UID`s) of `ev` that a live snooze alarm snoozes, with the
/// snooze's time.
#[must_use]
pub fn live(ev: &Event) -> BTreeMap<String, DateTime<Utc>> {
    let mut out = BTreeMap::new();
    for a in &ev.alarms {
        if let (Some(of), Some(t)) = (&a.snooze_of, until(a)) {
            let e = out.entry(of.clone()).or_insert(t);
            *e = (*e).max(t);
        }
    }
    out
}

/// The alarms (`UID`s) of `ev` that a snooze alarm snoozes: a live
/// absolute one ([`live`]), or a relative one not acknowledged (its time
/// depends on the occurrence: [`crate::snooze_due::due`]).
#[must_use]
pub fn snoozing(ev: &Event) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = live(ev).into_keys().collect();
    for a in &ev.alarms {
        if let (Some(of), Trigger::Relative { .. }, None) =
            (&a.snooze_of, a.trigger, a.acknowledged)
        {
            out.insert(of.clone());
        }
    }
    out
}

/// Applies the live snooze alarms of series `uid` (`comps`, from the
/// server) to its reminders in calendar `local`; adds what it did to
/// `out` (`snoozed`, `withdrawals`).
///
/// # Errors
/// Store failures.
pub fn apply_in(
    store: &mut Store,
    local: CalendarId,
    uid: &str,
    comps: &[Event],
    now: DateTime<Utc>,
    out: &mut Acked,
) -> Result<()> {
    // Each snooze alarm with its component and the key of the alarm it names.
    let mut snoozes: Vec<(&Event, &Alarm, String)> = Vec::new();
    for ev in comps {
        for a in ev.alarms.iter().filter(|a| a.is_snooze()) {
            let Some(of) = &a.snooze_of else { continue };
            let Some(i) = ev.alarms.iter().position(|x| x.uid.as_deref() == Some(of)) else {
                continue; // It names no alarm of this component.
            };
            snoozes.push((ev, a, alarm_key(Some(of), i)));
        }
    }
    if snoozes.is_empty() {
        return Ok(());
    }
    let floating = kairos_engine::import::database_zone(store, chrono_tz::UTC)?;
    let insts = store.read(|r| r.instances_of_event(local, uid))?;
    // Reminder (base key) → the latest time a live snooze alarm says.
    let mut want: BTreeMap<String, DateTime<Utc>> = BTreeMap::new();
    for (ev, snooze, alarm) in snoozes {
        // An override's snooze alarm is about that occurrence only.
        let occ = ev
            .recurrence_id
            .as_ref()
            .map(|r| occurrence_text(r, floating));
        // The latest open (or snoozed) reminder of the alarm that rang
        // before the snooze alarm's time for its occurrence, while that
        // snooze alarm is not acknowledged at or after it.
        let target = insts
            .iter()
            .filter(|i| occ.as_ref().is_none_or(|o| &i.occurrence == o))
            .filter(|i| i.alarm == alarm && i.snooze_of.is_none())
            .filter(|i| SNOOZABLE.contains(&i.state) || i.state == State::Snoozed)
            .filter_map(|i| {
                let t = crate::snooze_due::due(snooze, ev, comps, &i.occurrence, floating)?;
                let live = i.trigger_at <= t && snooze.acknowledged.is_none_or(|k| k < t);
                live.then_some((i, t))
            })
            .max_by_key(|(i, _)| i.trigger_at);
        let Some((target, t)) = target else { continue };
        let e = want.entry(base_key(&target.key).to_owned()).or_insert(t);
        *e = (*e).max(t);
    }
    for (base, t) in want {
        let done = insts.iter().any(|i| {
            i.snooze_of.as_deref() == Some(base.as_str()) && i.trigger_at == t && open(i.state)
        });
        if done {
            continue;
        }
        let w = snooze_from(store, &base, t, BY, now)?;
        out.withdrawals.extend(w);
        out.snoozed.push((base, t));
    }
    Ok(())
}

fn open(s: State) -> bool {
    SNOOZABLE.contains(&s)
}

/// The reminders of `series` (calendar `local`) snoozed in Kairos whose
/// snooze is not yet on their stored copy.
///
/// # Errors
/// The database.
pub fn pending(
    store: &Store,
    local: CalendarId,
    series: &BTreeMap<String, LocalSeries>,
) -> Result<Vec<SnoozeMark>> {
    let floating = kairos_engine::import::database_zone(store, chrono_tz::UTC)?;
    let mut out = Vec::new();
    for (uid, l) in series {
        let insts = store.read(|r| r.instances_of_event(local, uid))?;
        let snoozed = insts.iter().filter(|i| i.state == State::Snoozed);
        for base in snoozed {
            let Some(s) = insts
                .iter()
                .filter(|i| i.snooze_of.as_deref() == Some(base.key.as_str()) && open(i.state))
                .max_by_key(|i| i.trigger_at)
            else {
                continue;
            };
            let history = store.read(|r| r.audit_of(&base.key))?;
            let Some(last) = history.iter().rev().find(|a| a.to == Some(State::Snoozed)) else {
                continue;
            };
            if last.reason.ends_with(&format!(" by {BY}")) {
                continue; // The server said so: its copy has it.
            }
            let obj = RemoteObject::read(&l.text);
            let comps = obj.series.get(uid).map_or(&[][..], Vec::as_slice);
            let over = override_of(comps, &base.occurrence, floating);
            let written = comps.iter().any(|e| {
                let live = live(e);
                e.alarms.iter().enumerate().any(|(n, a)| {
                    alarm_key(a.uid.as_deref(), n) == base.alarm
                        && a.uid.as_ref().and_then(|u| live.get(u)) == Some(&s.trigger_at)
                })
            });
            if !written {
                out.push(SnoozeMark {
                    uid: uid.clone(),
                    alarm: base.alarm.clone(),
                    at: last.at,
                    until: s.trigger_at,
                    recurrence_id: over.and_then(|e| e.recurrence_id),
                });
            }
        }
    }
    Ok(out)
}

/// Writes snooze `m` into the series' components (the override of the
/// snoozed occurrence when it has one, else the master, else the first):
/// the snoozed alarm named and acknowledged, its snooze alarm added or
/// moved.
pub fn mark(comps: &mut [Event], m: &SnoozeMark) {
    let idx = comps
        .iter()
        .position(|e| m.recurrence_id.is_some() && e.recurrence_id == m.recurrence_id)
        .or_else(|| comps.iter().position(|e| e.recurrence_id.is_none()))
        .unwrap_or(0);
    let Some(ev) = comps.get_mut(idx) else { return };
    let Some(n) = (0..ev.alarms.len()).find(|&n| {
        alarm_key(ev.alarms[n].uid.as_deref(), n) == m.alarm && !ev.alarms[n].is_snooze()
    }) else {
        return;
    };
    let series = ev.uid.clone();
    let target = &mut ev.alarms[n];
    let of = target
        .uid
        .get_or_insert_with(|| kairos_alarm_uid(&series, n))
        .clone();
    target.acknowledged = Some(target.acknowledged.map_or(m.at, |k| k.max(m.at)));
    let snooze = Alarm {
        uid: Some(format!("kairos-snooze.{of}")),
        trigger: Trigger::Absolute(m.until),
        repeat: 0,
        interval: None,
        acknowledged: None,
        snooze_of: Some(of.clone()),
        extra: Vec::new(),
        ..target.clone()
    };
    match ev
        .alarms
        .iter_mut()
        .find(|a| a.snooze_of.as_deref() == Some(of.as_str()))
    {
        Some(old) => *old = snooze,
        None => ev.alarms.push(snooze),
    }
}

/// A dismissal written on an alarm (`ACKNOWLEDGED` at `at`) also ends its
/// snooze alarms (RFC 9074: a handled snooze is acknowledged): an absolute
/// one due by then; a relative one (Thunderbird's, Apple's: `TRIGGER`
/// relative to the start or end) whatever its form: its time depends on
/// the occurrence, and `ACKNOWLEDGED` at `at` covers every occurrence's
/// trigger due by then (RFC 9074 §4), leaving a later one live.
pub fn end_snoozes(comps: &mut [Event]) {
    for ev in comps {
        let acked: BTreeMap<String, DateTime<Utc>> = ev
            .alarms
            .iter()
            .filter(|a| !a.is_snooze())
            .filter_map(|a| Some((a.uid.clone()?, a.acknowledged?)))
            .collect();
        for a in ev.alarms.iter_mut() {
            let Some(&k) = a.snooze_of.as_ref().and_then(|of| acked.get(of)) else {
                continue;
            };
            let ends = match a.trigger {
                Trigger::Absolute(t) => until(a).is_some() && k >= t,
                Trigger::Relative { .. } => a.acknowledged.is_none_or(|old| old < k),
            };
            if ends {
                a.acknowledged = Some(k);
            }
        }
    }
}
