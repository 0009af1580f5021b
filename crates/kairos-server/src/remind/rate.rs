//! The rate limit per account (pure: `now` is an argument, milliseconds):
//! a token bucket holding `per_minute` deliveries, refilled at
//! `per_minute` a minute. A delivery with no token reserves the next free
//! one (the bucket goes into debt) and is deferred to when it arrives, so
//! a backlog is deferred once each, spread over the minutes it needs; when
//! it comes back it goes on its reserved token without taking another.
//!
//! The bucket is a row in the store shared by every instance (`shared.rs`):
//! a batch takes all the tokens its deliveries of an account need in one
//! atomic update (on PostgreSQL the refill below is computed in that
//! `INSERT … ON CONFLICT DO UPDATE`, from the row), and [`ration`] hands
//! them out in the claim's order. So M instances give an account
//! `per_minute` a minute between them, not M times it.

/// Tokens per millisecond.
#[must_use]
pub fn per_ms(per_minute: u32) -> f64 {
    f64::from(per_minute) / 60_000.0
}

/// A bucket holding `tokens` at `at`, refilled until `now` (at most full;
/// a clock behind `at` adds nothing).
#[must_use]
pub fn refill(tokens: f64, at: i64, now: i64, per_minute: u32) -> f64 {
    #[allow(clippy::cast_precision_loss)] // ms since the last refill
    let gained = (now - at).max(0) as f64 * per_ms(per_minute);
    (tokens + gained).min(f64::from(per_minute))
}

/// `n` deliveries taking a token each from a bucket that held `before`
/// (refilled to `now`), in order: `None` for one that goes now, else when
/// the token it reserved arrives.
#[must_use]
pub fn ration(before: f64, n: usize, now: i64, per_minute: u32) -> Vec<Option<i64>> {
    let rate = per_ms(per_minute);
    let mut tokens = before;
    (0..n)
        .map(|_| {
            let out = if tokens >= 1.0 {
                None
            } else {
                #[allow(clippy::cast_possible_truncation)] // debt / rate: bounded by the backlog
                let wait = ((1.0 - tokens) / rate).ceil() as i64;
                Some(now + wait.max(1))
            };
            tokens -= 1.0;
            out
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_account_over_its_rate_waits_for_the_next_token() {
        // Two a minute: a token every 30 s.
        assert_eq!(
            ration(2.0, 4, 0, 2),
            [None, None, Some(30_000), Some(60_000)]
        );
        // The bucket as left (2 - 4 = -2), 30 s later: the next one waits
        // behind the two reserved.
        let b = refill(-2.0, 0, 30_000, 2);
        assert!((b + 1.0).abs() < 1e-9, "{b}");
        assert_eq!(ration(b, 1, 30_000, 2), [Some(90_000)]);
    }

    #[test]
    fn a_bucket_refills_to_full_and_not_beyond_nor_backwards() {
        assert!((refill(0.0, 0, 600_000, 2) - 2.0).abs() < 1e-9);
        assert!((refill(1.0, 1_000, 0, 2) - 1.0).abs() < 1e-9);
        assert_eq!(ration(refill(0.0, 0, 600_000, 2), 2, 0, 2), [None, None]);
    }
}
