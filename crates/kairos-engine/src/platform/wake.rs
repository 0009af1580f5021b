//! Sleeping until a *wall-clock* instant.
//!
//! tokio's timers run on the monotonic clock, which stops while the machine
//! is suspended: a naive `sleep_until` fires late by the suspend time. On Linux
//! [`WallTimer`] arms a `timerfd` on `CLOCK_REALTIME` with `TFD_TIMER_ABSTIME |
//! TFD_TIMER_CANCEL_ON_SET`: it fires when the real-time clock reaches the
//! deadline, whether that happens by waiting, by resuming from suspend, or by
//! the clock being set forward; and it is cancelled (reported as
//! [`Wake::ClockChanged`]) when the clock is set discontinuously either way,
//! so the caller can re-plan at once.
//!
//! Elsewhere (Windows, macOS) it is the plain fallback: a monotonic sleep of
//! at most [`RECHECK`] at a time, after which the wall clock is read again.
//! If the wall clock moved further or less far than the monotonic one across
//! that sleep (by more than [`JUMP`]), the clock was set or the machine was
//! suspended and resumed: reported as [`Wake::ClockChanged`]. So a reminder is
//! at most [`RECHECK`] late after a resume or a clock change, and never early.
//! (A Windows waitable timer on an absolute time would do better, but needs
//! `unsafe` FFI, which this workspace forbids; macOS has no real-time timer
//! that survives sleep either.)

use std::io;

use chrono::{DateTime, Utc};

/// Longest single wait where no real-time timer is available.
pub const RECHECK: std::time::Duration = std::time::Duration::from_secs(5);

/// How far the wall clock may drift from the monotonic one across one
/// fallback wait before it counts as set (or as a suspend and resume).
pub const JUMP: std::time::Duration = std::time::Duration::from_secs(1);

/// Why a wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// The real-time clock reached the deadline.
    Deadline,
    /// The real-time clock was set (forwards or backwards), or the machine
    /// resumed (fallback only): re-plan.
    ClockChanged,
}

/// A reusable wall-clock timer.
pub struct WallTimer {
    #[cfg(target_os = "linux")]
    fd: tokio::io::unix::AsyncFd<linux::Fd>,
    /// The clock was set while the previous deadline was armed, and the
    /// re-arm reported it (see [`Self::arm`]): the next wait says so.
    #[cfg(target_os = "linux")]
    changed: bool,
    #[cfg(not(target_os = "linux"))]
    deadline: DateTime<Utc>,
}

impl WallTimer {
    /// Creates the timer (a `timerfd` on Linux).
    ///
    /// # Errors
    /// The OS refused a timer, or no tokio reactor is running.
    pub fn new() -> io::Result<Self> {
        #[cfg(target_os = "linux")]
        {
            // `AsyncFd::new` is deprecated (RUSTSEC-2026-0386) because it accepts
            // any raw fd, owned or not; its replacement is `unsafe`, which this
            // workspace forbids. `Fd` owns its `TimerFd` and never changes or
            // closes it while registered, which is the invariant at stake.
            #[allow(deprecated)]
            let fd = tokio::io::unix::AsyncFd::new(linux::Fd::new()?)?;
            Ok(Self { fd, changed: false })
        }
        #[cfg(not(target_os = "linux"))]
        {
            Ok(Self {
                deadline: DateTime::<Utc>::MAX_UTC,
            })
        }
    }

    /// Arms the timer for `deadline` (replacing any earlier deadline). From
    /// this moment on a clock change is noticed by the next [`Self::wait`].
    ///
    /// # Errors
    /// The OS timer failed.
    pub fn arm(&mut self, deadline: DateTime<Utc>) -> io::Result<()> {
        #[cfg(target_os = "linux")]
        {
            // Re-arming a timer that a clock change cancelled, before any
            // read, fails with ECANCELED *and arms it* (timerfd_create(2),
            // NOTES). That is news, not an error: the next wait reports it.
            if self.fd.get_ref().arm(deadline)? {
                self.changed = true;
            }
            Ok(())
        }
        #[cfg(not(target_os = "linux"))]
        {
            self.deadline = deadline;
            Ok(())
        }
    }

    /// Waits for the armed deadline, or a clock change.
    ///
    /// # Errors
    /// The OS timer failed.
    pub async fn wait(&mut self) -> io::Result<Wake> {
        #[cfg(target_os = "linux")]
        {
            if std::mem::take(&mut self.changed) {
                return Ok(Wake::ClockChanged);
            }
            loop {
                let mut guard = self.fd.readable().await?;
                match guard.get_inner().read() {
                    Ok(wake) => return Ok(wake),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => guard.clear_ready(),
                    Err(e) => return Err(e),
                }
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            fallback::wait(self.deadline).await
        }
    }

    /// [`Self::arm`] then [`Self::wait`].
    ///
    /// # Errors
    /// The OS timer failed.
    pub async fn sleep_until(&mut self, deadline: DateTime<Utc>) -> io::Result<Wake> {
        self.arm(deadline)?;
        self.wait().await
    }
}

/// The bounded recheck, for platforms without a real-time timer.
#[cfg(not(target_os = "linux"))]
mod fallback {
    use std::io;

    use chrono::{DateTime, Utc};

    use super::{JUMP, RECHECK, Wake};

    /// Sleeps in steps of at most [`RECHECK`] until the wall clock reaches
    /// `deadline`, or a step shows the clock set or the machine resumed.
    #[allow(clippy::disallowed_methods)] // the real clock the OS would use
    pub async fn wait(deadline: DateTime<Utc>) -> io::Result<Wake> {
        loop {
            let (wall, mono) = (Utc::now(), std::time::Instant::now());
            let Ok(left) = (deadline - wall).to_std() else {
                return Ok(Wake::Deadline);
            };
            if left.is_zero() {
                return Ok(Wake::Deadline);
            }
            tokio::time::sleep(left.min(RECHECK)).await;
            let walked = Utc::now() - wall;
            let slept = chrono::Duration::from_std(mono.elapsed()).unwrap_or(walked);
            let jump = chrono::Duration::from_std(JUMP).unwrap_or(walked);
            if (walked - slept).abs() > jump {
                return Ok(Wake::ClockChanged);
            }
        }
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::io;
    use std::os::fd::{AsFd, AsRawFd, RawFd};

    use chrono::{DateTime, Utc};
    use nix::errno::Errno;
    use nix::sys::time::TimeSpec;
    use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};

    use super::Wake;

    /// `TimerFd` as tokio's `AsyncFd` wants it.
    pub struct Fd(TimerFd);

    impl AsRawFd for Fd {
        fn as_raw_fd(&self) -> RawFd {
            self.0.as_fd().as_raw_fd()
        }
    }

    impl Fd {
        pub fn new() -> io::Result<Self> {
            let fd = TimerFd::new(
                ClockId::CLOCK_REALTIME,
                TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
            )?;
            Ok(Self(fd))
        }

        /// Arms the timer; `true` when the clock had been set while the
        /// previous deadline was armed (the timer is armed all the same).
        pub fn arm(&self, deadline: DateTime<Utc>) -> io::Result<bool> {
            // A zero expiry disarms a timerfd; anything at or before the epoch
            // is "now" for us, so arm it 1 ns after.
            let secs = deadline.timestamp().max(0);
            let nanos = if deadline.timestamp() < 0 {
                1
            } else {
                i64::from(deadline.timestamp_subsec_nanos())
            };
            let nanos = if secs == 0 && nanos == 0 { 1 } else { nanos };
            let spec = TimeSpec::new(secs, nanos);
            let flags =
                TimerSetTimeFlags::TFD_TIMER_ABSTIME | TimerSetTimeFlags::TFD_TIMER_CANCEL_ON_SET;
            match self.0.set(Expiration::OneShot(spec), flags) {
                Ok(()) => Ok(false),
                Err(Errno::ECANCELED) => Ok(true),
                Err(e) => Err(e.into()),
            }
        }

        /// One non-blocking read: expired, cancelled by a clock change, or
        /// `WouldBlock`.
        pub fn read(&self) -> io::Result<Wake> {
            let mut buf = [0u8; 8];
            match nix::unistd::read(self.0.as_fd(), &mut buf) {
                Ok(_) => Ok(Wake::Deadline),
                Err(Errno::ECANCELED) => Ok(Wake::ClockChanged),
                Err(Errno::EAGAIN) => Err(io::ErrorKind::WouldBlock.into()),
                Err(e) => Err(e.into()),
            }
        }
    }
}
