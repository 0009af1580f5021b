//! The server's store: accounts, devices, pairing codes and ops in one
//! SQLite file. This module is the seam for another engine (PostgreSQL for
//! several instances): the rest of the server sees only [`Store`]'s async
//! methods and the plain types below, never SQL.
//!
//! Writes go to one thread that commits in groups (`writer.rs`): every
//! write waiting when a transaction starts joins it, so one fsync serves
//! many pushes. Reads use a small pool of connections on tokio's blocking
//! threads (`read.rs`).

mod read;
mod schema;
mod tx;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use kairos_proto::{DeviceInfo, Op, PushResult, SeqOp};
use tokio::sync::oneshot;

pub use schema::db_path;
pub use writer::Committed;

use read::Readers;
use writer::{Job, Writer};

/// A store failure: the database, the file system, or the writer thread.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite said no.
    #[error("database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The schema could not be brought up to date.
    #[error("database schema: {0}")]
    Migration(#[from] rusqlite_migration::Error),
    /// A file or directory could not be created.
    #[error("{}: {source}", .path.display())]
    Io {
        /// What was being created.
        path: PathBuf,
        /// Why it failed.
        source: std::io::Error,
    },
    /// The OS random number generator failed.
    #[error("random numbers: {0}")]
    Random(std::io::Error),
    /// The group's commit failed; nothing of this job was stored.
    #[error("commit failed: {0}")]
    Commit(String),
    /// The writer thread is gone (the server is stopping).
    #[error("the store is shutting down")]
    Closed,
    /// A stored op no longer decodes (the database was edited by hand).
    #[error("stored op {0} does not decode: {1}")]
    Corrupt(u64, String),
}

/// Why a credential was refused: the one-line body of the 401.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// No such token.
    UnknownToken,
    /// The token's device was revoked.
    Revoked,
    /// No such pairing code.
    UnknownCode,
    /// The pairing code is past its expiry.
    ExpiredCode,
    /// The pairing code was used already.
    UsedCode,
}

impl Refusal {
    /// The text of the 401 body.
    pub fn reason(self) -> &'static str {
        match self {
            Self::UnknownToken => "unknown token",
            Self::Revoked => "device revoked",
            Self::UnknownCode => "unknown pairing code",
            Self::ExpiredCode => "pairing code expired",
            Self::UsedCode => "pairing code already used",
        }
    }
}

/// A live device, from its token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Auth {
    /// Its account: everything the session reads or writes is in it.
    pub account: String,
    /// Its id.
    pub device: String,
}

/// A device that just joined.
#[derive(Debug, Clone)]
pub struct Joined {
    /// Who it is.
    pub auth: Auth,
    /// Its token, shown once and never stored.
    pub token: String,
}

/// A new pairing code.
#[derive(Debug, Clone)]
pub struct Code {
    /// The account it joins.
    pub account: String,
    /// `XXXX-XXXX-XXXX`.
    pub code: String,
    /// When it stops working.
    pub expires_at: DateTime<Utc>,
}

/// Where an account's log stands.
#[derive(Debug, Clone, Copy)]
pub struct Log {
    /// The highest seq handed out.
    pub head: u64,
    /// The highest seq compaction removed.
    pub floor: u64,
}

/// The handle the server uses; cheap to clone.
#[derive(Clone)]
pub struct Store {
    writer: Arc<Writer>,
    readers: Arc<Readers>,
}

impl Store {
    /// Opens (creating if needed) the store in `data` and starts its writer
    /// thread. `on_commit` is called on that thread after each commit, in
    /// commit order, with what became durable (the fan-out hook).
    /// Compaction keeps the newest `compact_keep` ops of each account.
    pub fn open(
        data: &Path,
        compact_keep: u64,
        on_commit: Box<dyn Fn(Committed) + Send>,
    ) -> Result<Self, StoreError> {
        let conn = schema::create_and_migrate(data)?;
        let path = db_path(data);
        let writer = Writer::start(conn, compact_keep, on_commit)?;
        Ok(Self {
            writer: Arc::new(writer),
            readers: Arc::new(Readers::new(path)),
        })
    }

    /// Makes a pairing code for `account`, creating the account if new.
    /// Blocking, on its own connection: what `kairos-server invite` runs
    /// while a server may be running on the same file.
    pub fn invite(data: &Path, account: &str, ttl: Duration) -> Result<Code, StoreError> {
        let mut conn = schema::create_and_migrate(data)?;
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let code = tx::create_code(&tx, account, ttl, true, Utc::now())?;
        tx.commit()?;
        Ok(code)
    }

    async fn ask<T>(&self, job: impl FnOnce(oneshot::Sender<T>) -> Job) -> Result<T, StoreError> {
        let (tx, rx) = oneshot::channel();
        self.writer.send(job(tx))?;
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
        let (reply, rx) = oneshot::channel();
        let queued = self.writer.send(Job::Push {
            account: auth.account.clone(),
            device: auth.device.clone(),
            ops,
            reply,
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

    /// Records that `device` started a session (not waited for).
    pub fn touch(&self, device: &str) {
        let _ = self.writer.send(Job::Touch {
            device: device.to_owned(),
        });
    }

    /// The device a token belongs to, if live.
    pub async fn authenticate(&self, token: &str) -> Result<Result<Auth, Refusal>, StoreError> {
        let hash = crate::secrets::sha256(token);
        self.readers.run(move |r| r.authenticate(&hash)).await
    }

    /// Whether `device` is still live (after a missed revocation event).
    pub async fn is_live(&self, device: &str) -> Result<bool, StoreError> {
        let device = device.to_owned();
        self.readers.run(move |r| r.is_live(&device)).await
    }

    /// Head and floor of `account`.
    pub async fn log(&self, account: &str) -> Result<Log, StoreError> {
        let account = account.to_owned();
        self.readers.run(move |r| r.log(&account)).await
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
        self.readers
            .run(move |r| r.ops_after(&account, after, max, max_bytes))
            .await
    }

    /// The devices of `account`; `connected` is filled in by the caller.
    pub async fn devices(&self, account: &str) -> Result<Vec<DeviceInfo>, StoreError> {
        let account = account.to_owned();
        self.readers.run(move |r| r.devices(&account)).await
    }
}
