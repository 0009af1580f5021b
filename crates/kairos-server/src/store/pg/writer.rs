//! A PostgreSQL writer: a task (two per instance, each with its own
//! accounts) doing what the SQLite writer thread does — every job waiting
//! joins one transaction, the pushes together (`batch.rs`) and the other
//! jobs each in a savepoint, replies and events only after the commit, in
//! commit order — and then, outside any transaction, the touches; the
//! hints for the other instances go to a task of their own (`hints.rs`),
//! and so do the accounts due for compaction (`compactor.rs`).

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use chrono::{DateTime, Utc};
use deadpool_postgres::{Object, Pool, Transaction};
use tokio::sync::mpsc;

use super::super::StoreError;
use super::super::writer::{Committed, Done, Job, deliver, fail};
use super::compaction::Compaction;
use super::compactor::Compactor;
use super::{batch, get, tx};

/// The most jobs in one transaction.
const MAX_GROUP: usize = 4096;

/// Groups that look their ids up first after a group whose pushes failed
/// without the lookup (an id stored before, most likely: a device sending
/// again what it had no answer for, often with others after a restart).
const LOOK_UP_AFTER_A_MISS: u32 = 16;

pub(super) struct Writer {
    pub(super) pool: Pool,
    pub(super) keep: u64,
    /// Where the hints for the other instances go (`hints.rs`); none only
    /// to test the repair.
    pub(super) hints: Option<tokio::sync::mpsc::UnboundedSender<Vec<String>>>,
    pub(super) on_commit: std::sync::Arc<dyn Fn(Committed) + Send + Sync>,
    /// Groups left that look their ids up before inserting them
    /// (`batch::write`); none while pushes bring only new ids.
    pub(super) look_up: AtomicU32,
    /// Groups that went in again, counted for every writer of the instance.
    pub(super) retries: Arc<Retries>,
    /// Each account's compacted head as last read, so that a group's
    /// compaction check needs no round trip.
    pub(super) compaction: Compaction,
    /// The instance's compaction task, which the due accounts are sent to.
    pub(super) compactor: Compactor,
}

/// Groups of pushes that went in again, since the store opened.
#[derive(Debug, Default)]
pub(crate) struct Retries {
    /// With the lookup of their ids, after failing without it (an id
    /// stored before).
    pub(crate) with_lookup: AtomicU64,
    /// Job by job, after failing set-based with the lookup (a push the
    /// database refuses).
    pub(crate) job_by_job: AtomicU64,
}

/// A hint's text: `h HEAD ACCOUNT` or `r ACCOUNT DEVICE` (neither an
/// account nor a device id holds a space).
pub(super) fn hint(c: &Committed) -> String {
    match c {
        Committed::Ops { account, head, .. } | Committed::Head { account, head } => {
            format!("h {head} {account}")
        }
        Committed::Revoked { account, device } => format!("r {account} {device}"),
    }
}

impl Writer {
    pub(super) async fn run(self, mut rx: mpsc::UnboundedReceiver<Job>) {
        while let Some(first) = rx.recv().await {
            let mut jobs = vec![first];
            while jobs.len() < MAX_GROUP {
                match rx.try_recv() {
                    Ok(job) => jobs.push(job),
                    Err(_) => break,
                }
            }
            self.group(jobs).await;
        }
    }

    async fn group(&self, jobs: Vec<Job>) {
        let now = Utc::now();
        let mut c = match get(&self.pool).await {
            Ok(c) => c,
            Err(e) => {
                let why = e.to_string();
                jobs.into_iter().for_each(|j| finish(fail(j, &why)));
                return;
            }
        };
        // Touches are not worth a savepoint or a lock in the group.
        let (touches, jobs): (Vec<Job>, Vec<Job>) = jobs
            .into_iter()
            .partition(|j| matches!(j, Job::Touch { .. }));
        let (done, commit) = if jobs.is_empty() {
            (Vec::new(), Ok(()))
        } else {
            match transact(&mut c, jobs, now, &self.look_up, &self.retries).await {
                Ok(r) => r,
                Err((jobs, e)) => {
                    let why = e.to_string();
                    (jobs.into_iter().map(|j| fail(j, &why)).collect(), Ok(()))
                }
            }
        };
        let (heads, hints) = {
            let hints = RefCell::new(Vec::new());
            let heads = RefCell::new(Vec::new());
            let hook = |event: Committed| {
                hints.borrow_mut().push(hint(&event));
                if let Committed::Ops { account, head, .. } = &event {
                    heads.borrow_mut().push((account.clone(), *head));
                }
                (self.on_commit)(event);
            };
            let mut touched = BTreeSet::new();
            for d in done {
                deliver(d, commit.as_ref().err(), &hook, &mut touched);
            }
            (heads.into_inner(), hints.into_inner())
        };
        let devices: Vec<String> = touches
            .into_iter()
            .filter_map(|j| match j {
                Job::Touch { device, .. } => Some(device),
                _ => None,
            })
            .collect();
        self.notify(hints);
        // The touches and the compaction check pipelined on the connection
        // (the check mostly without a statement: `compaction.rs`).
        let (_, due) = tokio::join!(
            touch(&c, &devices, now),
            self.compaction.due(&c, &heads, self.keep),
        );
        // Compaction runs on a task of its own (`compactor.rs`): the next
        // group need not wait for it.
        for (account, head) in due {
            self.compactor.request(&account);
            self.compaction.queued(&account, head);
        }
    }

    /// Hands the group's hints to the task that sends them (`hints.rs`).
    fn notify(&self, hints: Vec<String>) {
        if let Some(tx) = &self.hints
            && !hints.is_empty()
        {
            let _ = tx.send(hints);
        }
    }
}

/// Records when `devices` were last seen (outside the group's transaction).
async fn touch(c: &Object, devices: &[String], now: DateTime<Utc>) {
    if devices.is_empty() {
        return;
    }
    if let Err(e) = c
        .execute(
            "UPDATE devices SET last_seen_ms = $1 WHERE id = ANY($2)",
            &[&now.timestamp_millis(), &devices],
        )
        .await
    {
        tracing::warn!("last seen not recorded: {e}");
    }
}

/// A job that failed before its transaction: replies with the error.
fn finish(d: Done) {
    let mut none = BTreeSet::new();
    deliver(d, None, &|_| {}, &mut none);
}

/// Runs `jobs` in one transaction; `Err` gives them back when it could not
/// even start. The pushes go in set-based statements (`batch.rs`), first
/// without looking their ids up unless a recent group needed it (`look_up`
/// counts those groups down); if they fail, the transaction is rolled back
/// and they go again with the lookup, and if that fails too, the group runs
/// job by job, each in a savepoint, so that only the failing job fails.
async fn transact(
    c: &mut Object,
    jobs: Vec<Job>,
    now: DateTime<Utc>,
    look_up: &AtomicU32,
    retries: &Retries,
) -> Result<(Vec<Done>, Result<(), String>), (Vec<Job>, StoreError)> {
    let jobs = if jobs.iter().any(|j| matches!(j, Job::Push { .. })) {
        let jobs = if look_up.load(Ordering::Relaxed) == 0 {
            match together(c, jobs, now, false).await {
                Ok(r) => return Ok(r),
                Err(jobs) => {
                    look_up.store(LOOK_UP_AFTER_A_MISS, Ordering::Relaxed);
                    retries.with_lookup.fetch_add(1, Ordering::Relaxed);
                    jobs
                }
            }
        } else {
            look_up.fetch_sub(1, Ordering::Relaxed);
            jobs
        };
        match together(c, jobs, now, true).await {
            Ok(r) => return Ok(r),
            Err(jobs) => {
                retries.job_by_job.fetch_add(1, Ordering::Relaxed);
                jobs
            }
        }
    } else {
        jobs
    };
    one_by_one(c, jobs, now).await
}

/// The group's pushes all at once, then its other jobs each in a
/// savepoint; `Err` gives the jobs back, nothing of them written.
async fn together(
    c: &mut Object,
    jobs: Vec<Job>,
    now: DateTime<Utc>,
    look_up: bool,
) -> Result<(Vec<Done>, Result<(), String>), Vec<Job>> {
    if jobs.iter().all(|j| matches!(j, Job::Push { .. })) {
        return pushes_only(c, jobs, look_up).await;
    }
    let Ok(mut tx) = c.transaction().await else {
        return Err(jobs);
    };
    let pushes = batch::pushes(&jobs);
    let placed = match batch::write(&tx, &pushes, look_up).await {
        Ok(Some(placed)) => placed,
        Ok(None) => return Err(jobs),
        Err(e) => {
            tracing::debug!("the group's pushes failed together, now one by one: {e}");
            return Err(jobs);
        }
    };
    drop(pushes);
    let mut placed = placed.into_iter();
    let mut done = Vec::with_capacity(jobs.len());
    for job in jobs {
        done.push(match job {
            push @ Job::Push { .. } => answer(push, placed.next()),
            other => apply(&mut tx, other, now).await,
        });
    }
    let commit = tx.commit().await.map_err(|e| e.to_string());
    Ok((done, commit))
}

/// A group of pushes only: its own transaction, `BEGIN` and `COMMIT`
/// pipelined with its statements (`batch::write_and_commit`).
async fn pushes_only(
    c: &Object,
    jobs: Vec<Job>,
    look_up: bool,
) -> Result<(Vec<Done>, Result<(), String>), Vec<Job>> {
    let pushes = batch::pushes(&jobs);
    let (placed, commit) = match batch::write_and_commit(c, &pushes, look_up).await {
        Ok(Some(r)) => r,
        Ok(None) => return Err(jobs),
        Err(e) => {
            tracing::debug!("the group's pushes failed together, now one by one: {e}");
            return Err(jobs);
        }
    };
    drop(pushes);
    let mut placed = placed.into_iter();
    let done = jobs
        .into_iter()
        .map(|job| answer(job, placed.next()))
        .collect();
    Ok((done, commit))
}

/// A push's answer from its place in the group's writes (`None`: it has
/// none, and fails).
fn answer(job: Job, placed: Option<batch::Placed>) -> Done {
    match (job, placed) {
        (
            Job::Push {
                account,
                device,
                ops,
                reply,
            },
            Some(p),
        ) => Done::Push(reply, Ok(batch::finish(account, device, ops, p))),
        (job, _) => fail(job, "push not placed"),
    }
}

/// Runs `jobs` in one transaction, each in its own savepoint.
async fn one_by_one(
    c: &mut Object,
    jobs: Vec<Job>,
    now: DateTime<Utc>,
) -> Result<(Vec<Done>, Result<(), String>), (Vec<Job>, StoreError)> {
    let mut accounts: Vec<&str> = jobs
        .iter()
        .filter_map(|j| match j {
            Job::Push { account, .. } => Some(account.as_str()),
            _ => None,
        })
        .collect();
    accounts.sort_unstable();
    accounts.dedup();
    let mut tx = match c.transaction().await {
        Ok(tx) => tx,
        Err(e) => return Err((jobs, e.into())),
    };
    // Every account's row in id order before anything else: seqs are
    // handed out under it, and the same order in every instance means no
    // deadlock between them. NO KEY UPDATE leaves the foreign-key checks
    // of joins and pairs (KEY SHARE) unblocked.
    if let Err(e) = tx
        .query(
            "SELECT 1 FROM accounts WHERE id = ANY($1) ORDER BY id FOR NO KEY UPDATE",
            &[&accounts],
        )
        .await
    {
        drop(tx);
        return Err((jobs, e.into()));
    }
    let mut done = Vec::with_capacity(jobs.len());
    for job in jobs {
        done.push(apply(&mut tx, job, now).await);
    }
    let commit = tx.commit().await.map_err(|e| e.to_string());
    Ok((done, commit))
}

/// Runs one job in its own savepoint: if it fails, only it is undone.
async fn apply(tx: &mut Transaction<'_>, job: Job, now: DateTime<Utc>) -> Done {
    let sp = match tx.savepoint("job").await {
        Ok(sp) => sp,
        Err(e) => return fail(job, &e.to_string()),
    };
    let done = match job {
        Job::Push {
            account,
            device,
            ops,
            reply,
        } => Done::Push(reply, tx::push(&sp, &account, &device, ops).await),
        Job::Join { code, name, reply } => {
            Done::Join(reply, tx::join(&sp, &code, &name, now).await)
        }
        Job::Pair {
            account,
            ttl,
            reply,
        } => Done::Pair(reply, tx::create_code(&sp, &account, ttl, false, now).await),
        Job::Revoke {
            account,
            device,
            reply,
        } => Done::Revoke(reply, tx::revoke(&sp, &account, &device, now).await),
        Job::Touch { .. } => Done::Touch,
    };
    let ok = match &done {
        Done::Push(_, r) => r.is_ok(),
        Done::Join(_, r) => r.is_ok(),
        Done::Pair(_, r) => r.is_ok(),
        Done::Revoke(_, r) => r.is_ok(),
        Done::Touch => true,
    };
    let ended = if ok {
        sp.commit().await
    } else {
        sp.rollback().await
    };
    match ended {
        Ok(()) => done,
        Err(e) => spoil(done, &e.to_string()),
    }
}

/// A job whose savepoint could not be ended: its result is lost.
fn spoil(done: Done, why: &str) -> Done {
    let e = || StoreError::Commit(why.to_owned());
    match done {
        Done::Push(reply, _) => Done::Push(reply, Err(e())),
        Done::Join(reply, _) => Done::Join(reply, Err(e())),
        Done::Pair(reply, _) => Done::Pair(reply, Err(e())),
        Done::Revoke(reply, _) => Done::Revoke(reply, Err(e())),
        Done::Touch => Done::Touch,
    }
}
