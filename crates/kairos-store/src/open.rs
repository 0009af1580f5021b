//! Opening a database: look first, change nothing until the file is known to be
//! ours and of a version we understand, then switch to WAL and migrate.

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::ffi::ErrorCode;
use rusqlite::{Connection, OpenFlags, TransactionBehavior};
use rusqlite_migration::{M, Migrations};

use crate::error::{At, Ctx, Result, StoreError};
use crate::store::Store;

/// The migrations, in order. Append-only: add a new file at the END of this
/// list, never edit a shipped file or reorder the list (STYLE.md). The
/// position in the list, not the file number, is the schema version. (0002
/// and 0003 were written at the same time and shipped together, in order.)
const STEPS: &[M<'static>] = &[
    M::up(include_str!("../../../migrations/0001_init.sql")),
    M::up(include_str!(
        "../../../migrations/0002_calendar_settings.sql"
    )),
    // Rebuilds two tables (foreign keys are off while migrating): check them.
    M::up(include_str!(
        "../../../migrations/0003_lean_transitions.sql"
    ))
    .foreign_key_check(),
    M::up(include_str!("../../../migrations/0004_calendar_uid.sql")),
    M::up(include_str!("../../../migrations/0005_sync.sql")),
    M::up(include_str!("../../../migrations/0006_worktime.sql")),
    M::up(include_str!("../../../migrations/0007_subscriptions.sql")),
    M::up(include_str!("../../../migrations/0008_caldav.sql")),
    M::up(include_str!("../../../migrations/0009_typed_events.sql")),
    M::up(include_str!("../../../migrations/0010_caldav_ca.sql")),
];

/// The schema version this binary creates and understands (`PRAGMA user_version`).
pub const SCHEMA_VERSION: u32 = STEPS.len() as u32;

/// `PRAGMA application_id` of a Kairos database: "KAIR" in ASCII. Set by 0001.
pub const APPLICATION_ID: i32 = 0x4B41_4952;

/// How many times to re-check after a migration lost a race with another opener.
const MIGRATION_TRIES: usize = 3;

/// Pause between attempts to switch a fresh file to WAL (see `enable_wal`).
const WAL_RETRY_PAUSE: Duration = Duration::from_millis(5);

/// How to open a database.
#[derive(Debug, Clone)]
pub struct Options {
    /// How long a write waits for another connection's lock before giving
    /// [`crate::ErrorKind::Busy`]. Default 5 s.
    pub busy_timeout: Duration,
    /// Open with `SQLITE_OPEN_READ_ONLY`: reads work, every write gives
    /// [`crate::ErrorKind::ReadOnly`], the schema is not upgraded. Default false.
    pub read_only: bool,
    /// Cap the file at this many pages (`PRAGMA max_page_count`); writes beyond
    /// it give [`crate::ErrorKind::Full`]. A cap below the current size is
    /// raised to the current size by SQLite. Default: none.
    pub max_pages: Option<u32>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            busy_timeout: Duration::from_secs(5),
            read_only: false,
            max_pages: None,
        }
    }
}

impl Store {
    /// Opens (creating if needed) the database at `path` with default [`Options`].
    ///
    /// # Errors
    /// [`crate::ErrorKind::Corrupt`] for a file that is not a (Kairos) database,
    /// [`crate::ErrorKind::Schema`] for one written by a newer Kairos,
    /// [`crate::ErrorKind::ReadOnly`] for one that cannot be written, Busy if
    /// another process keeps it locked. In every failing case the file is left
    /// exactly as it was.
    pub fn open(path: impl AsRef<Path>) -> Result<Store> {
        Store::open_with(path, &Options::default())
    }

    /// Opens the database at `path` with `options`. See [`Store::open`].
    pub fn open_with(path: impl AsRef<Path>, options: &Options) -> Result<Store> {
        let path = path.as_ref();
        let ctx = Ctx {
            path: path.display().to_string(),
            busy_timeout: options.busy_timeout,
        };
        let mode = if options.read_only {
            OpenFlags::SQLITE_OPEN_READ_ONLY
        } else {
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE
        };
        let conn =
            Connection::open_with_flags(path, mode | OpenFlags::SQLITE_OPEN_NO_MUTEX).at(&ctx)?;
        prepare(conn, ctx, options)
    }

    /// A private in-memory database, for tests and examples: nothing is kept.
    pub fn open_in_memory() -> Result<Store> {
        let ctx = Ctx {
            path: ":memory:".to_owned(),
            busy_timeout: Duration::ZERO,
        };
        let conn = Connection::open_in_memory().at(&ctx)?;
        prepare(conn, ctx, &Options::default())
    }
}

/// Refuses, without writing anything, a file that is not ours or is too new.
fn inspect(conn: &Connection, ctx: &Ctx) -> Result<u32> {
    // One statement, so the three facts come from one snapshot even while
    // another process is creating the schema. This first read of the header
    // is where random bytes give SQLITE_NOTADB.
    let (version, app_id, objects): (i64, i32, i64) = conn
        .query_row(
            "SELECT (SELECT user_version FROM pragma_user_version),
                    (SELECT application_id FROM pragma_application_id),
                    (SELECT count(*) FROM sqlite_schema)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .at(ctx)?;
    let version = u32::try_from(version)
        .map_err(|_| ctx.corrupt(format!("negative schema version {version}")))?;
    if version == 0 {
        if objects > 0 {
            return Err(StoreError::NotKairos {
                path: ctx.path.clone(),
                detail: format!(
                    "it already holds {objects} tables, indexes or views, and no Kairos schema \
                     version"
                ),
            });
        }
    } else if app_id != APPLICATION_ID {
        return Err(StoreError::NotKairos {
            path: ctx.path.clone(),
            detail: format!("its application_id is {app_id:#x}, not Kairos's {APPLICATION_ID:#x}"),
        });
    }
    if version > SCHEMA_VERSION {
        return Err(StoreError::SchemaTooNew {
            path: ctx.path.clone(),
            found: version,
            known: SCHEMA_VERSION,
        });
    }
    Ok(version)
}

fn prepare(mut conn: Connection, ctx: Ctx, options: &Options) -> Result<Store> {
    conn.busy_timeout(options.busy_timeout).at(&ctx)?;
    // `rarray(?)`: a set of keys bound as one parameter (batch transitions).
    rusqlite::vtab::array::load_module(&conn).at(&ctx)?;
    let version = inspect(&conn, &ctx)?;

    if options.read_only {
        if version < SCHEMA_VERSION {
            return Err(StoreError::SchemaTooOld {
                path: ctx.path,
                found: version,
                known: SCHEMA_VERSION,
            });
        }
        // Belt and braces on top of SQLITE_OPEN_READ_ONLY.
        conn.pragma_update(None, "query_only", true).at(&ctx)?;
    } else {
        // SQLite silently opens a write-protected file read-only; say so now,
        // not at the first reminder that cannot be recorded.
        if conn.is_readonly(rusqlite::MAIN_DB).at(&ctx)? {
            return Err(StoreError::ReadOnly {
                path: ctx.path,
                detail: "the file is write-protected".to_owned(),
            });
        }
        // From here on we write: the file is known to be ours (or empty).
        enable_wal(&conn, &ctx, options.busy_timeout)?;
        // FULL: a commit is on disk before it returns, even across power loss.
        // A 'delivered' lost to a crash would mean showing the reminder twice;
        // the write rate is a few rows per reminder, so the fsync is cheap.
        conn.pragma_update(None, "synchronous", "FULL").at(&ctx)?;
        // Every transaction takes the write lock up front, so the busy
        // timeout applies instead of failing on a stale read snapshot.
        conn.set_transaction_behavior(TransactionBehavior::Immediate);
        // Foreign keys off while migrating (SQLite's procedure for rebuilding
        // a table; steps that rebuild one check them with
        // `M::foreign_key_check()`). Explicitly: the bundled SQLite is built
        // with SQLITE_DEFAULT_FOREIGN_KEYS=1, and with them on, dropping the
        // old table of a rebuild would cascade into the new one's rows.
        conn.pragma_update(None, "foreign_keys", false).at(&ctx)?;
        migrate(&mut conn, &ctx)?;
        // Scratch space of `Tx::record_delivered`, private to this
        // connection and never on the disk.
        conn.execute_batch(
            "PRAGMA temp_store = MEMORY;
             CREATE TEMP TABLE IF NOT EXISTS kairos_settle (
                 key TEXT NOT NULL, channel TEXT NOT NULL, latency_ms INTEGER,
                 at INTEGER NOT NULL, from_state TEXT NOT NULL, to_state TEXT NOT NULL,
                 reason TEXT NOT NULL);",
        )
        .at(&ctx)?;
    }

    // Only after migrating: a later migration that rebuilds a table (SQLite's
    // way to alter one) must run with foreign keys off, and check them with
    // `M::foreign_key_check()` instead.
    conn.pragma_update(None, "foreign_keys", true).at(&ctx)?;
    if let Some(pages) = options.max_pages {
        conn.pragma_update(None, "max_page_count", pages).at(&ctx)?;
    }
    Ok(Store::from_parts(conn, ctx))
}

/// Switches the file to WAL. Changing the journal mode needs an exclusive
/// lock, and SQLite answers SQLITE_BUSY at once, without its busy handler,
/// when another connection is in the middle of opening the same fresh file;
/// so retry here, for at most the busy timeout. (A monotonic timer, not the
/// wall clock: no time from it is stored.) A file already in WAL mode
/// returns at the first try.
fn enable_wal(conn: &Connection, ctx: &Ctx, timeout: Duration) -> Result<()> {
    let started = Instant::now();
    loop {
        match conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0)) {
            Ok(mode) if mode == "wal" || mode == "memory" => return Ok(()),
            Ok(mode) => {
                return Err(StoreError::Unsupported {
                    path: ctx.path.clone(),
                    detail: format!("could not switch to WAL journal mode (it stayed {mode:?})"),
                });
            }
            Err(e)
                if e.sqlite_error_code() == Some(ErrorCode::DatabaseBusy)
                    && started.elapsed() < timeout =>
            {
                std::thread::sleep(WAL_RETRY_PAUSE);
            }
            Err(e) => return Err(ctx.err(e)),
        }
    }
}

/// Applies pending migrations. Two processes opening a fresh file at once
/// both try; the loser's transaction fails and rolls back, and it finds the
/// schema already in place when it looks again.
fn migrate(conn: &mut Connection, ctx: &Ctx) -> Result<()> {
    let migrations = Migrations::from_slice(STEPS);
    let mut last = None;
    for _ in 0..MIGRATION_TRIES {
        match migrations.to_latest(conn) {
            Ok(()) => return Ok(()),
            Err(e) => {
                let version = inspect(conn, ctx)?;
                if version == SCHEMA_VERSION {
                    return Ok(());
                }
                last = Some(e);
            }
        }
    }
    match last {
        Some(e) => Err(ctx.migration_err(e)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_valid() {
        assert!(Migrations::from_slice(STEPS).validate().is_ok());
    }
}
