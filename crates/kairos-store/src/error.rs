//! The one error type of the store. Each message names the database file, says
//! what is wrong and what to do; [`StoreError::kind`] is for code that decides.

use std::time::Duration;

use chrono::{DateTime, Utc};
use rusqlite::ffi::ErrorCode;

/// What kind of failure, for callers that branch on it (and for IPC `{kind, message}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Another connection held the write lock past the busy timeout. Retryable.
    Busy,
    /// A table was locked by a conflicting statement. Retryable.
    Locked,
    /// The database cannot be written (opened read-only, or not writable).
    ReadOnly,
    /// No room: the disk is full or the page limit was reached. Nothing was written.
    Full,
    /// Not a SQLite database, damaged, or not Kairos's.
    Corrupt,
    /// The schema version does not match what this binary can use.
    Schema,
    /// The named row does not exist.
    NotFound,
    /// Another engine holds the single-writer lease, or ours was lost.
    LeaseHeld,
    /// Anything else (a bug, an I/O error).
    Other,
}

/// Everything that can go wrong with the store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// `SQLITE_BUSY`.
    #[error(
        "{path} is busy: another connection held its write lock longer than the {timeout_ms} ms \
         busy timeout. This passes: retry. If it persists, another Kairos process is stuck \
         holding the database; stop it"
    )]
    Busy {
        /// The database file.
        path: String,
        /// The busy timeout that ran out.
        timeout_ms: u64,
        /// SQLite's error.
        source: Box<rusqlite::Error>,
    },
    /// `SQLITE_LOCKED`.
    #[error("{path}: a table is locked by a conflicting statement ({source}); retry")]
    Locked {
        /// The database file.
        path: String,
        /// SQLite's error.
        source: Box<rusqlite::Error>,
    },
    /// `SQLITE_READONLY`.
    #[error(
        "{path} cannot be written ({detail}); nothing was changed. Make the file, its directory \
         and any -wal/-shm files beside it writable by this user (e.g. chmod u+w), or use a \
         read-only open only to read"
    )]
    ReadOnly {
        /// The database file.
        path: String,
        /// SQLite's message or what we found.
        detail: String,
    },
    /// `SQLITE_FULL`.
    #[error(
        "{path}: no room for this change ({source}): the disk is full or the database reached \
         its page limit. The transaction was rolled back and earlier data is intact; free disk \
         space and retry"
    )]
    Full {
        /// The database file.
        path: String,
        /// SQLite's error.
        source: Box<rusqlite::Error>,
    },
    /// `SQLITE_NOTADB`, `SQLITE_CORRUPT`, or a stored value this binary cannot read.
    #[error(
        "{path} is not a SQLite database or is damaged ({detail}). Nothing was written to it. \
         Move it aside (keep it: `sqlite3 FILE .recover` may save its data) and restart to create \
         a fresh one, or restore a backup"
    )]
    Corrupt {
        /// The database file.
        path: String,
        /// SQLite's message or what we found.
        detail: String,
    },
    /// A SQLite database that some other program owns.
    #[error(
        "{path} is a SQLite database but not a Kairos one ({detail}); Kairos did not modify it. \
         Point Kairos at a new file or at its own database"
    )]
    NotKairos {
        /// The database file.
        path: String,
        /// What gave it away.
        detail: String,
    },
    /// The file was written by a newer Kairos.
    #[error(
        "{path} has schema version {found}, newer than version {known} that this Kairos knows: it \
         was written by a newer Kairos. It was left untouched. Upgrade Kairos, or restore a backup \
         made before the upgrade"
    )]
    SchemaTooNew {
        /// The database file.
        path: String,
        /// `user_version` in the file.
        found: u32,
        /// The newest version this binary knows.
        known: u32,
    },
    /// A read-only open found a schema that needs upgrading first.
    #[error(
        "{path} has schema version {found} but this Kairos needs version {known}, and it was \
         opened read-only. Open it read-write once (e.g. start the Kairos daemon) to upgrade it"
    )]
    SchemaTooOld {
        /// The database file.
        path: String,
        /// `user_version` in the file.
        found: u32,
        /// The version this binary needs.
        known: u32,
    },
    /// Applying a migration failed for a reason that is not one of the above.
    #[error(
        "{path}: upgrading the schema failed ({source}). Nothing was changed: migrations run in \
         one transaction. This is a Kairos bug; please report it with this message"
    )]
    Migration {
        /// The database file.
        path: String,
        /// What rusqlite_migration reported.
        source: Box<rusqlite_migration::Error>,
    },
    /// A row the operation needs does not exist.
    #[error("{path}: {what} does not exist")]
    NotFound {
        /// The database file.
        path: String,
        /// What was looked for, e.g. "reminder instance `k`".
        what: String,
    },
    /// Another engine holds a valid single-writer lease.
    #[error(
        "{path} is in use by another Kairos engine ({owner}) whose lease runs until {until}. Stop \
         that engine first; if it crashed, its lease expires by itself at that time"
    )]
    LeaseHeld {
        /// The database file.
        path: String,
        /// The holder.
        owner: String,
        /// When its lease expires.
        until: DateTime<Utc>,
    },
    /// Renewing found the lease gone or taken over.
    #[error(
        "{path}: this engine's lease was lost ({detail}). Stop firing reminders and acquire the \
         lease again"
    )]
    LeaseLost {
        /// The database file.
        path: String,
        /// Who has it now, if anyone.
        detail: String,
    },
    /// `SQLITE_CANTOPEN`.
    #[error(
        "cannot open {path} ({source}): check that its directory exists and that this user may \
         read and write there"
    )]
    CannotOpen {
        /// The database file.
        path: String,
        /// SQLite's error.
        source: Box<rusqlite::Error>,
    },
    /// The file or file system cannot do what the store needs.
    #[error("{path}: {detail}. Kairos needs SQLite's WAL mode: keep the database on a local disk")]
    Unsupported {
        /// The database file.
        path: String,
        /// What failed.
        detail: String,
    },
    /// `SQLITE_CONSTRAINT` that no operation turned into something more precise.
    #[error(
        "{path}: the change breaks a database rule ({source}): a value is invalid (e.g. a payload \
         that is not JSON) or refers to a calendar that does not exist. Nothing was written; this \
         is a bug in the caller"
    )]
    Constraint {
        /// The database file.
        path: String,
        /// SQLite's error.
        source: Box<rusqlite::Error>,
    },
    /// Flushing the write-ahead log to the disk failed (`fdatasync`): what
    /// was committed since the last flush may not survive a power cut.
    #[error(
        "{path}: could not flush the write-ahead log to the disk ({source}); recent changes may \
         not survive a power cut. Check the disk"
    )]
    Sync {
        /// The database file.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// Any other SQLite or I/O error.
    #[error("{path}: database error: {source}")]
    Sqlite {
        /// The database file.
        path: String,
        /// SQLite's error.
        source: Box<rusqlite::Error>,
    },
}

impl StoreError {
    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        match self {
            StoreError::Busy { .. } => ErrorKind::Busy,
            StoreError::Locked { .. } => ErrorKind::Locked,
            StoreError::ReadOnly { .. } => ErrorKind::ReadOnly,
            StoreError::Full { .. } => ErrorKind::Full,
            StoreError::Corrupt { .. } | StoreError::NotKairos { .. } => ErrorKind::Corrupt,
            StoreError::SchemaTooNew { .. } | StoreError::SchemaTooOld { .. } => ErrorKind::Schema,
            StoreError::NotFound { .. } => ErrorKind::NotFound,
            StoreError::LeaseHeld { .. } | StoreError::LeaseLost { .. } => ErrorKind::LeaseHeld,
            StoreError::Migration { .. }
            | StoreError::CannotOpen { .. }
            | StoreError::Unsupported { .. }
            | StoreError::Constraint { .. }
            | StoreError::Sync { .. }
            | StoreError::Sqlite { .. } => ErrorKind::Other,
        }
    }

    /// Whether the same call may succeed if simply tried again (busy or locked).
    pub fn is_retryable(&self) -> bool {
        matches!(self.kind(), ErrorKind::Busy | ErrorKind::Locked)
    }
}

/// Shorthand for the store's results.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// What an error message needs to know about the database it happened on.
#[derive(Debug, Clone)]
pub(crate) struct Ctx {
    pub(crate) path: String,
    pub(crate) busy_timeout: Duration,
}

impl Ctx {
    /// Classifies a rusqlite error.
    pub(crate) fn err(&self, e: rusqlite::Error) -> StoreError {
        let path = self.path.clone();
        match e.sqlite_error_code() {
            Some(ErrorCode::DatabaseBusy) => StoreError::Busy {
                path,
                timeout_ms: u64::try_from(self.busy_timeout.as_millis()).unwrap_or(u64::MAX),
                source: Box::new(e),
            },
            Some(ErrorCode::DatabaseLocked) => StoreError::Locked {
                path,
                source: Box::new(e),
            },
            Some(ErrorCode::ReadOnly) => StoreError::ReadOnly {
                path,
                detail: e.to_string(),
            },
            Some(ErrorCode::DiskFull) => StoreError::Full {
                path,
                source: Box::new(e),
            },
            Some(ErrorCode::ConstraintViolation) => StoreError::Constraint {
                path,
                source: Box::new(e),
            },
            Some(ErrorCode::CannotOpen) => StoreError::CannotOpen {
                path,
                source: Box::new(e),
            },
            Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => StoreError::Corrupt {
                path,
                detail: e.to_string(),
            },
            _ => match e {
                // A stored value of the wrong shape: the file was altered behind our back.
                rusqlite::Error::FromSqlConversionFailure(..)
                | rusqlite::Error::InvalidColumnType(..)
                | rusqlite::Error::IntegralValueOutOfRange(..) => StoreError::Corrupt {
                    path,
                    detail: format!("unreadable stored value: {e}"),
                },
                e => StoreError::Sqlite {
                    path,
                    source: Box::new(e),
                },
            },
        }
    }

    /// Classifies a migration error: SQLite's kinds first, else [`StoreError::Migration`].
    pub(crate) fn migration_err(&self, e: rusqlite_migration::Error) -> StoreError {
        if let rusqlite_migration::Error::RusqliteError { query, err } = e {
            return match self.err(err) {
                StoreError::Sqlite { source, .. } | StoreError::Constraint { source, .. } => {
                    StoreError::Migration {
                        path: self.path.clone(),
                        source: Box::new(rusqlite_migration::Error::RusqliteError {
                            query,
                            err: *source,
                        }),
                    }
                }
                other => other,
            };
        }
        StoreError::Migration {
            path: self.path.clone(),
            source: Box::new(e),
        }
    }

    pub(crate) fn not_found(&self, what: impl Into<String>) -> StoreError {
        StoreError::NotFound {
            path: self.path.clone(),
            what: what.into(),
        }
    }

    pub(crate) fn corrupt(&self, detail: impl Into<String>) -> StoreError {
        StoreError::Corrupt {
            path: self.path.clone(),
            detail: detail.into(),
        }
    }
}

/// `.at(ctx)?` turns a rusqlite result into a store result. There is
/// deliberately no `From<rusqlite::Error>`: every error gets its file name.
pub(crate) trait At<T> {
    fn at(self, ctx: &Ctx) -> Result<T>;
}

impl<T> At<T> for rusqlite::Result<T> {
    fn at(self, ctx: &Ctx) -> Result<T> {
        self.map_err(|e| ctx.err(e))
    }
}
