//! Step 3 of firing ([`super::fire`]): every outcome of a group of
//! deliveries is recorded, and every instance of the group settled
//! (`firing → delivered | failed (with its retry time) | abandoned`), in one
//! transaction.

use chrono::{DateTime, Utc};
use kairos_store::{Delivered, Outcome, Recorded, State, StoreError};

use super::fire::Claimed;
use super::{Engine, EngineError};
use crate::policy::{FailureKind, Lateness, backoff};

/// The outcome of one channel for one instance.
pub(super) struct Attempt {
    pub(super) channel: String,
    pub(super) result: Result<(), (FailureKind, String)>,
    pub(super) latency_ms: i64,
    pub(super) at: DateTime<Utc>,
}

/// The `status` a channel is told, and the audit reason says.
pub(super) fn status(l: Lateness) -> &'static str {
    match l {
        Lateness::OnTime => "on_time",
        Lateness::Late => "late",
        Lateness::Missed | Lateness::Expired => "missed",
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
    /// Step 3: records every attempt and settles every claimed instance.
    pub(super) fn record(
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
        // Shown on at least one channel: taken back if answered elsewhere.
        for (c, tries) in claimed.iter().zip(attempts) {
            if tries.iter().any(|a| a.result.is_ok()) {
                self.shown.insert(&c.inst.key);
            }
        }
        Ok(())
    }
}
