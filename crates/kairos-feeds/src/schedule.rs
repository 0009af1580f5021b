//! When the next refresh is due: pure arithmetic on "now", the chosen
//! interval, the number of consecutive failures, the server's
//! `Retry-After` and a random number (the jitter), so it is tested without
//! waiting.

use chrono::{DateTime, Duration, Utc};

/// The shortest interval a subscription may ask for.
pub const MIN_EVERY: Duration = Duration::minutes(5);
/// The longest.
pub const MAX_EVERY: Duration = Duration::days(7);
/// The first retry after a failure.
pub const FIRST_RETRY: Duration = Duration::minutes(1);
/// A `Retry-After` further away than this is capped here.
pub const MAX_RETRY_AFTER: Duration = Duration::days(1);

/// `d` moved by up to ±10 % by `jitter` (uniform in [0, 1)), so that many
/// devices (or subscriptions) do not refresh in step.
fn jittered(d: Duration, jitter: f64) -> Duration {
    let ms = d.num_milliseconds() as f64;
    let shift = ms * 0.2 * (jitter.clamp(0.0, 1.0) - 0.5);
    Duration::milliseconds((ms + shift) as i64)
}

/// After a success: the interval, jittered.
#[must_use]
pub fn after_success(now: DateTime<Utc>, every: Duration, jitter: f64) -> DateTime<Utc> {
    now + jittered(every, jitter)
}

/// After the `failures`-th consecutive failure (1 = the first): 1 min,
/// 2, 4, … doubling up to the interval itself, jittered; never before the
/// server's `Retry-After` (capped at a day).
#[must_use]
pub fn after_failure(
    now: DateTime<Utc>,
    every: Duration,
    failures: u32,
    retry_after: Option<DateTime<Utc>>,
    jitter: f64,
) -> DateTime<Utc> {
    let doublings = failures.saturating_sub(1).min(20);
    let backoff = (FIRST_RETRY * (1 << doublings)).min(every.max(FIRST_RETRY));
    let planned = now + jittered(backoff, jitter);
    match retry_after {
        Some(at) => planned.max(at.min(now + MAX_RETRY_AFTER)),
        None => planned,
    }
}

/// A random number in [0, 1) for the jitter (0.5, no jitter, if the OS
/// has no randomness to give).
#[must_use]
pub fn random_jitter() -> f64 {
    let mut b = [0u8; 4];
    if getrandom::fill(&mut b).is_err() {
        return 0.5;
    }
    f64::from(u32::from_le_bytes(b)) / (f64::from(u32::MAX) + 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn t0() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 1, 9, 0, 0)
            .single()
            .unwrap_or_default()
    }

    #[test]
    fn success_waits_the_interval_within_ten_percent() {
        let h = Duration::hours(1);
        assert_eq!(after_success(t0(), h, 0.5), t0() + h);
        assert_eq!(after_success(t0(), h, 0.0), t0() + Duration::minutes(54));
        assert!(after_success(t0(), h, 0.999_999) <= t0() + Duration::minutes(66));
    }

    #[test]
    fn failures_back_off_exponentially_up_to_the_interval() {
        let h = Duration::hours(1);
        let at = |n| after_failure(t0(), h, n, None, 0.5) - t0();
        assert_eq!(at(1), Duration::minutes(1));
        assert_eq!(at(2), Duration::minutes(2));
        assert_eq!(at(3), Duration::minutes(4));
        assert_eq!(at(7), Duration::minutes(60));
        assert_eq!(at(40), Duration::minutes(60));
    }

    #[test]
    fn retry_after_is_honoured_and_capped() {
        let h = Duration::hours(1);
        let later = t0() + Duration::minutes(30);
        assert_eq!(after_failure(t0(), h, 1, Some(later), 0.5), later);
        // Sooner than the backoff: the backoff stands.
        let soon = t0() + Duration::seconds(5);
        assert_eq!(
            after_failure(t0(), h, 1, Some(soon), 0.5),
            t0() + Duration::minutes(1)
        );
        let far = t0() + Duration::days(30);
        assert_eq!(
            after_failure(t0(), h, 1, Some(far), 0.5),
            t0() + MAX_RETRY_AFTER
        );
    }

    #[test]
    fn jitter_is_in_range() {
        for _ in 0..100 {
            let j = random_jitter();
            assert!((0.0..1.0).contains(&j), "{j}");
        }
    }
}
