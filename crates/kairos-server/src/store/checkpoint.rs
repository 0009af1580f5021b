//! WAL checkpoints on a thread of their own, so the writer only commits.
//!
//! The writer's connection runs with `wal_autocheckpoint=0`: SQLite no
//! longer copies the WAL back into the database file inside the writer's
//! commit (it did every 1,000 pages, ≈ 8 % of the writer's time at full
//! ingest: docs/benchmarks.md). Instead the writer tells this thread after
//! each commit, and the thread runs a `PASSIVE` checkpoint on its own
//! connection (at most every [`EVERY`]), which copies what is committed
//! without taking the write lock or waiting for readers.
//!
//! A checkpoint running beside the writer rarely finds the whole WAL copied
//! at the moment the writer starts its next transaction, which is when
//! SQLite starts the WAL over from its beginning. So once the thread's
//! checkpoint finds [`START_OVER`] frames or more in the WAL, the writer,
//! after its next commit, runs a `PASSIVE` checkpoint itself: only the
//! frames committed since the thread's are left to copy, so it is short,
//! and the WAL starts over at the next transaction. Measured (10,000
//! single-op pushes a second): waiting for a 32 MiB WAL instead left the
//! writer 5–27 ms checkpoints, forty in ten seconds — the p99 of every
//! push. [`WAL_BOUND`] stays as the bound if the thread falls behind; and
//! `journal_size_limit` cuts the file back to it.
//!
//! Durability does not depend on any of this: a commit is durable once its
//! WAL frames are synced (`synchronous=FULL`), before the writer replies.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::Connection;

use super::{StoreError, schema};

/// The least time between two checkpoints of the thread: each copies the
/// pages written since the last one (a page written by many commits is
/// copied once), and syncs the database file. Short, so that each sync is
/// small: a commit's WAL sync waits behind the database file's on the
/// same disk, and so does the writer's finishing checkpoint (its share is
/// shorter too). Measured at 10,000 pushes a second (2,000 sessions):
/// every 100 ms, p99 21–27 ms; every 20 ms, 18 ms; every 5 ms, 9–10 ms;
/// every 2 ms, 6.7–7.4 ms (groups over 3 ms: 92–134 in 10 s against
/// 187–256; the writer's finishing checkpoints p50 1.0–1.4 ms against
/// 1.7–1.9 ms); every 1 ms, 8.1 ms for more CPU.
const EVERY: Duration = Duration::from_millis(2);

/// The WAL file's size past which the writer checkpoints itself whatever
/// the thread did (and the size `journal_size_limit` truncates it back to).
pub(crate) const WAL_BOUND: u64 = 32 << 20;

/// How soon the thread tries again when its checkpoint could not copy the
/// whole WAL (a reader still needed older pages, or another checkpoint
/// ran): otherwise the last commits before a quiet spell would wait in the
/// WAL for the next commit.
const RETRY: Duration = Duration::from_millis(50);

/// Frames (pages, 4 KiB) in the WAL from which the thread asks the writer
/// to finish its checkpoint, so that the WAL starts over (≈ 4 MiB, as
/// SQLite's own automatic checkpoint).
const START_OVER: i64 = 1000;

/// The writer's side: tells the thread about commits, and keeps the bound.
pub(crate) struct Checkpointer {
    wal: PathBuf,
    /// Set by the thread after a checkpoint of a WAL of `START_OVER`
    /// frames or more; taken by the writer.
    finish: Arc<AtomicBool>,
    tx: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Checkpointer {
    /// Turns off SQLite's automatic checkpoint on the writer's connection
    /// and starts the thread on a connection of its own.
    pub(crate) fn start(writer: &Connection, db: &Path) -> Result<Self, StoreError> {
        writer.pragma_update(None, "wal_autocheckpoint", 0)?;
        writer.pragma_update(None, "journal_size_limit", WAL_BOUND.cast_signed())?;
        let conn = schema::open(db)?;
        let (tx, rx) = mpsc::channel();
        let finish = Arc::new(AtomicBool::new(false));
        let asks = Arc::clone(&finish);
        let thread = std::thread::Builder::new()
            .name("store-ckpt".into())
            .spawn(move || run(&conn, &rx, &asks))
            .map_err(|source| StoreError::Io {
                path: "store-ckpt thread".into(),
                source,
            })?;
        let mut wal = db.as_os_str().to_owned();
        wal.push("-wal");
        Ok(Self {
            wal: wal.into(),
            finish,
            tx: Some(tx),
            thread: Some(thread),
        })
    }

    /// After a commit: wakes the thread, and checkpoints on `writer` itself
    /// when the thread asks (it copied a long WAL; what is left is short)
    /// or the WAL is past its bound (the thread fell behind).
    pub(crate) fn committed(&self, writer: &Connection) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(());
        }
        let asked = self.finish.swap(false, Ordering::Relaxed);
        let over = asked || std::fs::metadata(&self.wal).is_ok_and(|m| m.len() > WAL_BOUND);
        if over && let Err(e) = passive(writer) {
            tracing::warn!("WAL checkpoint on the writer failed: {e}");
        }
    }
}

impl Drop for Checkpointer {
    /// Lets the thread run its last checkpoint, then joins it.
    fn drop(&mut self) {
        self.tx.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// `PRAGMA wal_checkpoint(PASSIVE)`: copies what no reader still needs from
/// the WAL, without waiting on anyone. The frames in the WAL, and whether
/// all of them are copied now.
fn passive(conn: &Connection) -> rusqlite::Result<(i64, bool)> {
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
        let (busy, log, copied): (i64, i64, i64) = (r.get(0)?, r.get(1)?, r.get(2)?);
        Ok((log, busy == 0 && copied >= log))
    })
}

fn run(conn: &Connection, rx: &Receiver<()>, finish: &AtomicBool) {
    let mut last = Instant::now()
        .checked_sub(EVERY)
        .unwrap_or_else(Instant::now);
    // Whether the last checkpoint left frames in the WAL.
    let mut behind = false;
    // One checkpoint per wake-up, for every commit reported before it; and
    // again every RETRY while one left frames behind.
    loop {
        let woken = if behind {
            !matches!(rx.recv_timeout(RETRY), Err(RecvTimeoutError::Disconnected))
        } else {
            rx.recv().is_ok()
        };
        if !woken {
            break;
        }
        // Not sooner than EVERY after the last one (commits reported
        // meanwhile are covered by it). Asleep, not waiting on the
        // channel: woken by every commit (thousands a second), the thread
        // took CPU the writer waited for on 2 cores.
        if let Some(left) = EVERY.checked_sub(last.elapsed()) {
            std::thread::sleep(left);
        }
        let open = loop {
            match rx.try_recv() {
                Ok(()) => {}
                Err(TryRecvError::Empty) => break true,
                Err(TryRecvError::Disconnected) => break false,
            }
        };
        behind = match passive(conn) {
            Ok((frames, all)) => {
                if frames >= START_OVER {
                    finish.store(true, Ordering::Relaxed);
                }
                !all
            }
            Err(e) => {
                tracing::warn!("WAL checkpoint failed: {e}");
                true
            }
        };
        last = Instant::now();
        if !open {
            return;
        }
    }
    // The writer is gone: copy what its last commits left in the WAL.
    if let Err(e) = passive(conn) {
        tracing::warn!("WAL checkpoint failed: {e}");
    }
}
