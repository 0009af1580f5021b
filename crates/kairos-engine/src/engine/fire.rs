//! Firing a batch of due instances in three steps, two transactions:
//!
//! 1. **claim** (one transaction): each due instance moves `pending|failed →
//!    firing` by a guarded update — only one engine, once, wins it — or
//!    `→ expired` when far too late;
//! 2. **deliver** (no database): each claimed reminder goes to every channel
//!    that does not already have it;
//! 3. **record** (one transaction per [`RECORD_EVERY`] reminders): every
//!    outcome, and `firing → delivered | failed (with its retry time) |
//!    abandoned`.
//!
//! The claim is one set-based guarded `UPDATE` (plus its audit rows) for the
//! whole batch; a successful single-channel delivery is recorded with its
//! transition in three statements and one audit row
//! ([`kairos_store::Tx::record_delivered`]); anything else (failures, several
//! channels, a retry) takes the general path.
//!
//! A crash between 2 and 3 leaves the rest of the batch `firing`; recovery
//! delivers those again with the same keys; at most one chunk was printed
//! without being recorded (at-least-once to a channel that acknowledges
//! nothing, never twice once recorded). Outcomes are committed without
//! waiting for the disk and flushed by [`super::durable`], which bounds what
//! a power cut can repeat to [`super::durable::AT_RISK`].

use chrono::{DateTime, SecondsFormat, Utc};
use kairos_store::{Delivered, Instance, Outcome, Recorded, State, StoreError};

use super::EngineEvent;

use super::{Engine, EngineError};
use crate::channel::Reminder;
use crate::materialise::Payload;
use crate::policy::{FailureKind, Lateness, backoff};

/// Reminders delivered between two commits of their outcomes: a SIGKILL
/// repeats at most this many.
pub const RECORD_EVERY: usize = 256;

/// A claimed instance and what is needed to deliver it.
struct Claimed {
    inst: Instance,
    lateness: Lateness,
    /// Channels that already have it (from an earlier attempt).
    done: Vec<String>,
}

/// The outcome of one channel for one instance.
struct Attempt {
    channel: String,
    result: Result<(), (FailureKind, String)>,
    latency_ms: i64,
    at: DateTime<Utc>,
}

fn status(l: Lateness) -> &'static str {
    match l {
        Lateness::OnTime => "on_time",
        Lateness::Late => "late",
        Lateness::Missed | Lateness::Expired => "missed",
    }
}

fn reminder(c: &Claimed, fired_at: DateTime<Utc>) -> Reminder {
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
    }
}

fn count(stats: &mut super::Stats, l: Lateness) {
    match l {
        Lateness::OnTime => stats.on_time += 1,
        Lateness::Late => stats.late += 1,
        Lateness::Missed | Lateness::Expired => stats.missed += 1,
    }
}

fn outcome(kind: FailureKind) -> Outcome {
    match kind {
        FailureKind::Retryable => Outcome::Retryable,
        FailureKind::Permanent => Outcome::Permanent,
        FailureKind::Unknown => Outcome::Unknown,
    }
}

impl Engine {
    /// Handles everything due now (up to `batch`): fires, records, retries.
    /// Returns how many due instances were looked at (0: nothing was due).
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
        // Deliver and record in small chunks: a crash repeats at most one
        // chunk's printed-but-unrecorded reminders, while one commit (one
        // fsync) still covers many.
        for chunk in claimed.chunks(RECORD_EVERY) {
            // Not more than AT_RISK delivered and not yet on the disk.
            self.durability.room_for(chunk.len())?;
            let mut attempts: Vec<Vec<Attempt>> = Vec::with_capacity(chunk.len());
            for c in chunk {
                let r = reminder(c, self.clock.now());
                let mut mine = Vec::new();
                for ch in self
                    .channels
                    .iter()
                    .filter(|ch| !c.done.iter().any(|d| d == ch.name()))
                {
                    let result = ch.deliver(&r).await.map_err(|e| (e.kind, e.message));
                    let at = self.clock.now();
                    // Latency as the person feels it: from when it was due.
                    let latency_ms = (at - c.inst.trigger_at).num_milliseconds();
                    mine.push(Attempt {
                        channel: ch.name().to_owned(),
                        result,
                        latency_ms,
                        at,
                    });
                }
                attempts.push(mine);
            }
            let now = self.clock.now();
            self.record(chunk, &attempts, now)?;
            self.durability.committed(chunk.len());
            if self.events.receiver_count() > 0 {
                for c in chunk {
                    let _ = self.events.send(EngineEvent::Fired {
                        key: c.inst.key.clone(),
                    });
                }
            }
        }
        Ok(seen)
    }

    /// Step 1: claims what is due, expires what is far too late.
    fn claim(
        &mut self,
        due: Vec<Instance>,
        now: DateTime<Utc>,
    ) -> Result<Vec<Claimed>, EngineError> {
        let policy = self.config.catch_up;
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
                claimed.push(Claimed {
                    inst,
                    lateness,
                    done,
                });
            }
            Ok((claimed, expired))
        })?;
        self.stats.expired += expired;
        Ok(claimed)
    }

    /// Step 3: records every attempt and settles every claimed instance.
    fn record(
        &mut self,
        claimed: &[Claimed],
        attempts: &[Vec<Attempt>],
        now: DateTime<Utc>,
    ) -> Result<(), EngineError> {
        let mut stats = self.stats;
        let settle = |tx: &kairos_store::Tx<'_>| -> Result<(), StoreError> {
            // The common case, one channel and delivered, is recorded for
            // the whole chunk at once, after the loop.
            let mut reasons = Vec::new();
            let mut fast = Vec::new();
            for (c, tries) in claimed.iter().zip(attempts) {
                if let [
                    Attempt {
                        channel,
                        result: Ok(()),
                        latency_ms,
                        at,
                    },
                ] = tries.as_slice()
                {
                    reasons.push(format!("delivered {}", status(c.lateness)));
                    fast.push((c, channel.as_str(), *latency_ms, *at));
                }
            }
            let items: Vec<Delivered<'_>> = fast
                .iter()
                .zip(&reasons)
                .map(|((c, channel, latency_ms, at), reason)| Delivered {
                    key: &c.inst.key,
                    channel,
                    latency_ms: *latency_ms,
                    at: *at,
                    from: State::Firing,
                    to: State::Delivered,
                    reason,
                })
                .collect();
            for ((c, ..), rec) in fast.iter().zip(tx.record_delivered(&items)?) {
                if rec == Recorded::AlreadyDelivered {
                    stats.duplicates_prevented += 1;
                }
                count(&mut stats, c.lateness);
            }
            for (c, tries) in claimed.iter().zip(attempts) {
                let key = c.inst.key.as_str();
                if matches!(tries.as_slice(), [Attempt { result: Ok(()), .. }]) {
                    continue; // recorded above
                }
                let mut worst: Option<(FailureKind, &str)> = None;
                let mut last = None;
                for a in tries {
                    last = Some(a.at);
                    match &a.result {
                        Ok(()) => {
                            let rec = tx.record_delivery(
                                key,
                                &a.channel,
                                Outcome::Delivered,
                                None,
                                Some(a.latency_ms),
                                a.at,
                            )?;
                            if rec == Recorded::AlreadyDelivered {
                                stats.duplicates_prevented += 1;
                            }
                        }
                        Err((kind, msg)) => {
                            stats.failures += 1;
                            let _ = tx.record_delivery(
                                key,
                                &a.channel,
                                outcome(*kind),
                                Some(msg),
                                Some(a.latency_ms),
                                a.at,
                            )?;
                            // The least retryable failure decides.
                            if worst.is_none_or(|(k, _)| k == FailureKind::Retryable) {
                                worst = Some((*kind, msg));
                            }
                        }
                    }
                }
                let now = last.unwrap_or(now);
                match worst {
                    None => {
                        let reason = format!("delivered {}", status(c.lateness));
                        tx.transition(key, &[State::Firing], State::Delivered, &reason, now)?;
                        count(&mut stats, c.lateness);
                    }
                    Some((kind, message)) => {
                        let tries = c.inst.attempts + 1;
                        if tries >= kind.max_attempts() {
                            let reason =
                                format!("abandoned after {tries} attempts ({kind:?}): {message}");
                            tx.transition(key, &[State::Firing], State::Abandoned, &reason, now)?;
                            stats.abandoned += 1;
                        } else {
                            let reason = format!("attempt {tries} failed ({kind:?}): {message}");
                            tx.transition(key, &[State::Firing], State::Failed, &reason, now)?;
                            tx.set_next_attempt(key, Some(now + backoff(tries)))?;
                        }
                    }
                }
            }
            Ok(())
        };
        // With a flusher, the commit does not wait for the disk (see
        // `durable`); without one (in memory) it is an ordinary FULL commit.
        if self.durability.deferred() {
            self.store.write_unsynced(settle)?;
        } else {
            self.store.write(settle)?;
        }
        self.stats = stats;
        Ok(())
    }
}
