//! The one thread that writes, committing in groups: it takes every job
//! waiting, runs each in a savepoint of one transaction (a failing job
//! rolls back alone), commits once (`synchronous=FULL`: one fsync for the
//! group), and only then replies and reports what became durable, in
//! commit order.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Mutex;
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use chrono::{DateTime, Utc};
use kairos_proto::{PushResult, SeqOp};
use rusqlite::{Connection, params};
use tokio::sync::oneshot;

use super::checkpoint::Checkpointer;
use super::tx::{create_code, due_for_compaction, join, maybe_compact, push, revoke};
use super::{Code, Joined, NewOp, Refusal, StoreError};

/// The most jobs in one transaction.
const MAX_GROUP: usize = 4096;

pub(crate) enum Job {
    Push {
        account: String,
        device: String,
        ops: Vec<NewOp>,
        reply: oneshot::Sender<Result<Vec<PushResult>, StoreError>>,
    },
    Join {
        code: String,
        name: String,
        reply: oneshot::Sender<Result<Result<Joined, Refusal>, StoreError>>,
    },
    Pair {
        account: String,
        ttl: Duration,
        reply: oneshot::Sender<Result<Code, StoreError>>,
    },
    Revoke {
        account: String,
        device: String,
        reply: oneshot::Sender<Result<bool, StoreError>>,
    },
    Touch {
        /// Its account: the touch goes to the writer of the account's
        /// pushes, ahead of them (PostgreSQL shards writers by account).
        account: String,
        device: String,
    },
}

/// What became durable, reported after the commit in commit order.
#[derive(Debug, Clone)]
pub enum Committed {
    /// New ops of `account` pushed by `from` (duplicates are not in it).
    Ops {
        /// The account.
        account: String,
        /// The device that pushed them (not sent back to it live).
        from: String,
        /// The ops with their seqs, ascending.
        ops: Vec<SeqOp>,
        /// The account's head before them: a session that has not seen
        /// every op up to here missed some (another instance's) and catches
        /// up from the store.
        prev: u64,
        /// The account's head after them.
        head: u64,
    },
    /// The account's log reached `head` (another instance committed): a
    /// session behind it catches up from the store.
    Head {
        /// The account.
        account: String,
        /// Its head.
        head: u64,
    },
    /// A device was revoked: close its sessions.
    Revoked {
        /// Its account.
        account: String,
        /// The device.
        device: String,
    },
}

pub(crate) struct Writer {
    tx: Mutex<Option<Sender<Job>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Writer {
    pub(crate) fn start(
        conn: Connection,
        db: &Path,
        keep: u64,
        on_commit: Box<dyn Fn(Committed) + Send>,
    ) -> Result<Self, StoreError> {
        let ckpt = Checkpointer::start(&conn, db)?;
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("store-writer".into())
            .spawn(move || run(conn, &ckpt, &rx, keep, &*on_commit))
            .map_err(|source| StoreError::Io {
                path: "store-writer thread".into(),
                source,
            })?;
        Ok(Self {
            tx: Mutex::new(Some(tx)),
            thread: Mutex::new(Some(thread)),
        })
    }

    pub(crate) fn send(&self, job: Job) -> Result<(), StoreError> {
        let guard = self.tx.lock().map_err(|_| StoreError::Closed)?;
        guard
            .as_ref()
            .ok_or(StoreError::Closed)?
            .send(job)
            .map_err(|_| StoreError::Closed)
    }
}

impl Drop for Writer {
    /// Finishes the jobs already sent, then stops the thread.
    fn drop(&mut self) {
        if let Ok(mut tx) = self.tx.lock() {
            tx.take();
        }
        if let Some(t) = self.thread.lock().ok().and_then(|mut t| t.take()) {
            let _ = t.join();
        }
    }
}

/// A job done inside the transaction, its reply held until the commit.
pub(crate) enum Done {
    Push(
        oneshot::Sender<Result<Vec<PushResult>, StoreError>>,
        Result<(Vec<PushResult>, Option<Committed>), StoreError>,
    ),
    Join(
        oneshot::Sender<Result<Result<Joined, Refusal>, StoreError>>,
        Result<Result<Joined, Refusal>, StoreError>,
    ),
    Pair(
        oneshot::Sender<Result<Code, StoreError>>,
        Result<Code, StoreError>,
    ),
    Revoke(
        oneshot::Sender<Result<bool, StoreError>>,
        Result<(bool, Option<Committed>), StoreError>,
    ),
    Touch,
}

fn run(
    mut conn: Connection,
    ckpt: &Checkpointer,
    rx: &Receiver<Job>,
    keep: u64,
    on_commit: &dyn Fn(Committed),
) {
    while let Ok(first) = rx.recv() {
        let mut jobs = vec![first];
        while jobs.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(job) => jobs.push(job),
                Err(_) => break,
            }
        }
        let now = Utc::now();
        // IMMEDIATE: take the write lock first (waiting on the busy timeout
        // if `kairos-server invite` holds it). A deferred transaction that
        // read before another process wrote fails at once with SQLITE_BUSY.
        let (done, commit) = match conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        {
            Ok(tx) => {
                let done: Vec<Done> = jobs.into_iter().map(|job| apply(&tx, job, now)).collect();
                (done, tx.commit().map_err(|e| e.to_string()))
            }
            Err(e) => (
                jobs.into_iter().map(|j| fail(j, &e.to_string())).collect(),
                Ok(()),
            ),
        };
        let mut touched = BTreeSet::new();
        for d in done {
            deliver(d, commit.as_ref().err(), on_commit, &mut touched);
        }
        // After the replies: they wait for nothing but the commit.
        if commit.is_ok() {
            ckpt.committed(&conn);
        }
        if commit.is_ok() && !touched.is_empty() {
            let due = due_for_compaction(&mut conn, &touched, keep).unwrap_or_else(|e| {
                tracing::warn!("compaction check failed: {e}");
                Vec::new()
            });
            for account in due {
                if let Err(e) = maybe_compact(&mut conn, &account, keep) {
                    tracing::warn!(%account, "compaction failed: {e}");
                }
            }
        }
    }
}

/// Replies (after the commit) and reports what became durable.
pub(crate) fn deliver(
    d: Done,
    failed: Option<&String>,
    on_commit: &dyn Fn(Committed),
    touched: &mut BTreeSet<String>,
) {
    let lost = || StoreError::Commit(failed.cloned().unwrap_or_default());
    match d {
        Done::Push(reply, r) => {
            let r = match (failed, r) {
                (Some(_), _) => Err(lost()),
                (None, Ok((results, event))) => {
                    if let Some(event) = event {
                        if let Committed::Ops { account, .. } = &event {
                            touched.insert(account.clone());
                        }
                        on_commit(event);
                    }
                    Ok(results)
                }
                (None, Err(e)) => Err(e),
            };
            let _ = reply.send(r);
        }
        Done::Revoke(reply, r) => {
            let r = match (failed, r) {
                (Some(_), _) => Err(lost()),
                (None, Ok((found, event))) => {
                    event.into_iter().for_each(on_commit);
                    Ok(found)
                }
                (None, Err(e)) => Err(e),
            };
            let _ = reply.send(r);
        }
        Done::Join(reply, r) => {
            let _ = reply.send(if failed.is_some() { Err(lost()) } else { r });
        }
        Done::Pair(reply, r) => {
            let _ = reply.send(if failed.is_some() { Err(lost()) } else { r });
        }
        Done::Touch => {}
    }
}

pub(crate) fn fail(job: Job, why: &str) -> Done {
    let e = || StoreError::Commit(why.to_owned());
    match job {
        Job::Push { reply, .. } => Done::Push(reply, Err(e())),
        Job::Join { reply, .. } => Done::Join(reply, Err(e())),
        Job::Pair { reply, .. } => Done::Pair(reply, Err(e())),
        Job::Revoke { reply, .. } => Done::Revoke(reply, Err(e())),
        Job::Touch { .. } => Done::Touch,
    }
}

/// Runs one job in its own savepoint: if it fails, only it is undone.
fn apply(tx: &rusqlite::Transaction<'_>, job: Job, now: DateTime<Utc>) -> Done {
    fn inner<T>(
        tx: &rusqlite::Transaction<'_>,
        f: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        // Cached: parsed once, not for every job (a push of one op is
        // three statements besides these two).
        tx.prepare_cached("SAVEPOINT job")?.execute([])?;
        let r = f(tx);
        match &r {
            Ok(_) => {
                tx.prepare_cached("RELEASE job")?.execute([])?;
            }
            Err(_) => tx.execute_batch("ROLLBACK TO job; RELEASE job")?,
        }
        r
    }
    match job {
        Job::Push {
            account,
            device,
            ops,
            reply,
        } => Done::Push(reply, inner(tx, |c| push(c, &account, &device, ops))),
        Job::Join { code, name, reply } => {
            Done::Join(reply, inner(tx, |c| join(c, &code, &name, now)))
        }
        Job::Pair {
            account,
            ttl,
            reply,
        } => Done::Pair(
            reply,
            inner(tx, |c| create_code(c, &account, ttl, false, now)),
        ),
        Job::Revoke {
            account,
            device,
            reply,
        } => Done::Revoke(reply, inner(tx, |c| revoke(c, &account, &device, now))),
        Job::Touch { device, .. } => {
            let _ = inner(tx, |c| {
                c.prepare_cached("UPDATE devices SET last_seen_ms = ?1 WHERE id = ?2")?
                    .execute(params![now.timestamp_millis(), device])?;
                Ok(())
            });
            Done::Touch
        }
    }
}
