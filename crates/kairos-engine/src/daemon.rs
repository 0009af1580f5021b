//! The long-running loop, and the guarantee that only one runs per database.
//!
//! One engine per database: an exclusive OS lock on `<db>.lock`, held for the
//! daemon's life and released by the kernel when the process dies (even by
//! SIGKILL), so a restart after a crash never waits for a stale lease. A
//! second daemon is refused with the first one's PID. (The guarded state
//! transitions make even two engines safe; the lock keeps it from happening.)

use std::fs::{File, OpenOptions};
use std::future::Future;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::clock::Clock;
use crate::engine::{Engine, EngineError};
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
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            return Err(format!(
                "another kairos daemon (pid {}) is already running on {}; stop it first",
                holder.trim(),
                db.display()
            ));
        }
        let _ = file.set_len(0);
        let _ = file.rewind();
        let _ = write!(file, "{}", std::process::id());
        let _ = file.flush();
        Ok(Self { _file: file, path })
    }

    /// The lock file.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Runs the engine until `shutdown` completes: recover, then forever
/// materialise, fire what is due, and sleep on the wall clock until the next
/// trigger (or a clock change, or the horizon refresh).
///
/// # Errors
/// Store failures, the OS timer failing.
pub async fn run(
    engine: &mut Engine,
    clock: Arc<dyn Clock>,
    shutdown: impl Future<Output = ()>,
) -> Result<(), EngineError> {
    engine.recover()?;
    let mut timer = WallTimer::new().map_err(|e| EngineError::Timer(e.to_string()))?;
    tokio::pin!(shutdown);
    loop {
        engine.materialise()?;
        while engine.fire_due().await? > 0 {}
        let next = engine.next_wake()?;
        // The timer runs on the system clock; our clock may be shifted.
        timer
            .arm(next - clock.offset())
            .map_err(|e| EngineError::Timer(e.to_string()))?;
        tokio::select! {
            woke = timer.wait() => {
                match woke.map_err(|e| EngineError::Timer(e.to_string()))? {
                    // After a clock change, everything is re-planned from the
                    // new "now": the loop does exactly that.
                    Wake::Deadline | Wake::ClockChanged | Wake::Recheck => {}
                }
            }
            () = &mut shutdown => return Ok(()),
        }
    }
}
