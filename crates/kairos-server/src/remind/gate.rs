//! What may be sent now: a circuit breaker per destination and a rate
//! limit per account, both in this instance's memory (pure: `now` is an
//! argument, milliseconds).
//!
//! The breaker: after `failures` consecutive retryable failures to one
//! destination (a webhook URL's host and port, or the SMTP relay), the
//! destination is *open* for `cooloff`; deliveries to it are deferred (not
//! attempts, not lost) until then. Then it is *half-open*: one delivery
//! goes as a probe while the others wait a second at a time; a probe that
//! gets an answer (delivered, or a permanent refusal: the destination is
//! up) closes it, a retryable failure opens it for another `cooloff`.
//!
//! The rate limit: a token bucket per account holding `per_minute`
//! deliveries, refilled at `per_minute` a minute; a delivery with no token
//! reserves the next free one (the bucket goes into debt) and is deferred
//! to when it arrives, so a backlog is deferred once each, spread over the
//! minutes it needs.
//!
//! Per instance: with M instances on one PostgreSQL each keeps its own
//! breakers (each learns a destination is down on its own) and its own
//! buckets, so an account gets at most M × `per_minute` a minute.

use std::collections::HashMap;
use std::time::Duration;

/// The limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Consecutive retryable failures that open a destination's circuit.
    pub failures: u32,
    /// How long an open circuit stays open before a probe.
    pub cooloff: Duration,
    /// Deliveries per account and minute (0: no limit).
    pub per_minute: u32,
}

impl Default for Limits {
    /// 5 failures, 30 s open, 60 deliveries a minute per account.
    fn default() -> Self {
        Self {
            failures: 5,
            cooloff: Duration::from_secs(30),
            per_minute: 60,
        }
    }
}

/// How long deliveries wait while a half-open destination's probe runs.
pub const PROBE_WAIT_MS: i64 = 1_000;

/// A probe with no answer recorded after this long (its task ended
/// without one) no longer holds the others back: the next delivery
/// probes. Above the channels' timeouts (10 s webhook, 20 s SMTP).
pub const PROBE_STALE_MS: i64 = 60_000;

/// Buckets kept before the full ones are dropped (memory bound).
const MAX_BUCKETS: usize = 10_000;

/// The answer for one delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admit {
    /// Send it.
    Go,
    /// Send it: it is the half-open destination's probe.
    Probe,
    /// The destination's circuit is open until this time (ms).
    CircuitOpen(i64),
    /// The account is over its rate; the next token comes at this time (ms).
    RateLimited(i64),
}

#[derive(Debug, Clone, Copy)]
enum Circuit {
    Closed {
        failures: u32,
    },
    Open {
        until: i64,
    },
    /// A probe went at `since`.
    Probing {
        since: i64,
    },
}

#[derive(Debug, Clone)]
struct Bucket {
    /// Below 0: tokens owed to deferred deliveries.
    tokens: f64,
    at: i64,
    /// Deliveries deferred with a token reserved, and their time.
    reserved: HashMap<String, i64>,
}

/// The breakers and buckets of one instance.
#[derive(Debug, Default)]
pub struct Gate {
    circuits: HashMap<String, Circuit>,
    buckets: HashMap<String, Bucket>,
}

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

impl Gate {
    /// Whether the delivery `delivery` (its id) of `account` to
    /// `destination` may go at `now`; a `Go` or `Probe` takes one of the
    /// account's tokens (or the one reserved for it).
    pub fn admit(
        &mut self,
        limits: &Limits,
        account: &str,
        delivery: &str,
        destination: &str,
        now: i64,
    ) -> Admit {
        let circuit = self
            .circuits
            .get(destination)
            .copied()
            .unwrap_or(Circuit::Closed { failures: 0 });
        let probe = match circuit {
            Circuit::Open { until } if now < until => return Admit::CircuitOpen(until),
            Circuit::Probing { since } if now < since + PROBE_STALE_MS => {
                return Admit::CircuitOpen(now + PROBE_WAIT_MS);
            }
            Circuit::Open { .. } | Circuit::Probing { .. } => true,
            Circuit::Closed { .. } => false,
        };
        if let Some(at) = self.take(limits, account, delivery, now) {
            return Admit::RateLimited(at);
        }
        if probe {
            self.circuits
                .insert(destination.to_owned(), Circuit::Probing { since: now });
            Admit::Probe
        } else {
            Admit::Go
        }
    }

    /// The rate limit: `None` if `delivery` may go (a token taken, or the
    /// one reserved for it when it was deferred), else when its reserved
    /// token comes. Excess deliveries each reserve the next free token
    /// (the bucket goes into debt), so a backlog is spread over its slots
    /// once instead of deferred again at every token.
    fn take(&mut self, limits: &Limits, account: &str, delivery: &str, now: i64) -> Option<i64> {
        if limits.per_minute == 0 {
            return None;
        }
        let per_ms = f64::from(limits.per_minute) / 60_000.0;
        let cap = f64::from(limits.per_minute);
        #[allow(clippy::cast_precision_loss)] // ms since the last refill
        let refill = |b: &Bucket| b.tokens + (now - b.at).max(0) as f64 * per_ms;
        if self.buckets.len() >= MAX_BUCKETS {
            // A bucket refilled to the brim is the same as none.
            self.buckets
                .retain(|_, b| refill(b) < cap || !b.reserved.is_empty());
        }
        let b = self
            .buckets
            .entry(account.to_owned())
            .or_insert_with(|| Bucket {
                tokens: cap,
                at: now,
                reserved: HashMap::new(),
            });
        b.tokens = refill(b).min(cap);
        b.at = b.at.max(now);
        if b.reserved.remove(delivery).is_some() {
            return None;
        }
        if b.tokens >= 0.0 && !b.reserved.is_empty() {
            // Out of debt: what is still reserved was cancelled meanwhile.
            b.reserved.clear();
        }
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            return None;
        }
        #[allow(clippy::cast_possible_truncation)] // debt / rate: bounded by the backlog
        let wait = ((1.0 - b.tokens) / per_ms).ceil() as i64;
        b.tokens -= 1.0;
        let at = now + wait.max(1);
        b.reserved.insert(delivery.to_owned(), at);
        Some(at)
    }

    /// Records the answer of a delivery to `destination`: `retryable` for
    /// a failure worth retrying (the destination did not answer properly).
    pub fn record(&mut self, limits: &Limits, destination: &str, retryable: bool, now: i64) {
        let circuit = self
            .circuits
            .get(destination)
            .copied()
            .unwrap_or(Circuit::Closed { failures: 0 });
        let next = match (circuit, retryable) {
            (_, false) => Circuit::Closed { failures: 0 },
            (Circuit::Probing { .. }, true) => Circuit::Open {
                until: now + ms(limits.cooloff),
            },
            // A send that started before the circuit opened: it changes nothing.
            (Circuit::Open { until }, true) => Circuit::Open { until },
            (Circuit::Closed { failures }, true) if failures + 1 >= limits.failures.max(1) => {
                Circuit::Open {
                    until: now + ms(limits.cooloff),
                }
            }
            (Circuit::Closed { failures }, true) => Circuit::Closed {
                failures: failures + 1,
            },
        };
        if matches!(next, Circuit::Closed { failures: 0 }) {
            self.circuits.remove(destination);
        } else {
            self.circuits.insert(destination.to_owned(), next);
        }
    }

    /// The destinations whose circuit is open or half-open, sorted.
    #[must_use]
    pub fn open(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .circuits
            .iter()
            .filter(|(_, c)| !matches!(c, Circuit::Closed { .. }))
            .map(|(d, _)| d.clone())
            .collect();
        out.sort();
        out
    }
}

/// The destination of a delivery: a webhook URL's host and port, or the
/// SMTP relay (one per server).
#[must_use]
pub fn destination(channel: &str, target: &str) -> String {
    match channel {
        "webhook" => match reqwest::Url::parse(target) {
            Ok(u) => format!(
                "{}:{}",
                u.host_str().unwrap_or_default(),
                u.port_or_known_default().unwrap_or_default()
            ),
            Err(_) => target.to_owned(),
        },
        _ => "smtp".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const L: Limits = Limits {
        failures: 2,
        cooloff: Duration::from_secs(30),
        per_minute: 0,
    };

    #[test]
    fn a_circuit_opens_after_k_failures_then_lets_one_probe_through() {
        let mut g = Gate::default();
        assert_eq!(g.admit(&L, "a", "d", "h:80", 0), Admit::Go);
        g.record(&L, "h:80", true, 0);
        assert_eq!(g.admit(&L, "a", "d", "h:80", 1), Admit::Go);
        g.record(&L, "h:80", true, 1);
        assert_eq!(g.open(), ["h:80"]);
        assert_eq!(g.admit(&L, "a", "d", "h:80", 2), Admit::CircuitOpen(30_001));
        assert_eq!(g.admit(&L, "a", "d", "other:80", 2), Admit::Go);
        assert_eq!(g.admit(&L, "a", "d", "h:80", 30_001), Admit::Probe);
        assert_eq!(
            g.admit(&L, "a", "d", "h:80", 30_002),
            Admit::CircuitOpen(30_002 + PROBE_WAIT_MS)
        );
        g.record(&L, "h:80", true, 30_010);
        assert_eq!(
            g.admit(&L, "a", "d", "h:80", 30_011),
            Admit::CircuitOpen(60_010)
        );
        assert_eq!(g.admit(&L, "a", "d", "h:80", 60_010), Admit::Probe);
        // A probe that never reports stops holding the others back.
        assert_eq!(
            g.admit(&L, "a", "d", "h:80", 60_010 + PROBE_STALE_MS),
            Admit::Probe
        );
        g.record(&L, "h:80", false, 60_020 + PROBE_STALE_MS);
        assert!(g.open().is_empty());
        assert_eq!(g.admit(&L, "a", "d", "h:80", 60_021), Admit::Go);
    }

    #[test]
    fn an_account_over_its_rate_waits_for_the_next_token() {
        let l = Limits { per_minute: 2, ..L };
        let mut g = Gate::default();
        let mut go = |account: &str, d: &str, now: i64| g.admit(&l, account, d, "h:80", now);
        assert_eq!(go("a", "1", 0), Admit::Go);
        assert_eq!(go("a", "2", 0), Admit::Go);
        assert_eq!(go("a", "3", 0), Admit::RateLimited(30_000));
        assert_eq!(go("a", "4", 0), Admit::RateLimited(60_000), "the next slot");
        assert_eq!(go("b", "1", 0), Admit::Go, "per account");
        assert_eq!(go("a", "3", 30_000), Admit::Go, "its reserved token");
        assert_eq!(go("a", "5", 30_000), Admit::RateLimited(90_000));
        assert_eq!(go("a", "4", 60_000), Admit::Go);
        // "5" was cancelled meanwhile: once out of debt, nothing is owed.
        assert_eq!(go("a", "6", 200_000), Admit::Go);
        assert_eq!(go("a", "7", 200_000), Admit::Go);
        assert_eq!(go("a", "8", 200_000), Admit::RateLimited(230_000));
    }

    #[test]
    fn full_buckets_are_dropped_past_the_bound() {
        let l = Limits { per_minute: 2, ..L };
        let mut g = Gate::default();
        for i in 0..MAX_BUCKETS {
            assert_eq!(g.admit(&l, &format!("a{i}"), "d", "h:80", 0), Admit::Go);
        }
        assert_eq!(g.admit(&l, "late", "d", "h:80", 29_000), Admit::Go);
        assert_eq!(g.buckets.len(), MAX_BUCKETS + 1, "none full yet");
        assert_eq!(g.admit(&l, "later", "d", "h:80", 30_000), Admit::Go);
        assert_eq!(g.buckets.len(), 2, "refilled ones dropped");
    }

    #[test]
    fn destinations_are_hosts_and_the_relay() {
        assert_eq!(destination("webhook", "https://x.org/a?b"), "x.org:443");
        assert_eq!(
            destination("webhook", "http://127.0.0.1:81/h"),
            "127.0.0.1:81"
        );
        assert_eq!(destination("email", "a@b.c"), "smtp");
    }
}
