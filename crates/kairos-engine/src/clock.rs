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
