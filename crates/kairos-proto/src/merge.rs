//! The merge rules (`docs/sync-protocol.md`, "Merge rules"): pure and
//! deterministic, so every replica that applies the same ops, in any order
//! and with any repeats, ends in the same state.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};

use crate::hlc::Hlc;
use crate::op::{Body, Effect, Op};

/// What to do with an op for a last-writer-wins register.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The op is newer than what is stored (or nothing is): it wins.
    Apply,
    /// The stored version is newer: the op loses (write it to the audit log:
    /// `edit from DEVICE lost to DEVICE`).
    Stale {
        /// The stamp that beats it.
        winner: Hlc,
    },
    /// The same stamp is stored: a replay, nothing changes.
    Same,
}

/// Last writer wins, for calendars and series (deletes are tombstones with
/// their stamp): compares the stored stamp, if any, with the incoming one.
#[must_use]
pub fn lww(current: Option<&Hlc>, incoming: &Hlc) -> Verdict {
    match current {
        None => Verdict::Apply,
        Some(c) if incoming > c => Verdict::Apply,
        Some(c) if incoming == c => Verdict::Same,
        Some(c) => Verdict::Stale { winner: c.clone() },
    }
}

/// What a reminder is, all acknowledgements considered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effective {
    /// Not acknowledged anywhere.
    Open,
    /// Snoozed until this instant (the winning snooze).
    Snoozed(DateTime<Utc>),
    /// Dismissed (for good).
    Dismissed,
}

/// The acknowledgements of one base reminder key. Both parts only move
/// forward, so any order of the same ops gives the same state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AckState {
    /// The earliest dismissal's stamp. Absorbing: once set, the reminder is
    /// dismissed whatever else arrives.
    pub dismissed: Option<Hlc>,
    /// The snooze with the greatest stamp (ties, which only a broken device
    /// makes, by the later `until`). Kept even after a dismissal, so the
    /// state does not depend on the order the two arrived in.
    pub snooze: Option<(Hlc, DateTime<Utc>)>,
}

/// What applying an ack op changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AckChange {
    /// The reminder became dismissed by this op: withdraw it where shown.
    Dismissed,
    /// This op's snooze now decides: withdraw what shows, schedule `until`.
    Snoozed(DateTime<Utc>),
    /// The record changed but not what it means (an earlier dismissal
    /// stamp; a snooze that wins among snoozes while dismissed).
    Recorded,
    /// Nothing changed: a replay, an older snooze, or not a reminder op.
    Unchanged,
}

impl AckState {
    /// Applies a `reminder.*` op (other ops change nothing). The caller
    /// passes only ops of this state's key.
    pub fn apply(&mut self, op: &Op) -> AckChange {
        let was_dismissed = self.dismissed.is_some();
        match op.body.effect() {
            Effect::Write => AckChange::Unchanged,
            Effect::Dismiss => match &self.dismissed {
                Some(d) if *d <= op.hlc => AckChange::Unchanged,
                _ => {
                    self.dismissed = Some(op.hlc.clone());
                    if was_dismissed {
                        AckChange::Recorded
                    } else {
                        AckChange::Dismissed
                    }
                }
            },
            Effect::Snooze(until) => {
                let incoming = (op.hlc.clone(), until);
                if self.snooze.as_ref().is_some_and(|s| *s >= incoming) {
                    return AckChange::Unchanged;
                }
                self.snooze = Some(incoming);
                if was_dismissed {
                    AckChange::Recorded
                } else {
                    AckChange::Snoozed(until)
                }
            }
        }
    }

    /// Dismissed, else snoozed, else open.
    #[must_use]
    pub fn effective(&self) -> Effective {
        match (&self.dismissed, &self.snooze) {
            (Some(_), _) => Effective::Dismissed,
            (None, Some((_, until))) => Effective::Snoozed(*until),
            (None, None) => Effective::Open,
        }
    }
}

/// A whole replica in memory: the winning op per register entity, and the
/// acknowledgements per reminder key. The reference model of the rules
/// (stores implement them on their own tables); equal states compare equal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Replica {
    /// `calendar/…` and `series/…` entities → the op that wins (a
    /// `*.delete` op is a tombstone).
    pub registers: BTreeMap<String, Op>,
    /// Base reminder key → its acknowledgements.
    pub acks: BTreeMap<String, AckState>,
}

/// What [`Replica::apply`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Applied {
    /// A register op, with the verdict.
    Register(Verdict),
    /// An ack op, with what it changed.
    Ack(AckChange),
}

impl Replica {
    /// Applies one op.
    pub fn apply(&mut self, op: &Op) -> Applied {
        match &op.body {
            Body::ReminderDismiss { key } | Body::ReminderSnooze { key, .. } => {
                Applied::Ack(self.acks.entry(key.clone()).or_default().apply(op))
            }
            _ => {
                let entity = op.entity();
                let verdict = lww(self.registers.get(&entity).map(|o| &o.hlc), &op.hlc);
                if verdict == Verdict::Apply {
                    self.registers.insert(entity, op.clone());
                }
                Applied::Register(verdict)
            }
        }
    }
}

/// One stored op as compaction sees it.
#[derive(Debug, Clone, Copy)]
pub struct Stored<'a> {
    /// Its seq.
    pub seq: u64,
    /// Its entity ([`Op::entity`]).
    pub entity: &'a str,
    /// Its stamp.
    pub hlc: &'a Hlc,
    /// What it does ([`Body::effect`]).
    pub effect: Effect,
}

/// The seqs of the ops that decide the state: per register entity the op
/// with the greatest stamp; per reminder the earliest dismissal and the
/// winning snooze. Applying only these gives the same [`Replica`] as
/// applying all of them, so compaction may drop every other op.
#[must_use]
pub fn survivors<'a>(ops: impl IntoIterator<Item = Stored<'a>>) -> BTreeSet<u64> {
    #[derive(Default)]
    struct Best<'a> {
        write: Option<(&'a Hlc, u64)>,
        dismiss: Option<(&'a Hlc, u64)>,
        snooze: Option<((&'a Hlc, DateTime<Utc>), u64)>,
    }
    let mut best: BTreeMap<&str, Best<'_>> = BTreeMap::new();
    for s in ops {
        let b = best.entry(s.entity).or_default();
        match s.effect {
            // Equal stamps are the same op (a replay): keep the first seq.
            Effect::Write if b.write.is_none_or(|(h, _)| s.hlc > h) => {
                b.write = Some((s.hlc, s.seq));
            }
            Effect::Dismiss if b.dismiss.is_none_or(|(h, _)| s.hlc < h) => {
                b.dismiss = Some((s.hlc, s.seq));
            }
            Effect::Snooze(until) if b.snooze.is_none_or(|(k, _)| (s.hlc, until) > k) => {
                b.snooze = Some(((s.hlc, until), s.seq));
            }
            _ => {}
        }
    }
    best.into_values()
        .flat_map(|b| {
            [
                b.write.map(|(_, s)| s),
                b.dismiss.map(|(_, s)| s),
                b.snooze.map(|(_, s)| s),
            ]
        })
        .flatten()
        .collect()
}
