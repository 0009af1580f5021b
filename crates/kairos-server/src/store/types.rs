//! The plain types the store's callers see: its error, a credential's
//! refusal, and what the writes and reads return.

use std::path::PathBuf;

use chrono::{DateTime, Utc};

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
    /// A pushed op (its id) could not be encoded for storing.
    #[error("op {0} does not encode: {1}")]
    Encode(String, String),
    /// PostgreSQL said no (or the connection failed): its own message,
    /// not `tokio_postgres`'s bare "db error".
    #[error("postgres: {}", pg_text(.0))]
    Postgres(#[from] tokio_postgres::Error),
    /// No PostgreSQL connection could be had from the pool.
    #[error("postgres connection pool: {0}")]
    Pool(String),
    /// The PostgreSQL URL does not parse.
    #[error("database URL: {0}")]
    Url(String),
    /// The PostgreSQL schema is not the one this server runs on.
    #[error("{0}")]
    Schema(String),
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

/// An account as the periodic check sees it (`relay.rs`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Heads {
    /// The account.
    pub account: String,
    /// Its head.
    pub head: u64,
    /// How many revocations it has had (always 0 on SQLite, whose one
    /// process sees every revocation as it commits).
    pub revocations: u64,
}

/// What PostgreSQL said: the server's code and message (and detail) for a
/// database error, else the client's error with its cause.
fn pg_text(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        let mut text = format!("{} ({})", db.message(), db.code().code());
        if let Some(detail) = db.detail() {
            text.push_str(": ");
            text.push_str(detail);
        }
        return text;
    }
    if let Some(problem) = kairos_tls::refused_certificate(e) {
        return format!(
            "the database's certificate is refused: {problem} (give its CA as \
             sslrootcert=FILE in --database)"
        );
    }
    match std::error::Error::source(e) {
        Some(cause) => format!("{e}: {cause}"),
        None => e.to_string(),
    }
}
