//! Draining the delay queue: claim a batch of due deliveries, send them
//! (concurrently, a bounded number at once), record each outcome (the
//! background task a serving instance runs is `run.rs`).

use std::sync::{Arc, MutexGuard};
use std::time::Duration;

use chrono::{DateTime, Utc};
use futures_util::StreamExt;

use super::claim::{Claimed, Finish, claim_pg, claim_sqlite};
use super::finish::{finish_pg, finish_sqlite};
use super::gate::{Admit, Gate, Limits};
pub use super::send::{Channels, RETRIES, after_failure};
use super::shared::Batch;
use super::webhook::Outcome;
use super::{Db, Reminders, from_ms, ms};
use crate::store::StoreError;

/// How an instance drains.
#[derive(Debug, Clone)]
pub struct Options {
    /// This instance's name in claims and the audit trail.
    pub owner: String,
    /// How long a claim is this instance's alone; after it, another
    /// instance takes the rows over. Well above the channels' timeouts.
    pub lease: Duration,
    /// Rows per claim.
    pub batch: usize,
    /// Sends in flight at once.
    pub concurrency: usize,
    /// The longest the task sleeps between rounds (the bound on how late a
    /// reminder goes out, and on how late new ops are seen).
    pub poll: Duration,
    /// The circuit breaker per destination and the rate limit per account
    /// (`remind::gate`).
    pub limits: Limits,
}

impl Options {
    /// Defaults: a 60 s lease, 200 rows per claim, 32 in flight, 1 s poll,
    /// the gate's [`Limits::default`].
    #[must_use]
    pub fn new(owner: String) -> Self {
        Self {
            owner,
            lease: Duration::from_secs(60),
            batch: 200,
            concurrency: 32,
            poll: Duration::from_secs(1),
            limits: Limits::default(),
        }
    }
}

/// What one [`Reminders::drain`] did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Drained {
    /// Rows claimed.
    pub claimed: usize,
    /// Delivered (first success).
    pub sent: usize,
    /// Successes after another's, not recorded (counted, never stored).
    pub duplicates: usize,
    /// Failed, to be retried.
    pub retried: usize,
    /// Given up.
    pub abandoned: usize,
    /// Not sent: acknowledged or withdrawn before their time.
    pub cancelled: usize,
    /// Not sent now, not an attempt: the destination's circuit was open or
    /// the account over its rate.
    pub deferred: usize,
}

/// A sent (or cancelled) delivery waiting for its outcome to be committed,
/// and where to say whether it was a duplicate.
type Pending = (Claimed, Finish, tokio::sync::oneshot::Sender<Option<bool>>);

impl Reminders {
    /// Reports to `metrics` (the server's `/metrics`) instead of its own.
    #[must_use]
    pub fn with_metrics(mut self, metrics: Arc<crate::metrics::Metrics>) -> Self {
        self.metrics = metrics;
        self
    }

    /// What it reports.
    #[must_use]
    pub fn metrics(&self) -> &crate::metrics::Metrics {
        &self.metrics
    }

    /// The destinations whose circuit is open or half-open here.
    #[must_use]
    pub fn open_circuits(&self) -> Vec<String> {
        self.gate().open()
    }

    pub(super) fn gate(&self) -> MutexGuard<'_, Gate> {
        self.gate
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Pending deliveries: (due at `now`, later).
    ///
    /// # Errors
    /// The store.
    pub async fn depth(&self, now: DateTime<Utc>) -> Result<(u64, u64), StoreError> {
        match &self.db {
            Db::Sqlite(s) => s.depth(ms(now)).await,
            Db::Postgres(p) => p.depth(ms(now)).await,
        }
    }

    /// When a claim can next take something (ms): the earliest time of a
    /// row never claimed, or end of a lease; `None` when nothing is pending.
    ///
    /// # Errors
    /// The store.
    pub async fn next_due(&self) -> Result<Option<i64>, StoreError> {
        match &self.db {
            Db::Sqlite(s) => s.next_due().await,
            Db::Postgres(p) => p.next_due().await,
        }
    }

    /// Claims one batch of deliveries due at `now` and sends them.
    ///
    /// # Errors
    /// The store.
    pub async fn drain(
        &self,
        now: DateTime<Utc>,
        opts: &Options,
        channels: &Channels,
    ) -> Result<Drained, StoreError> {
        let lease = ms(now) + i64::try_from(opts.lease.as_millis()).unwrap_or(i64::MAX);
        let batch = i64::try_from(opts.batch).unwrap_or(i64::MAX);
        let rows = match &self.db {
            Db::Sqlite(s) => {
                let owner = opts.owner.clone();
                let now = ms(now);
                s.run(move |c| claim_sqlite(c, &owner, now, lease, batch))
                    .await?
            }
            Db::Postgres(p) => {
                claim_pg(&p.get().await?, &opts.owner, ms(now), lease, batch).await?
            }
        };
        // The claim's order, which a batch's RETURNING does not keep.
        let mut rows = rows;
        rows.sort_by(|a, b| a.order().cmp(&b.order()));
        // Times after the claim are `now` plus the monotonic time since:
        // a retry waits its 10 s after the failure, not after the claim.
        let started = tokio::time::Instant::now();
        let later = move || now + chrono::Duration::from_std(started.elapsed()).unwrap_or_default();
        // The gate's state for the batch: one round trip to the store.
        let gate = self.open_batch(&rows, opts, ms(now)).await?;
        let batch = &gate;
        let mut out = Drained {
            claimed: rows.len(),
            ..Drained::default()
        };
        // Each delivery is recorded as soon as it is sent, not after the
        // batch: a send keeps its slot (of `concurrency`) until its outcome
        // is committed, so a killed instance leaves at most `concurrency`
        // sent but unrecorded (sent again after the lease), not a whole
        // batch. The outcomes ready at the same time are committed together
        // in one transaction (one commit, one fsync, for many).
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Pending>();
        let sends = futures_util::stream::iter(rows)
            .map(move |c| {
                let tx = tx.clone();
                async move {
                    let (finish, label) = if c.state == "withdrawn" {
                        let why = "withdrawn: the event changed or went away";
                        (Finish::Cancel(why.into()), "cancelled_withdrawn")
                    } else if c.state == "acked" && !c.always {
                        let why = "acknowledged by a device";
                        (Finish::Cancel(why.into()), "cancelled_ack")
                    } else {
                        self.attempt(&c, now, opts, channels, later, batch).await
                    };
                    let channel = c.channel.clone();
                    let deliver_ms = c.deliver_ms;
                    let (done, recorded) = tokio::sync::oneshot::channel();
                    let _ = tx.send((c, finish.clone(), done));
                    // `None`: the group's commit failed (the error is the
                    // recorder's).
                    let dup = recorded.await.ok().flatten()?;
                    let m = &self.metrics.reminders;
                    match (&finish, dup) {
                        (Finish::Sent, true) => m.duplicates.inc(),
                        (Finish::Sent, false) => {
                            let late = ms(later()).saturating_sub(deliver_ms).max(0);
                            m.sent(Duration::from_millis(u64::try_from(late).unwrap_or(0)));
                            m.outcome(&channel, label);
                        }
                        (Finish::Abandon(_), _) => {
                            m.missed.inc();
                            m.outcome(&channel, label);
                        }
                        _ => m.outcome(&channel, label),
                    }
                    Some((finish, dup))
                }
            })
            .buffer_unordered(opts.concurrency.max(1))
            .collect::<Vec<_>>();
        let record = async {
            let mut failed = None;
            while let Some(first) = rx.recv().await {
                let mut group = vec![first];
                while let Ok(p) = rx.try_recv() {
                    group.push(p);
                }
                let (rows, replies): (Vec<_>, Vec<_>) =
                    group.into_iter().map(|(c, f, d)| ((c, f), d)).unzip();
                match self.finish(rows, &opts.owner, later()).await {
                    Ok(dups) => {
                        for (reply, dup) in replies.into_iter().zip(dups) {
                            let _ = reply.send(Some(dup));
                        }
                    }
                    Err(e) => {
                        failed.get_or_insert(e);
                        for reply in replies {
                            let _ = reply.send(None);
                        }
                    }
                }
            }
            failed
        };
        let (results, failed) = tokio::join!(sends, record);
        let closed = self.close_batch(gate, opts, ms(later())).await;
        if let Some(e) = failed {
            return Err(e);
        }
        closed?;
        for r in results.into_iter().flatten() {
            match r {
                (Finish::Sent, true) => out.duplicates += 1,
                (Finish::Sent, false) => out.sent += 1,
                (Finish::Retry { .. }, _) => out.retried += 1,
                (Finish::Abandon(_), _) => out.abandoned += 1,
                (Finish::Cancel(_), _) => out.cancelled += 1,
                (Finish::Defer { .. }, _) => out.deferred += 1,
            }
        }
        self.metrics.reminders.circuits(self.open_circuits());
        Ok(out)
    }

    /// One attempt at `c`, unless the gate defers it: what to record, and
    /// its outcome's metric label. The rate limit first (decided for the
    /// whole batch by `open_batch`), then the destination's breaker; a
    /// delivery held back by the breaker gives its token back.
    async fn attempt(
        &self,
        c: &Claimed,
        now: DateTime<Utc>,
        opts: &Options,
        channels: &Channels,
        later: impl Fn() -> DateTime<Utc>,
        batch: &Batch,
    ) -> (Finish, &'static str) {
        let dest = batch.destination(c);
        let at = |t: i64| kairos_proto::utc::format(&from_ms(t));
        if let Some(next) = batch.rate_of(c) {
            let reason = format!(
                "rate limit: account over {} deliveries a minute, until {}",
                opts.limits.per_minute,
                at(next)
            );
            let finish = Finish::Defer {
                at_ms: next,
                reason,
            };
            return (finish, "deferred_rate");
        }
        let admit = self.gate().admit(&dest, ms(later()));
        match admit {
            Admit::CircuitOpen(until) => {
                batch.refund(&c.account);
                let reason = format!("destination {dest} circuit open until {}", at(until));
                (
                    Finish::Defer {
                        at_ms: until,
                        reason,
                    },
                    "deferred_circuit",
                )
            }
            Admit::Go | Admit::Probe => {
                let outcome = channels.send(c, now).await;
                let retryable = matches!(outcome, Outcome::Retryable(_));
                self.gate()
                    .record(&opts.limits, &dest, retryable, ms(later()));
                let finish = after_failure(c.attempts, outcome, later());
                let label = match finish {
                    Finish::Sent => "delivered",
                    Finish::Retry { .. } => "retried",
                    _ => "abandoned",
                };
                (finish, label)
            }
        }
    }

    async fn finish(
        &self,
        group: Vec<(Claimed, Finish)>,
        owner: &str,
        at: DateTime<Utc>,
    ) -> Result<Vec<bool>, StoreError> {
        match &self.db {
            Db::Sqlite(s) => {
                let owner = owner.to_owned();
                s.run(move |conn| finish_sqlite(conn, &group, &owner, ms(at)))
                    .await
            }
            Db::Postgres(p) => finish_pg(&mut p.get().await?, &group, owner, ms(at)).await,
        }
    }
}
