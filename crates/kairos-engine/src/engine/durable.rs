//! Group commit: outcomes are committed without waiting for the disk, and a
//! flusher thread makes them durable (one `fdatasync` of the WAL for however
//! many commits came in meanwhile), so the engine can deliver what falls due
//! next while the disk catches up.
//!
//! The bound that keeps this honest: the engine begins a group of deliveries
//! only when the reminders at risk — delivered but not yet durably recorded:
//! the group about to be delivered (at most [`super::Config::record_every`])
//! plus those committed since the last completed flush — stay within
//! [`AT_RISK`]. A power cut can therefore repeat at most `AT_RISK`
//! reminders; a crash of the process (SIGKILL) at most the group in hand
//! (`record_every`, all begun within `record_within`), because a commit is in
//! the OS's hands the moment it returns. In time: a group is committed at
//! most `record_within` after its first delivery began (plus the last
//! delivery's own duration), and the flusher starts its `fdatasync` as soon
//! as the commit is counted, so an outcome is on the disk a few milliseconds
//! after it was delivered unless the disk itself is slower than the burst.
//!
//! The flusher also checkpoints the WAL (from its own connection, never
//! blocking the engine's commits); the engine's connection does not.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use kairos_store::{Store, WalSync};

use super::EngineError;

/// Most reminders delivered but not yet durably recorded, at any moment:
/// what a power cut can repeat. Two groups of [`super::RECORD_EVERY`]: the
/// engine delivers the next group while the flusher syncs the last one, and
/// waits for the disk only when both are still unsynced.
pub const AT_RISK: usize = 512;

/// Checkpoint after this many flushes (SQLite's own default is every 1,000
/// log pages; a flush covers one or more commits of a few to ~100 pages).
const CHECKPOINT_EVERY: u32 = 16;

#[derive(Default)]
struct Marks {
    /// Reminders whose outcome has been committed (cumulative).
    committed: u64,
    /// Of those, how many are known to be on the disk.
    durable: u64,
    /// The flusher should finish what is committed and stop.
    stop: bool,
    /// The flusher failed; the engine must stop delivering.
    failed: Option<String>,
}

struct Shared {
    marks: Mutex<Marks>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Marks> {
        self.marks.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The flusher: not started until the first delivery (so an idle engine,
/// and its start-up, cost nothing), then running; or unavailable for a store
/// without a log (in memory), whose commits then stay `FULL`.
pub(super) struct Durability {
    started: bool,
    flusher: Option<Flusher>,
}

/// The state shared with the flusher thread, and the thread.
type Flusher = (Arc<Shared>, JoinHandle<()>);

/// Flushes what is committed, then stops the thread.
fn stop((shared, handle): Flusher) {
    shared.lock().stop = true;
    shared.changed.notify_all();
    let _ = handle.join();
}

impl Durability {
    /// Not started yet.
    pub(super) fn new() -> Self {
        Self {
            started: false,
            flusher: None,
        }
    }

    /// Starts the flusher for `store`, once, and turns the store's own
    /// automatic checkpoints off. If that is impossible (an in-memory store,
    /// no second connection, no thread), outcomes are committed `FULL` as
    /// before: slower, never less safe.
    pub(super) fn start(&mut self, store: &mut Store) {
        if !self.started {
            self.started = true;
            self.flusher = Self::try_start(store).ok().flatten();
        }
    }

    fn try_start(store: &mut Store) -> Result<Option<Flusher>, EngineError> {
        let Some(sync) = store.wal_sync()? else {
            return Ok(None);
        };
        let shared = Arc::new(Shared {
            marks: Mutex::new(Marks::default()),
            changed: Condvar::new(),
        });
        let mine = shared.clone();
        let handle = std::thread::Builder::new()
            .name("kairos-flush".into())
            .spawn(move || flush_loop(&mine, &sync))
            .map_err(|e| EngineError::Durability(format!("cannot start the flusher: {e}")))?;
        let flusher = (shared, handle);
        // Only once the flusher runs does it take over the checkpoints.
        if let Err(e) = store.set_auto_checkpoint(0) {
            stop(flusher);
            return Err(e.into());
        }
        Ok(Some(flusher))
    }

    /// Whether commits of outcomes may skip the fsync (a flusher runs).
    pub(super) fn deferred(&self) -> bool {
        self.flusher.is_some()
    }

    /// Waits until `n` more reminders can be delivered without more than
    /// [`AT_RISK`] being at risk. Returns at once unless the disk is behind.
    /// (`n` larger than `AT_RISK` waits for everything to be on the disk.)
    pub(super) fn room_for(&self, n: usize) -> Result<(), EngineError> {
        let Some((shared, _)) = &self.flusher else {
            return Ok(());
        };
        let allowed = AT_RISK.saturating_sub(n) as u64;
        let mut m = shared.lock();
        loop {
            if let Some(e) = &m.failed {
                return Err(EngineError::Durability(e.clone()));
            }
            if m.committed - m.durable <= allowed {
                return Ok(());
            }
            m = shared
                .changed
                .wait(m)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// `n` more outcomes were committed (unsynced): flush them.
    pub(super) fn committed(&self, n: usize) {
        if let Some((shared, _)) = &self.flusher {
            shared.lock().committed += n as u64;
            shared.changed.notify_all();
        }
    }
}

impl Drop for Durability {
    /// Flushes what is committed, then stops the flusher.
    fn drop(&mut self) {
        if let Some(f) = self.flusher.take() {
            stop(f);
        }
    }
}

fn flush_loop(shared: &Shared, sync: &WalSync) {
    let mut since_checkpoint = 0;
    loop {
        let target = {
            let mut m = shared.lock();
            while m.committed == m.durable && !m.stop {
                m = shared
                    .changed
                    .wait(m)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            if m.committed == m.durable {
                return; // stopping, and everything is on the disk
            }
            m.committed
        };
        // Every commit counted in `target` returned before this call.
        let flushed = sync.sync();
        let mut m = shared.lock();
        if let Err(e) = flushed {
            m.failed = Some(e.to_string());
            shared.changed.notify_all();
            return;
        }
        m.durable = target;
        shared.changed.notify_all();
        drop(m);
        since_checkpoint += 1;
        if since_checkpoint >= CHECKPOINT_EVERY {
            since_checkpoint = 0;
            // A failed checkpoint loses nothing: the log keeps the pages
            // and the next one tries again.
            let _ = sync.checkpoint();
        }
    }
}
