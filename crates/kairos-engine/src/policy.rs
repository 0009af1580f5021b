//! Decisions that are pure functions of time: how late is too late, what a
//! missed reminder becomes, when to retry. Kept apart so they are tested
//! exhaustively and read in one place.

use chrono::{DateTime, Duration, Utc};

/// What to do with a reminder whose trigger has passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lateness {
    /// Within the precision budget: fire normally.
    OnTime,
    /// Late but within `grace`: fire normally, recorded as late.
    Late,
    /// Fell due while the engine was not running (or the machine slept):
    /// fire, marked "missed", so the person sees it was not on time.
    Missed,
    /// So old that telling now would be noise: recorded as expired, with the
    /// reason, never fired.
    Expired,
}

/// The catch-up policy (DESIGN.md §3: recent ones are shown as missed and
/// collapsed when many, very old ones are recorded as expired).
#[derive(Debug, Clone, Copy)]
pub struct CatchUp {
    /// Up to this late a reminder counts as on time (the precision budget).
    pub on_time: Duration,
    /// Up to this late it is fired normally, as "late".
    pub grace: Duration,
    /// Up to this late it is fired as "missed"; older ones expire.
    pub missed_window: Duration,
    /// More missed reminders than this at once are delivered as one summary.
    pub collapse_over: usize,
}

impl Default for CatchUp {
    fn default() -> Self {
        Self {
            on_time: Duration::seconds(1),
            grace: Duration::minutes(2),
            missed_window: Duration::days(7),
            collapse_over: 5,
        }
    }
}

impl CatchUp {
    /// How late a reminder due at `trigger` is at `now`.
    #[must_use]
    pub fn classify(&self, trigger: DateTime<Utc>, now: DateTime<Utc>) -> Lateness {
        let late = now - trigger;
        if late <= self.on_time {
            Lateness::OnTime
        } else if late <= self.grace {
            Lateness::Late
        } else if late <= self.missed_window {
            Lateness::Missed
        } else {
            Lateness::Expired
        }
    }
}

/// How a delivery failure should be treated (DESIGN.md §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// Timeout, daemon busy: retry with backoff.
    Retryable,
    /// Bad payload, command not found: never retry.
    Permanent,
    /// Anything else: retried, fewer times.
    Unknown,
}

impl FailureKind {
    /// Most attempts (the first included) before the instance is abandoned.
    #[must_use]
    pub fn max_attempts(self) -> u32 {
        match self {
            FailureKind::Retryable => 8,
            FailureKind::Unknown => 3,
            FailureKind::Permanent => 1,
        }
    }
}

/// Delay before attempt `attempt + 1` (after `attempt` failures): 1 s, 2 s,
/// 4 s, … capped at 5 minutes. No jitter: one engine per database, so there is
/// no herd to spread.
#[must_use]
pub fn backoff(attempt: u32) -> Duration {
    let secs = 1i64 << attempt.min(9);
    Duration::seconds(secs.min(300))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap_or_default()
    }

    #[test]
    fn lateness_boundaries_are_inclusive() {
        let p = CatchUp::default();
        assert_eq!(
            p.classify(at(0), at(-5)),
            Lateness::OnTime,
            "early is on time"
        );
        assert_eq!(p.classify(at(0), at(1)), Lateness::OnTime);
        assert_eq!(p.classify(at(0), at(2)), Lateness::Late);
        assert_eq!(p.classify(at(0), at(120)), Lateness::Late);
        assert_eq!(p.classify(at(0), at(121)), Lateness::Missed);
        assert_eq!(p.classify(at(0), at(7 * 86_400)), Lateness::Missed);
        assert_eq!(p.classify(at(0), at(7 * 86_400 + 1)), Lateness::Expired);
    }

    #[test]
    fn backoff_doubles_then_caps() {
        let got: Vec<i64> = (0..12).map(|a| backoff(a).num_seconds()).collect();
        assert_eq!(got, [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300]);
        assert!(FailureKind::Retryable.max_attempts() > FailureKind::Unknown.max_attempts());
        assert_eq!(FailureKind::Permanent.max_attempts(), 1);
    }
}
