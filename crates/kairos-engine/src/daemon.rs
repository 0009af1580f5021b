//! The long-running loop, and the guarantee that only one runs per database.
//!
//! One engine per database: an exclusive OS lock on `<db>.lock`, held for the
//! daemon's life and released by the kernel when the process dies (even by
//! SIGKILL), so a restart after a crash never waits for a stale lease. A
//! second daemon is refused with the first one's PID (recorded as
//! [`holder`] says: in the lock file on Unix, beside it on Windows). (The guarded state
//! transitions make even two engines safe; the lock keeps it from happening.)

use std::fs::{File, OpenOptions};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::clock::Clock;
use crate::engine::Engine;
use crate::error::EngineError;
use crate::platform::{changed, holder};
use crate::wake::{Wake, WallTimer};

/// Held while the daemon runs; dropping it releases the database.
#[derive(Debug)]
pub struct InstanceLock {
    _file: File,
    path: PathBuf,
}

impl InstanceLock {
    /// Takes the lock for `db`, or says who holds it.
    ///
    /// # Errors
    /// Another daemon holds it (the message names its PID), or the lock file
    /// cannot be created.
    pub fn acquire(db: &Path) -> Result<Self, String> {
        let mut path = db.as_os_str().to_owned();
        path.push(".lock");
        let path = PathBuf::from(path);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        if file.try_lock().is_err() {
            let pid = holder::read(&mut file, &path)
                .map_or_else(|| "unknown".to_owned(), |pid| pid.to_string());
            return Err(format!(
                "another kairos daemon (pid {pid}) is already running on {}; stop it first",
                db.display()
            ));
        }
        holder::record(&mut file, &path);
        Ok(Self { _file: file, path })
    }

    /// The lock file.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Tells the daemon running on `db`, if any, that the database changed
/// ([`changed::notify`] to the lock holder: `SIGUSR1` on Unix, a named pipe
/// on Windows), so it re-plans (and pushes what sync has to push) at once
/// instead of at its next wake-up. Quietly does nothing when no daemon
/// runs. Returns whether one was told.
pub fn notify_running(db: &Path) -> bool {
    let mut path = db.as_os_str().to_owned();
    path.push(".lock");
    let path = PathBuf::from(path);
    let Ok(mut file) = File::open(&path) else {
        return false;
    };
    // Only a held lock means a live daemon (a stale file keeps an old PID).
    if file.try_lock_shared().is_ok() {
        return false;
    }
    holder::read(&mut file, &path).is_some_and(changed::notify)
}

/// Whether a daemon (or the desktop app) holds `db`'s lock now.
#[must_use]
pub fn is_running(db: &Path) -> bool {
    let mut path = db.as_os_str().to_owned();
    path.push(".lock");
    File::open(PathBuf::from(path)).is_ok_and(|f| f.try_lock_shared().is_err())
}

/// Runs the engine until `shutdown` completes: recover, then forever
/// materialise, fire what is due, and sleep on the wall clock until the next
/// trigger, a clock change, the horizon refresh, `changed` (another
/// process changed the database) or the end of a delivery attempt still
/// running ([`Engine::delivered`]). At `shutdown` the attempts running are
/// waited for (each bounded by its channel's timeout) and recorded.
///
/// # Errors
/// Store failures, the OS timer failing.
pub async fn run(
    engine: &mut Engine,
    clock: Arc<dyn Clock>,
    changed: Arc<tokio::sync::Notify>,
    shutdown: impl Future<Output = ()>,
) -> Result<(), EngineError> {
    run_observed(engine, clock, changed, shutdown, |_| {}).await
}

/// [`run`], calling `fired(n)` after each round that delivered `n > 0`
/// reminders, once their outcomes are committed (the desktop app refreshes
/// its reminder window then).
///
/// # Errors
/// As [`run`].
pub async fn run_observed(
    engine: &mut Engine,
    clock: Arc<dyn Clock>,
    changed: Arc<tokio::sync::Notify>,
    shutdown: impl Future<Output = ()>,
    mut fired: impl FnMut(usize),
) -> Result<(), EngineError> {
    // Rows written before schema 9 take the typed form, once; one that
    // does not read stays text (and is still read the old way).
    for r in crate::series::convert_legacy(engine.store())?.refused {
        eprintln!(
            "kairos: warning: event {:?} {:?} in calendar {:?} stays stored as text: {}",
            r.uid, r.recurrence_id, r.calendar, r.reason
        );
    }
    engine.recover()?;
    let mut timer = WallTimer::new().map_err(|e| EngineError::Timer(e.to_string()))?;
    tokio::pin!(shutdown);
    let mut changed_here = false;
    loop {
        engine.handle_notices();
        // Told the database changed: what was shown and since answered
        // (`kairos dismiss` in another process, an import) is taken back.
        if std::mem::take(&mut changed_here) {
            engine.reconcile_shown()?;
        }
        engine.materialise()?;
        let mut n = 0;
        loop {
            let k = engine.fire_due().await?;
            if k == 0 {
                break;
            }
            n += k;
        }
        if n > 0 {
            // One answered while it was being shown is taken back now.
            engine.reconcile_fresh()?;
            fired(n);
        }
        let next = engine.next_wake()?;
        // Idle for a while: a good moment to checkpoint the WAL, off the path
        // between a trigger and its delivery.
        if next - clock.now() > chrono::Duration::milliseconds(100) {
            engine.store().checkpoint()?;
        }
        // The timer runs on the system clock; our clock may be shifted.
        timer
            .arm(next - clock.offset())
            .map_err(|e| EngineError::Timer(e.to_string()))?;
        tokio::select! {
            woke = timer.wait() => {
                match woke.map_err(|e| EngineError::Timer(e.to_string()))? {
                    // After a clock change, everything is re-planned from the
                    // new "now": the loop does exactly that.
                    Wake::ClockChanged => clock.clock_changed(),
                    Wake::Deadline => {}
                }
            }
            // Attempts still running (a slow command, a notification
            // service that does not answer) are recorded as they end,
            // while the timer keeps the next reminders on time.
            k = engine.delivered(), if engine.in_flight() > 0 => {
                let k = k?;
                if k > 0 {
                    engine.reconcile_fresh()?;
                    fired(k);
                }
            }
            () = changed.notified() => changed_here = true,
            () = &mut shutdown => {
                // The attempts in hand are finished (each bounded by its
                // channel's timeout) and recorded before the engine stops.
                let k = engine.drain().await?;
                if k > 0 {
                    fired(k);
                }
                return Ok(());
            }
        }
    }
}
