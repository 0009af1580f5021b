//! Firing a batch of due instances in three steps, two kinds of transaction:
//!
//! 1. **claim** (one transaction): each due instance moves `pending|failed →
//!    firing` by a guarded update — only one engine, once, wins it — or
//!    `→ expired` when far too late;
//! 2. **deliver** (no database, [`super::flight`]): each claimed reminder
//!    goes to every channel that does not already have it, every attempt
//!    concurrently and bounded by its channel's timeout;
//! 3. **record** (one transaction per group, [`super::record`]): every
//!    outcome, and `firing → delivered | failed (with its retry time) |
//!    abandoned`.
//!
//! Steps 2 and 3 alternate: a group of reminders whose attempts have all
//! ended is recorded (group commit) before the next delivery begins once it
//! holds [`Config::record_every`] reminders **or** [`Config::record_within`]
//! has passed since the first of them began, whichever comes first, and
//! whenever [`Engine::delivered`] collects attempts that ended later. So the
//! reminders delivered and not yet recorded all began within one such
//! window (or ended just now).
//!
//! A crash (SIGKILL) between 2 and 3 leaves them `firing`. Each attempt is
//! also written to the delivery journal (`journal`) just before and just
//! after it happens, so recovery records what the journal says was
//! delivered, delivers again — same key, marked `repeat` — only the attempt
//! that was in flight (one per channel), and delivers the never-attempted
//! rest normally. Outcomes are committed without waiting for the disk and
//! flushed by [`super::durable`], which bounds what a power cut can repeat
//! to [`super::durable::AT_RISK`] (the journal is not synced either: after
//! a power cut a repeat may be unmarked).
//!
//! **Repeat** means "an attempt on this channel began and its end was never
//! known", never "was not shown". A retry after a *recorded* failure is not
//! a repeat.
//!
//! The claim is one set-based guarded `UPDATE` (plus its audit rows) for the
//! whole batch; a successful single-channel delivery is recorded with its
//! transition in three statements and one audit row
//! ([`kairos_store::Tx::record_delivered`]); anything else (failures, several
//! channels, a retry) takes the general path.

use chrono::{DateTime, SecondsFormat, Utc};
use kairos_store::{Instance, Outcome, State, StoreError};

use super::record::{Attempt, status};
use super::{Config, EngineEvent};

use super::{Engine, EngineError};
use crate::channel::Reminder;
use crate::materialise::Payload;
use crate::policy::Lateness;

/// Default [`Config::record_every`]: most reminders delivered between two
/// commits of their outcomes. Large groups keep a burst fast (one commit
/// for many); the journal (`journal`), not the group, bounds what a SIGKILL
/// repeats.
pub const RECORD_EVERY: usize = 256;

/// Default [`Config::record_within`], in milliseconds: a group is recorded
/// before the next delivery begins once this long has passed since its first
/// delivery began, so what was delivered reaches the database (and, through
/// the flusher, the disk) within a few milliseconds even in a long burst.
pub const RECORD_WITHIN_MS: i64 = 2;

/// A claimed instance and what is needed to deliver it.
pub(super) struct Claimed {
    pub(super) inst: Instance,
    pub(super) lateness: Lateness,
    /// Channels that already have it (from an earlier attempt).
    pub(super) done: Vec<String>,
    /// Channels an earlier attempt may have reached without its outcome
    /// being recorded: they are told `repeat`.
    pub(super) unsure: Vec<String>,
}

pub(super) fn reminder(c: &Claimed, fired_at: DateTime<Utc>) -> Reminder {
    let inst = &c.inst;
    let p: Payload = serde_json::from_str(&inst.payload).unwrap_or(Payload {
        uid: inst.event_uid.clone(),
        occurrence_start: inst.occurrence.clone(),
        summary: None,
        location: None,
        calendar: String::new(),
    });
    Reminder {
        key: inst.key.clone(),
        uid: p.uid,
        occurrence_start: p.occurrence_start,
        // RFC 3339 with milliseconds and `Z` (what "%Y-%m-%dT%H:%M:%S%.3fZ"
        // gives, without parsing a format string per reminder).
        trigger: inst.trigger_at.to_rfc3339_opts(SecondsFormat::Millis, true),
        fired_at: fired_at.to_rfc3339_opts(SecondsFormat::Millis, true),
        summary: p.summary,
        location: p.location,
        calendar: p.calendar,
        status: status(c.lateness),
        repeat: false,
    }
}

/// Whether the group begun at `first` must be recorded before a delivery
/// that begins at `now`. A clock that went backwards counts as expired: the
/// bound must not stretch with a clock change.
fn due_to_record(config: &Config, len: usize, first: DateTime<Utc>, now: DateTime<Utc>) -> bool {
    let waited = now - first;
    len >= config.record_every
        || waited >= config.record_within
        || waited < chrono::Duration::zero()
}

impl Engine {
    /// Handles everything due now (up to `batch`): claims it, starts its
    /// deliveries ([`super::flight`]), records what has ended. An attempt
    /// still running when this returns is recorded by
    /// [`Engine::delivered`]. Returns how many due instances were looked
    /// at (0: nothing was due).
    ///
    /// # Errors
    /// Store failures (delivery failures are recorded, not returned).
    pub async fn fire_due(&mut self) -> Result<usize, EngineError> {
        let now = self.clock.now();
        let mut due = self.store.due(now, self.config.batch)?;
        due.extend(self.store.retries_due(now, self.config.batch)?);
        let seen = due.len();
        if seen == 0 {
            return Ok(0);
        }
        self.durability.start(&mut self.store);
        let claimed = self.claim(due, now)?;
        let cap = self.config.record_every.max(1);
        for c in claimed {
            let began = self.clock.now();
            if let Some(f) = self.flights.first
                && due_to_record(&self.config, self.flights.finished.len(), f, began)
            {
                self.record_finished(began)?;
            }
            if !self.flights.open {
                // Not more than AT_RISK delivered and not yet on the disk.
                self.durability.room_for(cap)?;
                self.flights.open = true;
            }
            self.start(c, began);
            self.collect_ready().await;
        }
        let now = self.clock.now();
        self.record_finished(now)?;
        Ok(seen)
    }

    /// Records a group, hands it to the flusher and announces it.
    pub(super) fn settle(
        &mut self,
        group: &[Claimed],
        attempts: &[Vec<Attempt>],
        now: DateTime<Utc>,
    ) -> Result<(), EngineError> {
        self.record(group, attempts, now)?;
        // Recorded: what the journal holds is in the database now, but for
        // the reminders whose attempts still run (written back).
        if let Some(j) = self.journal.as_mut() {
            j.clear();
        }
        self.rejournal();
        self.durability.committed(group.len());
        if self.events.receiver_count() > 0 {
            for c in group {
                let _ = self.events.send(EngineEvent::Fired {
                    key: c.inst.key.clone(),
                });
            }
        }
        Ok(())
    }

    /// Step 1: claims what is due, expires what is far too late.
    fn claim(
        &mut self,
        due: Vec<Instance>,
        now: DateTime<Utc>,
    ) -> Result<Vec<Claimed>, EngineError> {
        let policy = self.config.catch_up;
        let names: Vec<String> = self.channels.iter().map(|c| c.name().to_owned()).collect();
        let in_doubt = &mut self.in_doubt;
        // Not waiting for the disk here is safe: a claim lost in a power cut
        // leaves the instances pending, and they are claimed again.
        let (claimed, expired) = self.store.write_unsynced(|tx| -> Result<_, StoreError> {
            let from = [State::Pending, State::Failed];
            let mut expired = 0;
            let mut fire = Vec::with_capacity(due.len());
            for inst in due {
                let lateness = policy.classify(inst.trigger_at, now);
                if lateness == Lateness::Expired {
                    let hours = (now - inst.trigger_at).num_hours();
                    let reason = format!("expired: {hours} h late, past the missed window");
                    if tx.transition(&inst.key, &from, State::Expired, &reason, now)? {
                        expired += 1;
                    }
                } else {
                    fire.push((inst, lateness));
                }
            }
            // The guard: only one engine, once, moves each to firing.
            let keys: Vec<&str> = fire.iter().map(|(i, _)| i.key.as_str()).collect();
            let mut won = tx.transition_many(&keys, &from, State::Firing, "due", now)?;
            won.sort_unstable();
            let mut claimed = Vec::with_capacity(won.len());
            for (inst, lateness) in fire {
                if won.binary_search(&inst.key).is_err() {
                    continue;
                }
                let done = if inst.attempts > 0 {
                    tx.deliveries_of(&inst.key)?
                        .into_iter()
                        .filter(|d| d.outcome == Outcome::Delivered)
                        .map(|d| d.channel)
                        .collect()
                } else {
                    Vec::new()
                };
                // Attempts a dead engine began and never finished (its
                // journal, read by `recover`): maybe shown, so a repeat.
                // (Empty but after a crash: no allocation per reminder.)
                let unsure = if in_doubt.is_empty() {
                    Vec::new()
                } else {
                    names
                        .iter()
                        .filter(|n| in_doubt.remove(&(inst.key.clone(), (*n).clone())))
                        .cloned()
                        .collect()
                };
                claimed.push(Claimed {
                    inst,
                    lateness,
                    done,
                    unsure,
                });
            }
            Ok((claimed, expired))
        })?;
        self.stats.expired += expired;
        Ok(claimed)
    }
}
