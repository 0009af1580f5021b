//! The server's store: accounts, devices, pairing codes and ops, in an
//! embedded SQLite file (the default) or in PostgreSQL (several instances
//! on one database). The rest of the server sees only [`Store`]'s async
//! methods and the plain types below, never SQL.
//!
//! [`Store`] is an enum over the two backends rather than a trait object:
//! the set is closed, `push` must return a `'static` future that is queued
//! before it returns (pushes commit in call order), and a trait with async
//! methods would box every read's future for nothing.
//!
//! Both backends write the same way: the jobs go to one writer (a thread
//! for SQLite, `writer.rs`; a task for PostgreSQL, `pg/writer.rs`) that
//! commits every job waiting in one transaction, each job in a savepoint,
//! replies only after the commit, and reports what became durable in commit
//! order. SQLite reads use a pool of connections on tokio's blocking
//! threads (`read.rs`); PostgreSQL reads a connection pool.

mod admin;
mod checkpoint;
mod new_op;
mod pg;

/// A `--database` URL parsed, with its TLS (see `pg/tls.rs`).
pub(crate) use pg::parse as pg_target;

/// A pool's failure to give a connection: the database's own error when
/// it has one (a refused login, a refused certificate), named as such.
pub(crate) fn pool_error(e: deadpool_postgres::PoolError) -> StoreError {
    match e {
        deadpool_postgres::PoolError::Backend(e) => StoreError::Postgres(e),
        other => StoreError::Pool(other.to_string()),
    }
}
mod read;
mod schema;
mod sqlite;
mod tx;
mod types;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use kairos_proto::{DeviceInfo, Op, PushResult, PushedOp, SeqOp};
use tokio::sync::oneshot;

pub use admin::{Backup, Deleted, Exported};
pub use pg::{
    Round as PresenceRound, SCHEMA_VERSION as POSTGRES_SCHEMA_VERSION, migrate as migrate_postgres,
};
pub(crate) use schema::create_and_migrate;
pub use schema::db_path;
pub use writer::Committed;

use new_op::NewOp;
use writer::Job;

pub use types::{Auth, Code, Heads, Joined, Log, Refusal, StoreError};

/// Where the store lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Database {
    /// `server.db` in this data directory (created 0700).
    Sqlite(PathBuf),
    /// A PostgreSQL URL (`postgres://user@host/db`), migrated beforehand
    /// with `kairos-server migrate`.
    Postgres(String),
}

/// The handle the server uses; cheap to clone.
#[derive(Clone)]
pub struct Store(Arc<Backend>);

enum Backend {
    Sqlite(sqlite::Sqlite),
    Postgres(Box<pg::Postgres>),
}

impl Store {
    /// Opens (creating if needed) the SQLite store in `data` and starts its
    /// writer thread. `on_commit` is called on that thread after each
    /// commit, in commit order, with what became durable (the fan-out
    /// hook). Compaction keeps the newest `compact_keep` ops of each
    /// account.
    pub fn open(
        data: &Path,
        compact_keep: u64,
        on_commit: Box<dyn Fn(Committed) + Send>,
    ) -> Result<Self, StoreError> {
        let s = sqlite::Sqlite::open(data, compact_keep, on_commit)?;
        Ok(Self(Arc::new(Backend::Sqlite(s))))
    }

    /// Opens `db`: SQLite as [`Store::open`]; PostgreSQL after checking
    /// that its schema is the one this server runs on (never migrating
    /// it), with `hints` sending a hint of each commit to the other
    /// instances after the commit.
    pub async fn connect(
        db: &Database,
        compact_keep: u64,
        hints: bool,
        on_commit: Box<dyn Fn(Committed) + Send + Sync>,
    ) -> Result<Self, StoreError> {
        match db {
            Database::Sqlite(data) => Self::open(data, compact_keep, on_commit),
            Database::Postgres(url) => {
                let p = pg::Postgres::connect(url, compact_keep, hints, on_commit).await?;
                Ok(Self(Arc::new(Backend::Postgres(Box::new(p)))))
            }
        }
    }

    /// Makes a pairing code for `account`, creating the account if new.
    /// Blocking, on its own connection: what `kairos-server invite` runs
    /// while a server may be running on the same file.
    pub fn invite(data: &Path, account: &str, ttl: Duration) -> Result<Code, StoreError> {
        sqlite::Sqlite::invite(data, account, ttl)
    }

    /// [`Store::invite`] on either backend.
    pub async fn invite_in(
        db: &Database,
        account: &str,
        ttl: Duration,
    ) -> Result<Code, StoreError> {
        match db {
            Database::Sqlite(data) => {
                let (data, account) = (data.clone(), account.to_owned());
                tokio::task::spawn_blocking(move || Self::invite(&data, &account, ttl))
                    .await
                    .map_err(|_| StoreError::Closed)?
            }
            Database::Postgres(url) => pg::invite(url, account, ttl, Utc::now()).await,
        }
    }

    /// Groups of pushes the writers ran again since the store opened
    /// (PostgreSQL; the SQLite writer runs every job in its savepoint and
    /// never retries a group): `(with the lookup of their ids, job by job)`.
    /// A group goes in without looking its ids up first; one repeating an
    /// id stored before fails on its key and goes in again with the lookup;
    /// one the database refuses then goes in job by job.
    #[must_use]
    pub fn retried_groups(&self) -> (u64, u64) {
        match &*self.0 {
            Backend::Sqlite(_) => (0, 0),
            Backend::Postgres(p) => p.retries(),
        }
    }

    /// Whether this store is shared with other instances (PostgreSQL):
    /// then commits of other instances arrive as hints, not `on_commit`.
    #[must_use]
    pub fn is_shared(&self) -> bool {
        matches!(&*self.0, Backend::Postgres(_))
    }

    fn send(&self, job: Job) -> Result<(), StoreError> {
        match &*self.0 {
            Backend::Sqlite(s) => s.send(job),
            Backend::Postgres(p) => p.send(job),
        }
    }

    async fn ask<T>(&self, job: impl FnOnce(oneshot::Sender<T>) -> Job) -> Result<T, StoreError> {
        let (tx, rx) = oneshot::channel();
        self.send(job(tx))?;
        rx.await.map_err(|_| StoreError::Closed)
    }

    /// Stores `ops` of `auth.device` (already validated): new ones get the
    /// next seqs, known ids their first seq. The job is queued before this
    /// returns, so pushes are committed in the order this is called; the
    /// future resolves once they are durable.
    pub fn push(
        &self,
        auth: &Auth,
        ops: Vec<Op>,
    ) -> impl Future<Output = Result<Vec<PushResult>, StoreError>> + Send + 'static {
        // Encoded here, on the caller's (parallel) runtime worker: the
        // writer, which is serial, only inserts.
        self.push_new(auth, NewOp::all(ops))
    }

    /// [`Self::push`] for ops decoded from a device's frame: their JSON is
    /// the text that came with them ([`kairos_proto::decode_client_frame`]),
    /// not encoded again.
    pub fn push_pushed(
        &self,
        auth: &Auth,
        ops: Vec<PushedOp>,
    ) -> impl Future<Output = Result<Vec<PushResult>, StoreError>> + Send + 'static {
        self.push_new(auth, Ok(ops.into_iter().map(NewOp::from).collect()))
    }

    fn push_new(
        &self,
        auth: &Auth,
        ops: Result<Vec<NewOp>, StoreError>,
    ) -> impl Future<Output = Result<Vec<PushResult>, StoreError>> + Send + 'static {
        let (reply, rx) = oneshot::channel();
        let queued = ops.and_then(|ops| {
            self.send(Job::Push {
                account: auth.account.clone(),
                device: auth.device.clone(),
                ops,
                reply,
            })
        });
        async move {
            queued?;
            rx.await.map_err(|_| StoreError::Closed)?
        }
    }

    /// Consumes a pairing code (canonical form) and creates a device.
    pub async fn join(
        &self,
        code: String,
        name: String,
    ) -> Result<Result<Joined, Refusal>, StoreError> {
        self.ask(|reply| Job::Join { code, name, reply }).await?
    }

    /// A new pairing code for an existing account.
    pub async fn pair(&self, account: &str, ttl: Duration) -> Result<Code, StoreError> {
        let account = account.to_owned();
        self.ask(|reply| Job::Pair {
            account,
            ttl,
            reply,
        })
        .await?
    }

    /// Revokes `device` if it belongs to `account`; `false` if it does not.
    pub async fn revoke(&self, account: &str, device: &str) -> Result<bool, StoreError> {
        let (account, device) = (account.to_owned(), device.to_owned());
        self.ask(|reply| Job::Revoke {
            account,
            device,
            reply,
        })
        .await?
    }

    /// Records that `device` of `account` started a session (not waited
    /// for; ahead of the device's pushes).
    pub fn touch(&self, account: &str, device: &str) {
        let _ = self.send(Job::Touch {
            account: account.to_owned(),
            device: device.to_owned(),
        });
    }

    /// The device a token belongs to, if live.
    pub async fn authenticate(&self, token: &str) -> Result<Result<Auth, Refusal>, StoreError> {
        let hash = crate::secrets::sha256(token);
        match &*self.0 {
            Backend::Sqlite(s) => s.readers.run(move |r| r.authenticate(&hash)).await,
            Backend::Postgres(p) => p.authenticate(&hash).await,
        }
    }

    /// Whether `device` is still live (after a missed revocation event).
    pub async fn is_live(&self, device: &str) -> Result<bool, StoreError> {
        let device = device.to_owned();
        match &*self.0 {
            Backend::Sqlite(s) => s.readers.run(move |r| r.is_live(&device)).await,
            Backend::Postgres(p) => p.is_live(&device).await,
        }
    }

    /// Head and floor of `account`.
    pub async fn log(&self, account: &str) -> Result<Log, StoreError> {
        let account = account.to_owned();
        match &*self.0 {
            Backend::Sqlite(s) => s.readers.run(move |r| r.log(&account)).await,
            Backend::Postgres(p) => p.log(&account).await,
        }
    }

    /// The heads of those of `accounts` that exist (the cross-instance
    /// check that repairs a lost hint).
    pub async fn heads(&self, accounts: Vec<String>) -> Result<Vec<Heads>, StoreError> {
        match &*self.0 {
            Backend::Sqlite(s) => {
                s.readers
                    .run(move |r| {
                        let mut heads = Vec::with_capacity(accounts.len());
                        for account in accounts {
                            if let Some(l) = r.log_if_any(&account)? {
                                heads.push(Heads {
                                    account,
                                    head: l.head,
                                    revocations: 0,
                                });
                            }
                        }
                        Ok(heads)
                    })
                    .await
            }
            Backend::Postgres(p) => p.heads(&accounts).await,
        }
    }

    /// Those of `devices` that are revoked (the repair of a lost
    /// revocation hint).
    pub async fn revoked_among(&self, devices: Vec<String>) -> Result<Vec<String>, StoreError> {
        match &*self.0 {
            Backend::Sqlite(s) => {
                s.readers
                    .run(move |r| {
                        let mut revoked = Vec::new();
                        for d in devices {
                            if !r.is_live(&d)? {
                                revoked.push(d);
                            }
                        }
                        Ok(revoked)
                    })
                    .await
            }
            Backend::Postgres(p) => p.revoked_among(&devices).await,
        }
    }

    /// Ops of `account` after `after`, in seq order: at most `max` ops and
    /// about `max_bytes` of encoded ops (at least one op if there is one).
    pub async fn ops_after(
        &self,
        account: &str,
        after: u64,
        max: usize,
        max_bytes: usize,
    ) -> Result<Vec<SeqOp>, StoreError> {
        let account = account.to_owned();
        match &*self.0 {
            Backend::Sqlite(s) => {
                s.readers
                    .run(move |r| r.ops_after(&account, after, max, max_bytes))
                    .await
            }
            Backend::Postgres(p) => p.ops_after(&account, after, max, max_bytes).await,
        }
    }

    /// The devices of `account`; `connected` says whether another instance
    /// holds a session of it (PostgreSQL), the caller adds its own.
    pub async fn devices(&self, account: &str) -> Result<Vec<DeviceInfo>, StoreError> {
        let account = account.to_owned();
        match &*self.0 {
            Backend::Sqlite(s) => s.readers.run(move |r| r.devices(&account)).await,
            Backend::Postgres(p) => p.devices(&account).await,
        }
    }

    /// Writes one round of this instance's sessions for the others
    /// (PostgreSQL; `Ok(true)` on SQLite, which has no others); `Ok(false)`
    /// asks for all sessions as opened next round.
    pub async fn presence(&self, round: &PresenceRound<'_>) -> Result<bool, StoreError> {
        match &*self.0 {
            Backend::Sqlite(_) => Ok(true),
            Backend::Postgres(p) => p.presence(round).await,
        }
    }

    /// Listens for the other instances' hints (PostgreSQL only; `None` on
    /// SQLite), reconnecting after a lost connection, until dropped.
    pub fn listen(&self, on_hint: Arc<dyn Fn(Committed) + Send + Sync>) -> Option<Listener> {
        match &*self.0 {
            Backend::Sqlite(_) => None,
            Backend::Postgres(p) => Some(Listener(p.listen(on_hint))),
        }
    }

    /// Waits until the writer has committed its last job and stopped
    /// (PostgreSQL; the SQLite thread is joined when the store is dropped).
    /// Call after dropping every other handle.
    pub async fn close(self) {
        let done = match &*self.0 {
            Backend::Postgres(p) => p.done(),
            Backend::Sqlite(_) => None,
        };
        // Dropping the last SQLite handle joins the writer thread after its
        // queued jobs: off the async workers.
        let _ = tokio::task::spawn_blocking(move || drop(self)).await;
        // Bounded: a handle still held elsewhere would keep the writer
        // waiting for jobs; its queued ones are committed by then anyway.
        if let Some(done) = done
            && tokio::time::timeout(Duration::from_secs(10), done)
                .await
                .is_err()
        {
            tracing::warn!("the store's writer did not stop within 10 s");
        }
    }
}

/// The task listening for hints; stops when dropped.
pub struct Listener(tokio::task::JoinHandle<()>);

impl Drop for Listener {
    fn drop(&mut self) {
        self.0.abort();
    }
}
