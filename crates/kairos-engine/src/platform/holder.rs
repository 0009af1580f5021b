//! The PID of the process holding a database's lock, recorded by the holder
//! and read by the others (to name it in "already running", and to tell it
//! that the database changed: [`super::changed`]).
//!
//! On Unix the lock is advisory, so the PID is written in the lock file
//! itself. On Windows `LockFileEx` locks are mandatory: while the holder
//! lives, no other process can read the locked file, so the PID goes to
//! `<lock file>.pid` beside it. Either way the PID is only trusted while the
//! lock is held (a file left by a dead holder keeps its old PID).

use std::fs::File;
use std::path::Path;

/// Records this process as the holder of the lock `file` at `path` (the
/// caller holds the lock). Best effort: a PID that cannot be written only
/// makes messages vaguer and change notices rely on the engine's recheck.
pub fn record(file: &mut File, path: &Path) {
    #[cfg(windows)]
    {
        let _ = file;
        let _ = std::fs::write(pid_path(path), std::process::id().to_string());
    }
    #[cfg(not(windows))]
    {
        use std::io::{Seek, Write};
        let _ = path;
        let _ = file.set_len(0);
        let _ = file.rewind();
        let _ = write!(file, "{}", std::process::id());
        let _ = file.flush();
    }
}

/// The PID recorded for the lock `file` at `path`, if any (the caller has
/// found the lock held by someone else).
#[must_use]
pub fn read(file: &mut File, path: &Path) -> Option<u32> {
    #[cfg(windows)]
    let text = {
        let _ = file;
        std::fs::read_to_string(pid_path(path)).ok()?
    };
    #[cfg(not(windows))]
    let text = {
        use std::io::Read;
        let _ = path;
        let mut text = String::new();
        file.read_to_string(&mut text).ok()?;
        text
    };
    text.trim().parse().ok()
}

#[cfg(windows)]
fn pid_path(lock: &Path) -> std::path::PathBuf {
    let mut p = lock.as_os_str().to_owned();
    p.push(".pid");
    p.into()
}
