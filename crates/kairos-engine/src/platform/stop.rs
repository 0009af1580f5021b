//! A request to stop the process (`kairos daemon`): it finishes the batch
//! in hand, then exits cleanly.
//!
//! - Unix: `SIGTERM` or `SIGINT`.
//! - Windows: Ctrl-C, Ctrl-Break, the console window closed, or the system
//!   shutting down (Windows ends the process a few seconds after the last
//!   two whatever it does).
//! - Elsewhere: Ctrl-C, as tokio sees it.

use std::io;

/// Listens for a request to stop from the moment it is made.
pub struct Stop(imp::Stop);

impl Stop {
    /// Installs the handlers. Call it inside a tokio runtime, early: a
    /// request made while the host starts still counts.
    ///
    /// # Errors
    /// The OS refused a handler.
    pub fn new() -> io::Result<Self> {
        imp::Stop::new().map(Self)
    }

    /// Completes at the first request.
    pub async fn requested(&mut self) {
        self.0.requested().await;
    }
}

#[cfg(unix)]
mod imp {
    use std::io;

    use tokio::signal::unix::{Signal, SignalKind, signal};

    pub struct Stop {
        term: Signal,
        int: Signal,
    }

    impl Stop {
        pub fn new() -> io::Result<Self> {
            Ok(Self {
                term: signal(SignalKind::terminate())?,
                int: signal(SignalKind::interrupt())?,
            })
        }

        pub async fn requested(&mut self) {
            tokio::select! {
                _ = self.term.recv() => {}
                _ = self.int.recv() => {}
            }
        }
    }
}

#[cfg(windows)]
mod imp {
    use std::io;

    use tokio::signal::windows::{CtrlBreak, CtrlC, CtrlClose, CtrlShutdown};

    pub struct Stop {
        c: CtrlC,
        brk: CtrlBreak,
        close: CtrlClose,
        shutdown: CtrlShutdown,
    }

    impl Stop {
        pub fn new() -> io::Result<Self> {
            use tokio::signal::windows::{ctrl_break, ctrl_c, ctrl_close, ctrl_shutdown};
            Ok(Self {
                c: ctrl_c()?,
                brk: ctrl_break()?,
                close: ctrl_close()?,
                shutdown: ctrl_shutdown()?,
            })
        }

        pub async fn requested(&mut self) {
            tokio::select! {
                _ = self.c.recv() => {}
                _ = self.brk.recv() => {}
                _ = self.close.recv() => {}
                _ = self.shutdown.recv() => {}
            }
        }
    }
}

#[cfg(not(any(unix, windows)))]
mod imp {
    use std::io;

    pub struct Stop;

    impl Stop {
        pub fn new() -> io::Result<Self> {
            Ok(Self)
        }

        pub async fn requested(&mut self) {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
