//! A calendar linked to a CalDAV collection by a version before 12-06 has
//! a random uid; since then a linked calendar's uid is derived from the
//! user and the collection's URL (kairos-caldav's `collection_uid`), so
//! every device that adds the account links the same calendar. A device
//! whose link is older would keep its own uid for ever, and a second device
//! adding the account would make the derived one beside it (`Work (2)`):
//! two copies whose reminders both ring.
//!
//! [`rekey`] moves such a calendar to its derived uid, through the normal
//! write path so Kairos sync carries it to every device:
//! - the derived calendar is the one already here (another device's copy,
//!   brought by Kairos sync) or a new one; it takes the old one's name and
//!   colour (`calendar.put`), and the old one is deleted
//!   (`calendar.delete`), so every device ends with one calendar;
//! - reminder keys begin with the calendar's uid, so a reminder's
//!   acknowledgement record (dismissed, snoozed until T) is carried to the
//!   key the same reminder has in the derived calendar and recorded as a
//!   dismiss or snooze op: a dismissed reminder stays dismissed on every
//!   device (also in a copy another device had made), a snoozed one rings
//!   once, at its snooze;
//! - each series is written to the derived calendar unless it is held
//!   there exactly; its op is marked as fetched when it is the server's
//!   copy unchanged here ([`super::caldav_copy`]), else it is an edit made
//!   here (every linked device writes it back);
//! - the CalDAV link (and with it the objects' ETags and hashes) moves to
//!   the derived calendar: the next CalDAV sync goes on where the last one
//!   stopped.
//!
//! All of it in one transaction.

use std::collections::HashSet;

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use kairos_proto::{AckState, Body, Effective};
use kairos_store::{CalendarId, Instance, NewInstance, State, Store, StoreError, Tx};

use super::caldav::forget;
use super::{acks, caldav_copy, decode_ack, record, record_as};
use crate::error::EngineError;
use crate::import::{Target, write_series};
use crate::materialise::CalendarLabel;
use crate::reminder::base_key;

/// What [`rekey`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rekeyed {
    /// The calendar's id now (the derived one).
    pub calendar: CalendarId,
    /// Series moved to it (their reminders' keys changed here).
    pub moved: usize,
    /// Of those, series written to it (not those it held exactly).
    pub series: usize,
    /// Acknowledgement records carried to the new keys.
    pub acks: usize,
}

/// The key `key` (of a reminder of calendar `from`) has in calendar `to`.
fn moved_key(key: &str, from: &str, to: &str) -> Option<String> {
    let esc = |s: &str| s.replace('%', "%25").replace('/', "%2F");
    key.strip_prefix(&format!("{}/", esc(from)))
        .map(|rest| format!("{}/{rest}", esc(to)))
}

/// Moves linked calendar `old` to uid `uid` (see the module doc); `None`
/// when it has that uid already or no longer exists.
///
/// # Errors
/// Store failures; a stored component that cannot be read back.
pub fn rekey(
    store: &mut Store,
    old: CalendarId,
    uid: &str,
    now: DateTime<Utc>,
    horizon: Duration,
    floating: Tz,
) -> Result<Option<Rekeyed>, EngineError> {
    let Some(from) = store.calendars()?.into_iter().find(|c| c.id == old) else {
        return Ok(None);
    };
    if from.uid == uid {
        return Ok(None);
    }
    let until = crate::meta::materialised_until(store)?
        .unwrap_or(now + horizon)
        .max(now);
    let floating = crate::meta::database_zone(store, floating)?;
    store.write(|tx| -> Result<Option<Rekeyed>, EngineError> {
        let Some(link) = tx.caldav_calendar_of(old)? else {
            return Ok(None);
        };
        let settings = tx.calendar_by_id(old)?;
        let work = tx.work_settings()?.into_iter().find(|w| w.id == old);
        let colour = settings.as_ref().and_then(|c| c.color.clone());
        // What the old calendar holds, read before it goes.
        let rows = tx.events_of(old)?;
        let mut series = Vec::new();
        let mut records = Vec::new();
        let mut recorded = HashSet::new();
        let synced = caldav_copy::Synced::of(tx, old)?;
        // `events_of` returns the rows ordered by uid: one run per series.
        for group in rows.chunk_by(|a, b| a.uid == b.uid) {
            let s = &group[0].uid;
            let origin = synced.origin(s, group)?;
            let comps = crate::series::read_calendar(group, &from.name)?.events;
            series.push((s.clone(), comps, origin));
            let instances = tx.instances_of_event(old, s)?;
            for i in &instances {
                let base = base_key(&i.key).to_owned();
                if !recorded.insert(base.clone()) {
                    continue;
                }
                if let Some(state) = state_of(tx, &base, &instances)? {
                    let model = instances.iter().find(|i| i.key == base).unwrap_or(i);
                    records.push((base, state, model.clone()));
                }
            }
        }
        // The derived calendar takes the link, the name and the colour;
        // the old one goes.
        let new_id = tx.ensure_calendar_uid(uid, &from.name, now)?;
        tx.caldav_calendar_link(link.id, new_id)?;
        forget(tx, old)?;
        tx.delete_calendar(old)?;
        tx.rename_calendar(new_id, &from.name, colour.as_deref())?;
        // This device's own settings of the calendar (shown or hidden, its
        // default reminders) stay as they were.
        if let (Some(was), Some(now_is)) = (settings, tx.calendar_by_id(new_id)?) {
            tx.update_calendar(&kairos_store::CalendarSettings {
                visible: was.visible,
                default_alarms: was.default_alarms,
                ..now_is
            })?;
        }
        let name = tx
            .calendar_by_id(new_id)?
            .map_or_else(|| from.name.clone(), |c| c.name);
        record(
            tx,
            Body::CalendarDelete {
                calendar: from.uid.clone(),
            },
            now,
        )?;
        record(
            tx,
            Body::CalendarPut {
                calendar: uid.to_owned(),
                name: name.clone(),
                color: colour.clone(),
            },
            now,
        )?;
        // The working time (an account setting: recorded, as joining does).
        if let (Some(w), Some(cal)) = (&work, tx.calendar_by_uid(uid)?) {
            crate::workdays::set_in(tx, cal, w.week, w.holidays, now, until, floating)?;
            crate::workdays::record_if_set(tx, new_id, now)?;
        }
        // Acknowledgements first, so the series written next plan their
        // reminders in line with them.
        let mut out = Rekeyed {
            calendar: new_id,
            moved: series.len(),
            series: 0,
            acks: 0,
        };
        let mut carried = Vec::new();
        for (base, state, model) in records {
            let Some(key) = moved_key(&base, &from.uid, uid) else {
                continue;
            };
            let ack = carry(tx, &key, state, now)?;
            carried.push((key, ack, model));
            out.acks += 1;
        }
        let label = CalendarLabel { uid, name: &name };
        let target = Target {
            cal_id: new_id,
            label,
            now,
            until,
            floating,
            work: crate::workdays::work_time(tx, new_id, now, until)?,
        };
        for (s, comps, origin) in series {
            if crate::import::holds_in(tx, new_id, &s, &comps)? {
                continue;
            }
            write_series(tx, &target, &s, &comps)?;
            let stored = tx.series_events(new_id, &s)?;
            let body = Body::SeriesPut {
                calendar: uid.to_owned(),
                uid: s.clone(),
                ics: crate::series::wire_text(stored.iter(), &name)?,
            };
            record_as(tx, body, now, origin)?;
            out.series += 1;
        }
        // The reminders of the derived calendar follow the carried records
        // (those of another device's copy, planned before, too).
        for (key, ack, model) in carried {
            // A reminder whose trigger is past is not planned again: its
            // row moves (as the model of its snooze), so a snooze made
            // when it rang still rings here, once.
            if tx.reminder_instances(&key)?.is_empty() {
                let row = NewInstance {
                    key: key.clone(),
                    calendar: new_id,
                    event_uid: model.event_uid,
                    occurrence: model.occurrence,
                    alarm: model.alarm,
                    repetition: model.repetition,
                    rule_version: model.rule_version,
                    trigger_at: model.trigger_at,
                    snooze_of: None,
                    payload: model.payload,
                };
                tx.insert_instances(&[row], now)?;
            }
            acks::enforce(tx, &key, &ack, "here", now)?;
        }
        Ok(Some(out))
    })
}

/// How reminder `base` (of `instances`, one series' reminders) stands: its
/// acknowledgement record, or, on a database that never joined Kairos sync
/// (no records), its instances' states. `None`: open.
fn state_of(
    tx: &Tx<'_>,
    base: &str,
    instances: &[Instance],
) -> Result<Option<Effective>, StoreError> {
    if let Some(text) = tx.ack(base)? {
        return Ok(Some(decode_ack(&text).effective()).filter(|e| *e != Effective::Open));
    }
    let Some(own) = instances.iter().find(|i| i.key == base) else {
        return Ok(None);
    };
    Ok(match own.state {
        State::Acknowledged => Some(Effective::Dismissed),
        State::Snoozed => instances
            .iter()
            .filter(|i| i.key.starts_with(&format!("{base}~snooze@")))
            .filter(|i| i.state == State::Pending)
            .map(|i| i.trigger_at)
            .max()
            .map(Effective::Snoozed),
        _ => None,
    })
}

/// Records `state` for reminder `key` (a dismiss or snooze op, when the
/// database is paired) and returns the acknowledgement to enforce.
fn carry(
    tx: &Tx<'_>,
    key: &str,
    state: Effective,
    now: DateTime<Utc>,
) -> Result<AckState, StoreError> {
    let body = match state {
        Effective::Dismissed => Body::ReminderDismiss {
            key: key.to_owned(),
        },
        Effective::Snoozed(until) => Body::ReminderSnooze {
            key: key.to_owned(),
            until,
        },
        Effective::Open => return Ok(AckState::default()),
    };
    crate::actions::acknowledge(tx, body, now)
}

#[cfg(test)]
mod tests {
    use super::moved_key;

    #[test]
    fn a_key_moves_to_the_other_calendar_and_nothing_else_changes() {
        assert_eq!(
            moved_key("old/standup/2026-03-01T10:00:00Z/#0@0a1b2c3d", "old", "new").as_deref(),
            Some("new/standup/2026-03-01T10:00:00Z/#0@0a1b2c3d")
        );
        assert_eq!(moved_key("other/x/y/#0@1", "old", "new"), None);
        assert_eq!(
            moved_key("a%2Fb/x/y/#0@1", "a/b", "c").as_deref(),
            Some("c/x/y/#0@1")
        );
    }
}
