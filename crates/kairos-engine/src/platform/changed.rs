//! "Another process changed the database": how `kairos import|snooze|
//! dismiss|…` wake the host holding the database's lock, so it re-plans (and
//! pushes what sync has to push) at once instead of at its next wake-up.
//!
//! - Unix: `SIGUSR1` to the holder's PID ([`super::holder`]). The host
//!   installs its listener before it takes the lock, because the lock file
//!   is what tells others whom to signal and `SIGUSR1`'s default action
//!   would kill a host still starting.
//! - Windows: a named pipe, `\\.\pipe\kairos-changed-<pid>`, created by the
//!   host before it takes the lock (same reason); a notice is one client
//!   connection. Safe code on both sides (tokio's pipe server, a plain file
//!   open as the client), unlike a named event, which needs `unsafe` FFI.
//! - Elsewhere: no notice; the host picks the change up at its next wake-up.
//!
//! A notice is a hint, never the only path: the engine re-reads the database
//! at every wake-up, and sync re-checks its outbox on a timer.

use std::io;

/// Tells the process `pid` (the lock holder) that the database changed.
/// Returns whether it was told.
#[must_use]
pub fn notify(pid: u32) -> bool {
    imp::notify(pid)
}

/// The host's end: yields once per notice received.
pub struct Listener(imp::Listener);

impl Listener {
    /// Starts listening for this process. Call it inside a tokio runtime,
    /// before taking the database's lock.
    ///
    /// # Errors
    /// The OS refused the signal handler or the pipe.
    pub fn new() -> io::Result<Self> {
        imp::Listener::new().map(Self)
    }

    /// The next notice; `None` when no more can come (the listener failed:
    /// the host goes on without notices).
    pub async fn recv(&mut self) -> Option<()> {
        self.0.recv().await
    }
}

#[cfg(unix)]
mod imp {
    use std::io;

    use tokio::signal::unix::{Signal, SignalKind, signal};

    pub fn notify(pid: u32) -> bool {
        use nix::sys::signal::{Signal, kill};
        use nix::unistd::Pid;
        i32::try_from(pid).is_ok_and(|pid| kill(Pid::from_raw(pid), Signal::SIGUSR1).is_ok())
    }

    pub struct Listener(Signal);

    impl Listener {
        pub fn new() -> io::Result<Self> {
            signal(SignalKind::user_defined1()).map(Self)
        }

        pub async fn recv(&mut self) -> Option<()> {
            self.0.recv().await
        }
    }
}

#[cfg(windows)]
mod imp {
    use std::io;
    use std::time::Duration;

    use tokio::net::windows::named_pipe::{NamedPipeServer, ServerOptions};

    /// `ERROR_PIPE_BUSY`: every instance is taken (the host is between
    /// accepting one notice and opening the next instance).
    const PIPE_BUSY: i32 = 231;

    fn name(pid: u32) -> String {
        format!(r"\\.\pipe\kairos-changed-{pid}")
    }

    pub fn notify(pid: u32) -> bool {
        for _ in 0..10 {
            match std::fs::OpenOptions::new().write(true).open(name(pid)) {
                // Connecting is the notice; closing ends it.
                Ok(_) => return true,
                Err(e) if e.raw_os_error() == Some(PIPE_BUSY) => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(_) => return false,
            }
        }
        false
    }

    pub struct Listener {
        name: String,
        server: NamedPipeServer,
    }

    impl Listener {
        pub fn new() -> io::Result<Self> {
            let name = name(std::process::id());
            // The first instance: fails if some other process owns the name.
            let server = ServerOptions::new()
                .first_pipe_instance(true)
                .create(&name)?;
            Ok(Self { name, server })
        }

        pub async fn recv(&mut self) -> Option<()> {
            self.server.connect().await.ok()?;
            // A fresh instance for the next notice before this one is
            // dropped, so the name never disappears.
            let next = ServerOptions::new().create(&self.name).ok()?;
            drop(std::mem::replace(&mut self.server, next));
            Some(())
        }
    }
}

#[cfg(not(any(unix, windows)))]
mod imp {
    use std::io;

    pub fn notify(_pid: u32) -> bool {
        false
    }

    pub struct Listener;

    impl Listener {
        pub fn new() -> io::Result<Self> {
            Ok(Self)
        }

        pub async fn recv(&mut self) -> Option<()> {
            std::future::pending().await
        }
    }
}
