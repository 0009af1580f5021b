//! Taking back what this engine showed, by one path.
//!
//! A reminder shown here stops waiting for the person in three ways: an
//! acknowledgement from another device (the sync client hands the engine a
//! [`Notice::Withdraw`] naming the device), a change made in this database
//! by someone else — `kairos dismiss` or `kairos import` from another
//! process, the desktop app's own dismiss, a CalDAV or feed refresh marking
//! a task done — or nothing at all. For the second, the engine remembers
//! the keys it delivered in this run ([`Shown`]) and, when it is told the
//! database changed, reads their states back ([`Engine::reconcile_shown`]):
//! one that is now acknowledged or snoozed, or whose event (or calendar) is
//! gone, is withdrawn from every channel and announced
//! ([`EngineEvent::Withdrawn`]), exactly as a notice is. A key withdrawn
//! either way is forgotten, so it is taken back once.

use std::collections::{HashSet, VecDeque};

use kairos_store::{Reader, State, StoreError};

use super::{Engine, EngineError};
use crate::channel::{WithdrawReason, Withdrawal};
use crate::events::{EngineEvent, Notice};

/// How many shown keys are remembered; past it the oldest are forgotten
/// (a reminder shown that long ago and never answered is no longer
/// withdrawn when it is dismissed elsewhere — its notification server will
/// long have dropped it). Bounds the reads of one reconciliation.
pub const MAX_SHOWN: usize = 4096;

/// Who a withdrawal found by reconciliation names: the change was made in
/// this database (another process, or this one outside the engine).
pub const HERE: &str = "this device";

/// The keys delivered by this engine and not yet answered, oldest first.
#[derive(Debug, Default)]
pub(super) struct Shown {
    order: VecDeque<String>,
    keys: HashSet<String>,
    /// Shown since the last [`Engine::reconcile_fresh`].
    fresh: VecDeque<String>,
}

impl Shown {
    /// Remembers `key` as shown (again: a repeat keeps its place).
    pub(super) fn insert(&mut self, key: &str) {
        if self.keys.insert(key.to_owned()) {
            self.order.push_back(key.to_owned());
            self.fresh.push_back(key.to_owned());
        }
        if self.fresh.len() > MAX_SHOWN {
            self.fresh.pop_front();
        }
        while self.order.len() > MAX_SHOWN {
            if let Some(old) = self.order.pop_front() {
                self.keys.remove(&old);
            }
        }
    }

    /// Forgets `key`; whether it was remembered.
    fn remove(&mut self, key: &str) -> bool {
        if self.keys.remove(key) {
            self.order.retain(|k| k != key);
            true
        } else {
            false
        }
    }
}

/// Why a shown reminder is to be taken back, if it is: snoozed, done (its
/// task closed: the last audit row says so), dismissed, or deleted (gone
/// from the store with its calendar, or its series deleted: a delivered
/// instance outlives its event).
fn reason(r: &Reader<'_>, key: &str) -> Result<Option<WithdrawReason>, StoreError> {
    let Some(i) = r.get(key)? else {
        return Ok(Some(WithdrawReason::Deleted));
    };
    Ok(match i.state {
        State::Acknowledged => {
            let done = r
                .audit_of(key)?
                .last()
                .is_some_and(|a| a.reason == crate::tasks::TASK_DONE);
            Some(if done {
                WithdrawReason::Done
            } else {
                WithdrawReason::Dismissed
            })
        }
        State::Snoozed => Some(WithdrawReason::Snoozed),
        _ if !r.series_exists(i.calendar, &i.event_uid)? => Some(WithdrawReason::Deleted),
        _ => None,
    })
}

impl Engine {
    /// Passes every waiting withdrawal to every channel and announces it,
    /// and announces the rest. Returns how many notices there were.
    pub fn handle_notices(&mut self) -> usize {
        let mut n = 0;
        while let Ok(notice) = self.inbox.1.try_recv() {
            let event = match notice {
                Notice::Withdraw(w) => {
                    self.shown.remove(&w.key);
                    self.withdraw_everywhere(&w);
                    EngineEvent::Withdrawn(w)
                }
                Notice::Announce(e) => e,
            };
            let _ = self.events.send(event);
            n += 1;
        }
        n
    }

    /// Reads back the state of every reminder this engine showed and not
    /// yet took back; each one acknowledged or snoozed since (in this
    /// database, by anyone), or whose event or calendar was deleted since,
    /// is withdrawn from every channel and announced.
    /// Returns how many were withdrawn. The daemon loop calls it whenever
    /// it is told the database changed.
    ///
    /// # Errors
    /// Store failures (nothing is withdrawn or forgotten then).
    pub fn reconcile_shown(&mut self) -> Result<usize, EngineError> {
        self.shown.fresh.clear();
        let keys: Vec<String> = self.shown.order.iter().cloned().collect();
        self.reconcile(&keys)
    }

    /// [`Engine::reconcile_shown`] for the reminders shown since the last
    /// call only: one answered while its delivery was under way (the
    /// notification appeared after the dismissal) is taken back at once.
    /// The daemon loop calls it after each round that delivered.
    ///
    /// # Errors
    /// As [`Engine::reconcile_shown`].
    pub fn reconcile_fresh(&mut self) -> Result<usize, EngineError> {
        let keys: Vec<String> = std::mem::take(&mut self.shown.fresh).into();
        self.reconcile(&keys)
    }

    fn reconcile(&mut self, keys: &[String]) -> Result<usize, EngineError> {
        if keys.is_empty() {
            return Ok(0);
        }
        let reasons = self.store.read(|r| {
            keys.iter()
                .map(|k| Ok((k, reason(r, k)?)))
                .collect::<Result<Vec<_>, StoreError>>()
        })?;
        let mut n = 0;
        for (key, reason) in reasons {
            match reason {
                None => {} // still shown (or being retried)
                Some(reason) => {
                    if !self.shown.remove(key) {
                        continue; // already taken back (a notice)
                    }
                    let w = Withdrawal {
                        key: key.clone(),
                        by: HERE.to_owned(),
                        reason,
                    };
                    self.withdraw_everywhere(&w);
                    let _ = self.events.send(EngineEvent::Withdrawn(w));
                    n += 1;
                }
            }
        }
        Ok(n)
    }

    fn withdraw_everywhere(&self, w: &Withdrawal) {
        for ch in &self.channels {
            ch.withdraw(w);
        }
    }
}
