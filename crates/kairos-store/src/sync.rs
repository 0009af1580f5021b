//! Making commits durable off the writer's path (group commit).
//!
//! With `synchronous = FULL` a WAL commit writes its frames and then fsyncs
//! the log *while holding the write lock*, so whoever commits waits for the
//! disk, and so does the next writer. [`Store::write_unsynced`] commits the
//! same frames without the fsync; a [`WalSync`], used from another thread,
//! then makes everything committed so far durable with one `fdatasync` of the
//! `-wal` file, outside SQLite's locks. A commit is durable once a
//! [`WalSync::sync`] that *started* after it has returned: the same bytes on
//! the disk as with `FULL`, only later, and one flush covers many commits.
//!
//! Why this is safe: the WAL is append-only between checkpoints and each
//! frame is checksummed cumulatively; frames written after the flush started
//! are either complete and valid or ignored by recovery, exactly as after a
//! crash under `synchronous = NORMAL`. Checkpoints (which copy the log into
//! the database and fsync both) run from the `WalSync`'s own connection, so
//! the writer's connection can turn its automatic checkpoints off
//! ([`Store::set_auto_checkpoint`]) and never copy pages inside a commit.
//!
//! The `-wal` file is opened by name once the store has it open; SQLite
//! deletes it only when the last connection to the database closes, and the
//! `WalSync` holds one, so the file handle stays the log's.

use std::fs::File;

use rusqlite::{Connection, OpenFlags};

use crate::error::{At, Ctx, Result, StoreError};
use crate::store::Store;

/// Flushes a store's write-ahead log and checkpoints it, from any thread.
/// `Send`; one per writer is enough.
pub struct WalSync {
    wal: File,
    /// Its own connection, for checkpoints (and to keep the log alive).
    conn: Connection,
    ctx: Ctx,
}

impl std::fmt::Debug for WalSync {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WalSync")
            .field("path", &self.ctx.path)
            .finish_non_exhaustive()
    }
}

impl Store {
    /// A [`WalSync`] for this store's file, or `None` for an in-memory
    /// database (nothing to make durable).
    ///
    /// # Errors
    /// The second connection or the `-wal` file cannot be opened.
    pub fn wal_sync(&self) -> Result<Option<WalSync>> {
        let ctx = self.ctx().clone();
        let Some(path) = self.conn().path().filter(|p| !p.is_empty()) else {
            return Ok(None);
        };
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .at(&ctx)?;
        conn.busy_timeout(ctx.busy_timeout).at(&ctx)?;
        // A checkpoint under NORMAL still fsyncs the log before copying it
        // and the database after; it skips nothing that matters here.
        conn.pragma_update(None, "synchronous", "NORMAL").at(&ctx)?;
        // Reading the schema makes SQLite open (or create) the log now.
        conn.query_row("SELECT count(*) FROM sqlite_schema", [], |_| Ok(()))
            .at(&ctx)?;
        let wal = File::options()
            .write(true)
            .open(format!("{path}-wal"))
            .map_err(|source| StoreError::Sync {
                path: ctx.path.clone(),
                source,
            })?;
        Ok(Some(WalSync { wal, conn, ctx }))
    }

    /// Sets how many WAL pages make a commit on *this* connection run a
    /// checkpoint (SQLite's default: 1,000); 0 turns automatic checkpoints
    /// off, for a writer whose [`WalSync`] checkpoints instead.
    ///
    /// # Errors
    /// SQLite failures.
    pub fn set_auto_checkpoint(&mut self, pages: u32) -> Result<()> {
        let ctx = self.ctx().clone();
        self.conn()
            .query_row(&format!("PRAGMA wal_autocheckpoint = {pages}"), [], |_| {
                Ok(())
            })
            .at(&ctx)
    }
}

impl WalSync {
    /// Makes every commit that completed before this call durable
    /// (`fdatasync` of the log).
    ///
    /// # Errors
    /// [`StoreError::Sync`]: the disk refused; nothing can be promised about
    /// commits since the last successful call.
    pub fn sync(&self) -> Result<()> {
        self.wal.sync_data().map_err(|source| StoreError::Sync {
            path: self.ctx.path.clone(),
            source,
        })
    }

    /// Copies the log into the database as far as no reader needs it
    /// (`wal_checkpoint(PASSIVE)`: never waits for the writer, never blocks
    /// it), so the log stops growing.
    ///
    /// # Errors
    /// I/O failures.
    pub fn checkpoint(&self) -> Result<()> {
        self.conn
            .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
            .at(&self.ctx)
    }
}
