//! Step 2 of firing ([`super::fire`]), concurrently: every attempt (one
//! reminder on one channel) is a future of its own, bounded by its
//! channel's [`Channel::timeout`], and the engine keeps going while it
//! runs. A notification service that hangs or a slow command holds back
//! neither the other channels of the same reminder nor the reminders due
//! after it: they are delivered and recorded while it runs, and its
//! reminder stays `firing` until its last attempt ends (a timeout is a
//! failed, retryable attempt recorded with its reason).
//!
//! At most [`super::Config::max_in_flight`] attempts run per channel; more
//! wait in that channel's queue, in the order they were claimed (a burst
//! through a command does not start thousands of processes).
//!
//! An attempt that ends at once (stdout, the desktop without a notification
//! service) is collected before the next reminder starts, so a burst is
//! recorded in the same groups as before; an attempt still running is
//! collected by [`Engine::delivered`], which the daemon's loop waits on
//! beside its timer.
//!
//! **Journal invariant under concurrency:** a group commit empties the
//! journal, then writes back the lines of every reminder still unfinished
//! (its ended attempts, `b` and for a success `d`, and a `b` for each one
//! running), so a SIGKILL still repeats exactly the attempts that were
//! running, and never one whose delivery is known.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use chrono::{DateTime, Utc};
use futures_util::stream::{FuturesUnordered, StreamExt};

use super::fire::{Claimed, reminder};
use super::journal::Journal;
use super::record::Attempt;
use super::{Engine, EngineError};
use crate::channel::{Channel, Reminder};
use crate::policy::FailureKind;

/// Default [`super::Config::max_in_flight`]: most attempts running at once
/// on one channel.
pub const MAX_IN_FLIGHT: usize = 64;

/// An attempt that ended.
pub(super) struct Ended {
    slot: usize,
    channel: usize,
    result: Result<(), (FailureKind, String)>,
    /// Given up on: its end (shown or not) is unknown.
    timed_out: bool,
}

type Running = Pin<Box<dyn Future<Output = Ended> + Send>>;

/// A claimed reminder with attempts running or waiting.
struct Slot {
    claimed: Claimed,
    /// What the channels are told; the last launch takes it (no copy for
    /// a single channel).
    reminder: Option<Reminder>,
    /// When its first attempt began (the group-commit window).
    began: DateTime<Utc>,
    /// Attempts waiting in a channel's queue.
    unlaunched: usize,
    /// Channels (indexes) whose attempt runs now.
    running: Vec<usize>,
    /// Attempts that ended.
    attempts: Vec<Attempt>,
}

/// Every attempt not yet ended, and reminders finished and not yet
/// recorded.
#[derive(Default)]
pub(super) struct Flights {
    running: FuturesUnordered<Running>,
    slots: Vec<Option<Slot>>,
    free: Vec<usize>,
    /// Slots in use.
    live: usize,
    /// Per channel: attempts running.
    busy: Vec<usize>,
    /// Per channel: slots waiting for a free place.
    waiting: Vec<VecDeque<usize>>,
    /// Finished (every attempt ended), not yet recorded: the group.
    pub(super) finished: Vec<Claimed>,
    /// Their attempts, index for index.
    pub(super) attempts: Vec<Vec<Attempt>>,
    /// When the group's first delivery began.
    pub(super) first: Option<DateTime<Utc>>,
    /// The durability check was made for the group being delivered.
    pub(super) open: bool,
}

impl Flights {
    /// Room for `channels` channels.
    pub(super) fn new(channels: usize) -> Self {
        Self {
            busy: vec![0; channels],
            waiting: vec![VecDeque::new(); channels],
            ..Self::default()
        }
    }

    /// Writes back the journal lines of every unfinished reminder (after
    /// the journal was emptied by a commit).
    fn rejournal(&self, j: &mut Journal, channels: &[Arc<dyn Channel>]) {
        for s in self.slots.iter().flatten() {
            let key = &s.claimed.inst.key;
            for a in &s.attempts {
                j.began(key, &a.channel);
                if a.result.is_ok() {
                    j.delivered(key, &a.channel, a.at, a.latency_ms);
                }
            }
            for &ch in &s.running {
                j.began(key, channels[ch].name());
            }
        }
    }

    fn finish(&mut self, id: usize, s: Slot) {
        self.live -= 1;
        self.free.push(id);
        self.push_finished(s.claimed, s.attempts, s.began);
    }

    fn push_finished(&mut self, c: Claimed, attempts: Vec<Attempt>, began: DateTime<Utc>) {
        if self.finished.is_empty() {
            self.first = Some(began);
        }
        self.finished.push(c);
        self.attempts.push(attempts);
    }
}

impl Engine {
    /// Reminders with an attempt running or waiting (0: nothing for
    /// [`Engine::delivered`] to wait for).
    #[must_use]
    pub fn in_flight(&self) -> usize {
        self.flights.live
    }

    /// Waits until a running attempt ends (at once when none runs), then
    /// records every reminder whose attempts have all ended. Returns how
    /// many were recorded. Cancel-safe: dropped while waiting, nothing is
    /// lost (the daemon's loop waits on it beside its timer).
    ///
    /// # Errors
    /// Store failures.
    pub async fn delivered(&mut self) -> Result<usize, EngineError> {
        if self.flights.live > 0
            && let Some(e) = self.flights.running.next().await
        {
            self.ended(e);
        }
        self.collect_ready().await;
        let now = self.clock.now();
        self.record_finished(now)
    }

    /// Waits until every attempt has ended (each is bounded by its
    /// channel's timeout) and everything is recorded; returns how many.
    ///
    /// # Errors
    /// Store failures.
    pub async fn drain(&mut self) -> Result<usize, EngineError> {
        let mut n = self.delivered().await?;
        while self.in_flight() > 0 {
            n += self.delivered().await?;
        }
        Ok(n)
    }

    /// Starts the attempts of `c` on every channel that does not have it.
    pub(super) fn start(&mut self, c: Claimed, began: DateTime<Utc>) {
        let targets = self
            .channels
            .iter()
            .filter(|ch| !c.done.iter().any(|d| d == ch.name()))
            .count();
        if targets == 0 {
            // Every channel had it (recorded by an earlier attempt).
            self.flights.push_finished(c, Vec::new(), began);
            return;
        }
        let slot = Slot {
            reminder: Some(reminder(&c, began)),
            claimed: c,
            began,
            unlaunched: targets,
            running: Vec::with_capacity(targets),
            attempts: Vec::with_capacity(targets),
        };
        let id = if let Some(id) = self.flights.free.pop() {
            self.flights.slots[id] = Some(slot);
            id
        } else {
            self.flights.slots.push(Some(slot));
            self.flights.slots.len() - 1
        };
        self.flights.live += 1;
        let cap = self.config.max_in_flight.max(1);
        for ch in 0..self.channels.len() {
            let name = self.channels[ch].name();
            let wanted = self.flights.slots[id]
                .as_ref()
                .is_some_and(|s| !s.claimed.done.iter().any(|d| d == name));
            if !wanted {
                continue;
            }
            if self.flights.busy[ch] < cap {
                self.launch(id, ch);
            } else {
                self.flights.waiting[ch].push_back(id);
            }
        }
    }

    /// Starts the attempt of slot `id` on channel `ch`.
    fn launch(&mut self, id: usize, ch: usize) {
        let Some(s) = self.flights.slots.get_mut(id).and_then(Option::as_mut) else {
            return;
        };
        let channel = Arc::clone(&self.channels[ch]);
        s.unlaunched -= 1;
        let r = if s.unlaunched == 0 {
            s.reminder.take()
        } else {
            s.reminder.clone()
        };
        let Some(mut r) = r else {
            return;
        };
        r.repeat = s.claimed.unsure.iter().any(|u| u == channel.name());
        s.running.push(ch);
        self.flights.busy[ch] += 1;
        if let Some(j) = self.journal.as_mut() {
            j.began(&r.key, channel.name());
        }
        let limit = channel.timeout();
        // Fixed before the channel's own timers start (a command's), so
        // when both have passed the engine's is seen: a timeout is known
        // as one, and its retry is marked `repeat`.
        let deadline = tokio::time::Instant::now() + limit;
        self.flights.running.push(Box::pin(async move {
            let mut attempt = channel.deliver(&r);
            // Most deliveries end at once: no timer for them.
            let first = std::future::poll_fn(|cx| Poll::Ready(attempt.as_mut().poll(cx))).await;
            let ended = match first {
                Poll::Ready(result) => Some(result),
                Poll::Pending => tokio::select! {
                    biased;
                    () = tokio::time::sleep_until(deadline) => None,
                    result = &mut attempt => Some(result),
                },
            };
            let (result, timed_out) = match ended {
                Some(result) => (result.map_err(|e| (e.kind, e.message)), false),
                None => (
                    Err((
                        FailureKind::Retryable,
                        format!("{} timed out after {limit:?}", channel.name()),
                    )),
                    true,
                ),
            };
            Ended {
                slot: id,
                channel: ch,
                result,
                timed_out,
            }
        }));
    }

    /// An attempt ended: journal and keep its outcome, start what waited
    /// for its place, and finish its reminder if it was the last.
    fn ended(&mut self, e: Ended) {
        let at = self.clock.now();
        let name = self.channels[e.channel].name();
        self.flights.busy[e.channel] -= 1;
        let Some(s) = self.flights.slots.get_mut(e.slot).and_then(Option::as_mut) else {
            return;
        };
        // Latency as the person feels it: from when it was due.
        let latency_ms = (at - s.claimed.inst.trigger_at).num_milliseconds();
        if let (Ok(()), Some(j)) = (&e.result, self.journal.as_mut()) {
            j.delivered(&s.claimed.inst.key, name, at, latency_ms);
        }
        if e.timed_out {
            // It may have been shown after all: its retry says `repeat`,
            // so a consumer replaces rather than shows it twice.
            self.in_doubt
                .insert((s.claimed.inst.key.clone(), name.to_owned()));
        }
        s.attempts.push(Attempt {
            channel: name.to_owned(),
            result: e.result,
            latency_ms,
            at,
        });
        s.running.retain(|&c| c != e.channel);
        if s.unlaunched == 0 && s.running.is_empty() {
            // Proof of the unwrap-free take: the slot was `Some` just above.
            if let Some(s) = self.flights.slots[e.slot].take() {
                self.flights.finish(e.slot, s);
            }
        }
        if let Some(next) = self.flights.waiting[e.channel].pop_front() {
            self.launch(next, e.channel);
        }
    }

    /// Takes in every attempt that has ended by now, without waiting.
    pub(super) async fn collect_ready(&mut self) {
        loop {
            let next =
                std::future::poll_fn(|cx| Poll::Ready(self.flights.running.poll_next_unpin(cx)))
                    .await;
            match next {
                Poll::Ready(Some(e)) => self.ended(e),
                Poll::Ready(None) | Poll::Pending => break,
            }
        }
    }

    /// Records the finished group (if any); returns how many it held.
    pub(super) fn record_finished(&mut self, now: DateTime<Utc>) -> Result<usize, EngineError> {
        let n = self.flights.finished.len();
        self.flights.open = false;
        if n == 0 {
            return Ok(0);
        }
        let mut group = std::mem::take(&mut self.flights.finished);
        let mut attempts = std::mem::take(&mut self.flights.attempts);
        self.flights.first = None;
        self.settle(&group, &attempts, now)?;
        // Keep the buffers' room for the next group.
        group.clear();
        attempts.clear();
        self.flights.finished = group;
        self.flights.attempts = attempts;
        Ok(n)
    }

    /// After a commit emptied the journal: the unfinished reminders' lines
    /// go back in.
    pub(super) fn rejournal(&mut self) {
        if self.flights.live == 0 {
            return;
        }
        if let Some(j) = self.journal.as_mut() {
            self.flights.rejournal(j, &self.channels);
        }
    }
}
