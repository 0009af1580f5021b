//! Ops from other devices, applied to this database: the same functions a
//! local change calls ([`crate::import::write_series`],
//! [`super::acks::enforce`]), behind the merge rules of kairos-proto, in
//! one transaction per batch.
//!
//! Conflicts: an op and the version held here are *concurrent* when
//! neither was made on top of the other (an op names the version it was
//! based on, `base`). The older of two concurrent versions loses, and the
//! audit log says so on every device that sees both:
//! `edit from DEVICE lost to DEVICE`. Overwriting a version the new one was
//! based on is an ordinary edit and logs nothing.

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use kairos_core::model::Event;
use kairos_proto::{Body, Effective, Hlc, Op, Verdict, lww};
use kairos_store::{Register, Store, Tx};

use super::acks::enforce;
use super::{clock_of, keys, merge_ack, register_of};
use crate::channel::Withdrawal;
use crate::error::EngineError;
use crate::events::{EngineEvent, Notice};
use crate::import::{Target, write_series};
use crate::materialise::CalendarLabel;
use crate::reminder::base_key;

/// What a batch of remote ops did here.
#[derive(Debug, Default)]
pub struct Applied {
    /// Ops that changed something.
    pub applied: usize,
    /// Ops older than the version held (or repeats): nothing changed.
    pub ignored: usize,
    /// Reminders shown here that were acknowledged elsewhere.
    pub withdrawals: Vec<Withdrawal>,
    /// Acknowledgements that changed a reminder's state here.
    pub acknowledged: Vec<EngineEvent>,
    /// Series ops of calendars linked to CalDAV here whose content another
    /// device fetched from the CalDAV server: their registers moved, their
    /// content is left to this device's own CalDAV sync
    /// ([`super::caldav`]; not while that sync fails). Counted in
    /// `applied`.
    pub left_to_caldav: usize,
}

impl Applied {
    /// What the engine's loop must hear of this batch.
    #[must_use]
    pub fn notices(self) -> Vec<Notice> {
        let mut out: Vec<Notice> = self.withdrawals.into_iter().map(Notice::Withdraw).collect();
        out.extend(self.acknowledged.into_iter().map(Notice::Announce));
        out
    }
}

/// Applies `ops` (from the server, in its order) in one transaction, and
/// moves the cursor to `cursor` in it (so a crash never leaves ops applied
/// and the cursor behind, or the other way round).
///
/// # Errors
/// Store failures. An op whose content cannot be read (an event that does
/// not parse) is skipped with a note in the audit log, never applied half.
pub fn apply_remote(
    store: &mut Store,
    ops: &[Op],
    cursor: Option<u64>,
    now: DateTime<Utc>,
    horizon: Duration,
    floating: Tz,
) -> Result<Applied, EngineError> {
    let floating = crate::meta::database_zone(store, floating)?;
    let until = crate::meta::materialised_until(store)?
        .unwrap_or(now + horizon)
        .max(now);
    let own = store.meta_get(keys::DEVICE)?.unwrap_or_default();
    store.write(|tx| -> Result<Applied, EngineError> {
        let mut clock = clock_of(tx, &own)?;
        let mut out = Applied::default();
        for op in ops {
            clock.observe(&op.hlc);
            let ctx = Ctx {
                tx,
                op,
                now,
                until,
                floating,
            };
            if ctx.apply(&mut out)? {
                out.applied += 1;
            } else {
                out.ignored += 1;
            }
        }
        if let Some(last) = clock.last() {
            tx.meta_set(keys::HLC, &last.to_string())?;
        }
        if let Some(c) = cursor {
            tx.meta_set(keys::CURSOR, &c.to_string())?;
        }
        Ok(out)
    })
}

/// The audit note of a lost edit: `edit from LOSER lost to WINNER (… < …)`
/// (what `kairos log` prints; [`read_conflict_note`] reads it back).
fn conflict_note(loser: &str, winner: &str, lost: &Hlc, won: &Hlc) -> String {
    format!("edit from {loser} lost to {winner} ({lost} < {won})")
}

/// The devices of a lost-edit note: `(loser, winner)`; `None` for any
/// other note.
#[must_use]
pub fn read_conflict_note(reason: &str) -> Option<(&str, &str)> {
    let rest = reason.strip_prefix("edit from ")?;
    let (loser, rest) = rest.split_once(" lost to ")?;
    let (winner, _) = rest.split_once(" (")?;
    Some((loser, winner))
}

struct Ctx<'a, 't> {
    tx: &'a Tx<'t>,
    op: &'a Op,
    now: DateTime<Utc>,
    until: DateTime<Utc>,
    floating: Tz,
}

impl Ctx<'_, '_> {
    /// Applies one op; false when it changed nothing.
    fn apply(&self, out: &mut Applied) -> Result<bool, EngineError> {
        let op = self.op;
        match &op.body {
            Body::ReminderDismiss { key } | Body::ReminderSnooze { key, .. } => {
                let base = base_key(key);
                let before = self.tx.ack(base)?;
                let ack = merge_ack(self.tx, base, op)?;
                if self.tx.ack(base)? == before {
                    return Ok(false);
                }
                out.withdrawals
                    .extend(enforce(self.tx, base, &ack, &op.device, self.now)?);
                out.acknowledged.push(EngineEvent::Acknowledged {
                    key: base.to_owned(),
                    by: op.device.clone(),
                    snoozed_until: match ack.effective() {
                        Effective::Snoozed(t) => Some(t),
                        _ => None,
                    },
                });
                Ok(true)
            }
            body => {
                let Some((entity, deleted)) = register_of(body) else {
                    return Ok(false);
                };
                let held = self.tx.register(&entity)?;
                let held_hlc = held.as_ref().and_then(|r| r.hlc.parse::<Hlc>().ok());
                let verdict = lww(held_hlc.as_ref(), &op.hlc);
                if verdict == Verdict::Same {
                    return Ok(false);
                }
                // Two versions with the same content are no conflict, and
                // writing one over the other would change nothing here.
                let same = self.holds_content(body)?;
                let wins = verdict == Verdict::Apply;
                if let (Some(h), Some(hh), false) = (&held, &held_hlc, same) {
                    self.note_if_concurrent(&entity, h, hh, wins)?;
                }
                if !wins {
                    return Ok(false);
                }
                self.tx.register_set(
                    &entity,
                    &op.hlc.to_string(),
                    deleted,
                    op.base.as_ref().map(ToString::to_string).as_deref(),
                )?;
                if super::caldav::left_to_caldav(self.tx, body, &op.hlc)? {
                    out.left_to_caldav += 1;
                    self.tx
                        .meta_set(super::caldav::FETCH_DUE, &op.hlc.to_string())?;
                } else if !same {
                    out.withdrawals.extend(self.change(body)?);
                }
                Ok(true)
            }
        }
    }

    /// Whether this device already holds exactly the series `body` puts
    /// (or, for a series delete, holds none of it). Other ops: false.
    fn holds_content(&self, body: &Body) -> Result<bool, EngineError> {
        let (calendar, uid, comps) = match body {
            Body::SeriesPut { calendar, uid, ics } => match crate::series::from_wire(ics) {
                Ok(comps) if !comps.is_empty() => (calendar, uid, comps),
                _ => return Ok(false),
            },
            Body::SeriesDelete { calendar, uid, .. } => (calendar, uid, Vec::new()),
            _ => return Ok(false),
        };
        let Some(cal) = self.tx.calendar_by_uid(calendar)? else {
            return Ok(comps.is_empty());
        };
        Ok(crate::import::holds_in(self.tx, cal.id, uid, &comps)?)
    }

    /// Logs the loser when the held version and the op are concurrent.
    /// `op_wins`: the op replaces the held version (else the op lost).
    fn note_if_concurrent(
        &self,
        entity: &str,
        held: &Register,
        held_hlc: &Hlc,
        op_wins: bool,
    ) -> Result<(), EngineError> {
        let op = self.op;
        let op_based_on_held = op.base.as_ref() == Some(held_hlc);
        let held_based_on_op = held.base.as_deref() == Some(op.hlc.to_string().as_str());
        if op_based_on_held || held_based_on_op || op.device == held_hlc.device {
            return Ok(());
        }
        let (loser, winner) = if op_wins {
            (held_hlc, &op.hlc)
        } else {
            (&op.hlc, held_hlc)
        };
        let reason = conflict_note(&loser.device, &winner.device, loser, winner);
        self.tx.sync_note(entity, &reason, self.now)?;
        Ok(())
    }

    /// The change itself, once the op won. Returns what was shown and is
    /// taken back (reminders of a task done elsewhere).
    fn change(&self, body: &Body) -> Result<Vec<Withdrawal>, EngineError> {
        let tx = self.tx;
        match body {
            Body::CalendarPut {
                calendar,
                name,
                color,
            } => {
                let id = tx.ensure_calendar_uid(calendar, name, self.now)?;
                tx.rename_calendar(id, name, color.as_deref())?;
            }
            Body::CalendarDelete { calendar } => {
                if let Some(c) = tx.calendar_by_uid(calendar)? {
                    tx.delete_calendar(c.id)?;
                }
            }
            Body::CalendarWork {
                calendar,
                week,
                holidays,
            } => {
                let Some(cal) = self.calendar(calendar)? else {
                    return Ok(Vec::new());
                };
                crate::workdays::set_in(
                    tx,
                    cal,
                    *week,
                    *holidays,
                    self.now,
                    self.until,
                    self.floating,
                )?;
            }
            Body::CalendarFeed {
                calendar,
                url,
                every,
                removed,
            } => return self.feed(calendar, url, *every, *removed),
            Body::SeriesPut { calendar, uid, ics } => {
                let Some(comps) = self.components(uid, ics)? else {
                    return Ok(Vec::new());
                };
                return self.write(calendar, uid, &comps);
            }
            Body::SeriesDelete { calendar, uid, .. } => {
                if tx.calendar_by_uid(calendar)?.is_some() {
                    return self.write(calendar, uid, &[]);
                }
            }
            // Each device reads floating times in its own zone: another's
            // is the server's to read (its register is kept all the same).
            Body::AccountZone { .. }
            | Body::ReminderDismiss { .. }
            | Body::ReminderSnooze { .. } => {}
        }
        Ok(Vec::new())
    }

    /// Another device's subscription of calendar `cal_uid` (see
    /// [`super::feed`]): stored, due at once; or ended, and then the
    /// events this device fetched from it go (the calendar stays).
    fn feed(
        &self,
        cal_uid: &str,
        url: &str,
        every: u32,
        removed: bool,
    ) -> Result<Vec<Withdrawal>, EngineError> {
        let tx = self.tx;
        if !removed {
            if let Some(cal) = self.calendar(cal_uid)? {
                super::feed::apply_put(tx, cal.id, url, every, self.now)?;
            }
            return Ok(Vec::new());
        }
        let Some(cal) = tx.calendar_by_uid(cal_uid)? else {
            return Ok(Vec::new());
        };
        if !tx.subscription_remove(cal.id)? {
            // Not a feed here (any more): its events are not the feed's.
            return Ok(Vec::new());
        }
        let events = tx.events_of(cal.id)?;
        let mut uids: Vec<&str> = events.iter().map(|e| e.uid.as_str()).collect();
        uids.sort_unstable();
        uids.dedup();
        let mut out = Vec::new();
        for uid in uids {
            out.extend(self.write(cal_uid, uid, &[])?);
        }
        Ok(out)
    }

    /// Calendar `cal_uid`, created under a stand-in name when its
    /// `calendar.put` has not arrived yet; `None` when the calendar was
    /// deleted (then only the op's register is kept).
    fn calendar(&self, cal_uid: &str) -> Result<Option<kairos_store::Calendar>, EngineError> {
        let tx = self.tx;
        if let Some(c) = tx.calendar_by_uid(cal_uid)? {
            return Ok(Some(c));
        }
        let tomb = tx
            .register(&format!("calendar/{cal_uid}"))?
            .is_some_and(|r| r.deleted);
        if tomb {
            return Ok(None);
        }
        let short: String = cal_uid.chars().take(8).collect();
        let id = tx.ensure_calendar_uid(cal_uid, &format!("Calendar {short}"), self.now)?;
        Ok(tx.calendars()?.into_iter().find(|c| c.id == id))
    }

    /// Writes a series into calendar `cal_uid` (see [`Self::calendar`]; a
    /// delete never creates one).
    fn write(
        &self,
        cal_uid: &str,
        uid: &str,
        comps: &[Event],
    ) -> Result<Vec<Withdrawal>, EngineError> {
        let tx = self.tx;
        let known = tx.calendar_by_uid(cal_uid)?;
        if known.is_none() && comps.is_empty() {
            return Ok(Vec::new());
        }
        let Some(cal) = known.map_or_else(|| self.calendar(cal_uid), |c| Ok(Some(c)))? else {
            return Ok(Vec::new());
        };
        let t = Target {
            cal_id: cal.id,
            label: CalendarLabel {
                uid: &cal.uid,
                name: &cal.name,
            },
            now: self.now,
            until: self.until,
            floating: self.floating,
            work: crate::workdays::work_time(tx, cal.id, self.now, self.until)?,
        };
        Ok(write_series(tx, &t, uid, comps)?.withdrawals)
    }

    /// The op's components, read at the edge; `None` (with a note) when
    /// they do not read or belong to another series.
    fn components(&self, uid: &str, ics: &str) -> Result<Option<Vec<Event>>, EngineError> {
        let problem = match crate::series::from_wire(ics) {
            Ok(comps) if comps.iter().all(|e| e.uid == uid) => return Ok(Some(comps)),
            Ok(_) => "a component of another UID".to_owned(),
            Err(e) => e.to_string(),
        };
        let reason = format!(
            "op {} from {} not applied: {problem}",
            self.op.id, self.op.device
        );
        self.tx.sync_note(&self.op.entity(), &reason, self.now)?;
        Ok(None)
    }
}
