//! Draining the delay queue: claim a batch of due deliveries, send them
//! (concurrently, a bounded number at once), record each outcome; and the
//! background task a serving instance runs.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use futures_util::StreamExt;

use super::claim::{Claimed, Finish, claim_pg, claim_sqlite, finish_pg, finish_sqlite};
use super::webhook::{Outcome, Poster};
use super::{Db, Reminders, from_ms, ms};
use crate::store::StoreError;

/// The waits after the first, second and third failed attempt; after the
/// fourth the delivery is abandoned.
pub const RETRIES: [Duration; 3] = [
    Duration::from_secs(10),
    Duration::from_secs(30),
    Duration::from_secs(120),
];

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
}

impl Options {
    /// Defaults: a 60 s lease, 200 rows per claim, 32 in flight, 1 s poll.
    #[must_use]
    pub fn new(owner: String) -> Self {
        Self {
            owner,
            lease: Duration::from_secs(60),
            batch: 200,
            concurrency: 32,
            poll: Duration::from_secs(1),
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
}

/// A sent (or cancelled) delivery waiting for its outcome to be committed,
/// and where to say whether it was a duplicate.
type Pending = (Claimed, Finish, tokio::sync::oneshot::Sender<Option<bool>>);

/// Sends claimed deliveries.
#[derive(Clone)]
pub struct Channels {
    /// Webhooks.
    pub poster: Poster,
    /// E-mail, if the server has an SMTP relay.
    pub mailer: Option<Arc<super::email::Mailer>>,
}

/// What a failed attempt turns into.
#[must_use]
pub fn after_failure(attempts_before: u32, outcome: Outcome, now: DateTime<Utc>) -> Finish {
    match outcome {
        Outcome::Sent => Finish::Sent,
        Outcome::Permanent(why) => Finish::Abandon(format!("permanent: {why}")),
        Outcome::Retryable(why) => match RETRIES.get(attempts_before as usize) {
            Some(wait) => Finish::Retry {
                at_ms: ms(now) + i64::try_from(wait.as_millis()).unwrap_or(i64::MAX),
                reason: why,
            },
            None => Finish::Abandon(format!(
                "gave up after {} attempts: {why}",
                attempts_before + 1
            )),
        },
    }
}

impl Channels {
    async fn send(&self, c: &Claimed, now: DateTime<Utc>) -> Outcome {
        let payload: serde_json::Value =
            serde_json::from_str(&c.payload).unwrap_or(serde_json::Value::Null);
        let body = serde_json::json!({
            "account": c.account,
            "key": c.key,
            "calendar": c.calendar,
            "due": kairos_proto::utc::format(&from_ms(c.due_ms)),
            "acknowledged": c.state == "acked",
            "attempt": c.attempts + 1,
            "reminder": payload,
        });
        match c.channel.as_str() {
            "webhook" => {
                let delivery = format!("{}/{}/{}", c.account, c.key, c.channel);
                let body = serde_json::to_vec(&body).unwrap_or_default();
                let secret = c.secret.as_deref().unwrap_or_default();
                self.poster
                    .post(&c.target, secret, &delivery, now.timestamp(), body)
                    .await
            }
            "email" => match &self.mailer {
                Some(m) => m.send(&c.target, &body).await,
                None => Outcome::Permanent("this server has no SMTP relay (--smtp)".into()),
            },
            other => Outcome::Permanent(format!("unknown channel {other:?}")),
        }
    }
}

impl Reminders {
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
        // Times after the claim are `now` plus the monotonic time since:
        // a retry waits its 10 s after the failure, not after the claim.
        let started = tokio::time::Instant::now();
        let later = move || now + chrono::Duration::from_std(started.elapsed()).unwrap_or_default();
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
                    let finish = if c.state == "withdrawn" {
                        Finish::Cancel("withdrawn: the event changed or went away".into())
                    } else if c.state == "acked" && !c.always {
                        Finish::Cancel("acknowledged by a device".into())
                    } else {
                        after_failure(c.attempts, channels.send(&c, now).await, later())
                    };
                    let (done, recorded) = tokio::sync::oneshot::channel();
                    let _ = tx.send((c, finish.clone(), done));
                    // `None`: the group's commit failed (the error is the
                    // recorder's).
                    recorded.await.ok().flatten().map(|dup| (finish, dup))
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
        if let Some(e) = failed {
            return Err(e);
        }
        for r in results.into_iter().flatten() {
            match r {
                (Finish::Sent, true) => out.duplicates += 1,
                (Finish::Sent, false) => out.sent += 1,
                (Finish::Retry { .. }, _) => out.retried += 1,
                (Finish::Abandon(_), _) => out.abandoned += 1,
                (Finish::Cancel(_), _) => out.cancelled += 1,
            }
        }
        Ok(out)
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

    /// The serving instance's loop until `stop` turns true: replicate,
    /// drain every due batch, sleep at most `poll`.
    pub async fn run(
        self,
        opts: Options,
        channels: Channels,
        mut stop: tokio::sync::watch::Receiver<bool>,
    ) {
        loop {
            if *stop.borrow() {
                return;
            }
            let now = Utc::now();
            if let Err(e) = self.replicate(now).await {
                tracing::warn!("reminders: replicating: {e}");
            }
            loop {
                match self.drain(Utc::now(), &opts, &channels).await {
                    Ok(d) if d.claimed > 0 => {
                        tracing::debug!(?d, "reminders: drained");
                        if d.claimed < opts.batch {
                            break;
                        }
                    }
                    Ok(_) => break,
                    Err(e) => {
                        tracing::warn!("reminders: draining: {e}");
                        break;
                    }
                }
            }
            tokio::select! {
                () = tokio::time::sleep(opts.poll) => {}
                changed = stop.changed() => if changed.is_err() { return; },
            }
        }
    }
}
