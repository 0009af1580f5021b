//! Time as an input. The engine never calls `Utc::now()` itself: it asks a
//! [`Clock`], so tests can move time and the daemon can run on a shifted
//! clock (a test-only offset) without touching the machine's.

use std::sync::Mutex;

use chrono::{DateTime, Duration, Utc};

/// Where "now" comes from.
pub trait Clock: Send + Sync {
    /// The current wall-clock instant.
    fn now(&self) -> DateTime<Utc>;

    /// How far this clock is ahead of the system's real-time clock. A wall
    /// timer armed on the system clock for `t` on this clock fires at
    /// `t - offset()` system time.
    fn offset(&self) -> Duration {
        Duration::zero()
    }

    /// The OS reported that the real-time clock was set (a `timerfd`
    /// cancelled by `TFD_TIMER_CANCEL_ON_SET`). The system clock needs nothing;
    /// a test clock may take the moment to pick up its new shift.
    fn clock_changed(&self) {}
}

/// The machine's real-time clock, optionally shifted by a fixed offset (the
/// daemon's `--clock-offset`, for tests that need "tomorrow" without waiting).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock {
    shift: Duration,
}

impl SystemClock {
    /// The real clock, shifted by `shift`.
    #[must_use]
    pub fn shifted(shift: Duration) -> Self {
        Self { shift }
    }
}

impl Clock for SystemClock {
    #[allow(clippy::disallowed_methods)] // the one place the real clock is read
    fn now(&self) -> DateTime<Utc> {
        Utc::now() + self.shift
    }

    fn offset(&self) -> Duration {
        self.shift
    }
}

/// Test only: the real clock shifted by a whole number of seconds read from
/// a file, re-read **only** when the OS reports that the real-time clock was
/// set ([`Clock::clock_changed`]). A test jumps a running daemon's clock by
/// rewriting the file and then setting the machine's clock to the value it
/// already has: the daemon learns of the jump exactly as it would of a real
/// one (through its cancelled `timerfd`), and the machine's time moves by
/// microseconds at most.
#[derive(Debug)]
pub struct OffsetFileClock {
    path: std::path::PathBuf,
    shift_secs: std::sync::atomic::AtomicI64,
}

impl OffsetFileClock {
    /// Reads the shift from `path`.
    ///
    /// # Errors
    /// The file cannot be read or does not hold a whole number of seconds.
    pub fn open(path: &std::path::Path) -> Result<Self, String> {
        let shift = Self::read(path)?;
        Ok(Self {
            path: path.to_owned(),
            shift_secs: shift.into(),
        })
    }

    fn read(path: &std::path::Path) -> Result<i64, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("clock offset file {}: {e}", path.display()))?;
        text.trim().parse().map_err(|_| {
            format!(
                "clock offset file {}: expected a whole number of seconds, found {:?}",
                path.display(),
                text.trim()
            )
        })
    }

    fn shift(&self) -> Duration {
        Duration::seconds(self.shift_secs.load(std::sync::atomic::Ordering::Relaxed))
    }
}

impl Clock for OffsetFileClock {
    #[allow(clippy::disallowed_methods)] // the real clock, shifted
    fn now(&self) -> DateTime<Utc> {
        Utc::now() + self.shift()
    }

    fn offset(&self) -> Duration {
        self.shift()
    }

    fn clock_changed(&self) {
        match Self::read(&self.path) {
            Ok(s) => self
                .shift_secs
                .store(s, std::sync::atomic::Ordering::Relaxed),
            // Keep the old shift: a half-written file must not move time.
            Err(e) => eprintln!("kairos: {e}; keeping the previous offset"),
        }
    }
}

/// A clock that moves only when told to (unit tests).
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<DateTime<Utc>>,
}

impl ManualClock {
    /// A clock standing at `start`.
    #[must_use]
    pub fn new(start: DateTime<Utc>) -> Self {
        Self {
            now: Mutex::new(start),
        }
    }

    /// Moves the clock to `t` (backwards too: clocks do jump back).
    pub fn set(&self, t: DateTime<Utc>) {
        *self
            .now
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = t;
    }

    /// Moves the clock by `d`.
    pub fn advance(&self, d: Duration) {
        let mut now = self
            .now
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *now += d;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self
            .now
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
