//! What may be sent now: a circuit breaker per destination and a rate
//! limit per account (pure: `now` is an argument, milliseconds). The state
//! lives in the store, shared by every instance (`shared.rs` reads and
//! writes it, a round trip per claimed batch); this module decides.
//!
//! The breaker: after `failures` consecutive retryable failures to one
//! destination (a webhook URL's host and port, or the SMTP relay), the
//! destination is *open* for `cooloff`; deliveries to it are deferred (not
//! attempts, not lost) until then. Then it is *half-open*: one instance
//! takes the probe (its hold ends after [`PROBE_STALE_MS`], so a dead
//! instance's probe does not block forever), one delivery goes as the
//! probe while the others wait a second at a time; a probe that gets an
//! answer (delivered, or a permanent refusal: the destination is up)
//! closes it, a retryable failure opens it for another `cooloff`.
//!
//! A batch works on [`Gate`], this instance's view of the breakers: each
//! destination of the batch is seeded from its stored row at the start
//! ([`Gate::seed`]), decided and recorded per delivery as the sends end (a
//! destination failing within a batch opens within it), and what changed
//! is written back at the end ([`Gate::changes`], [`merge`] with the row
//! as stored then: another instance's failures count too).
//!
//! The rate limit is `rate.rs`.

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

/// How long an instance holds a half-open destination's probe: after it
/// (the instance died, or its send ended without an answer recorded) the
/// next delivery, from any instance, probes. Above the channels' timeouts
/// (10 s webhook, 20 s SMTP).
pub const PROBE_STALE_MS: i64 = 60_000;

/// The answer for one delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admit {
    /// Send it.
    Go,
    /// Send it: it is the half-open destination's probe.
    Probe,
    /// The destination's circuit is open until this time (ms).
    CircuitOpen(i64),
}

/// A destination's breaker as stored (no row: the default, closed).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Breaker {
    /// Consecutive retryable failures while closed.
    pub failures: u32,
    /// Open until then (ms); 0: closed; past: half-open.
    pub open_until: i64,
    /// The instance holding the half-open destination's probe.
    pub probe_owner: Option<String>,
    /// Until when it holds it (ms).
    pub probe_until: i64,
}

/// What one batch learnt of a destination, to be merged into its row.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    /// An answer came (the destination is up): the count starts again.
    pub answered: bool,
    /// Retryable failures since the last answer (or since the seed).
    pub fails: u32,
    /// This batch opened the circuit, until then (ms).
    pub opened: Option<i64>,
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

/// This instance's view of the breakers: the last state seen or made of
/// each destination, and what the current batch changed.
#[derive(Debug, Default)]
pub struct Gate {
    circuits: HashMap<String, Circuit>,
    tally: HashMap<String, Tally>,
}

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

impl Gate {
    /// Starts a batch's view of `destination` from its stored row;
    /// `probe_ours`: this instance took its probe (it is half-open).
    pub fn seed(&mut self, destination: &str, b: &Breaker, probe_ours: bool, now: i64) {
        let c = if b.open_until == 0 {
            Circuit::Closed {
                failures: b.failures,
            }
        } else if now < b.open_until || probe_ours {
            // Ours: the first delivery's `admit` makes it the probe.
            Circuit::Open {
                until: b.open_until,
            }
        } else {
            // Another instance's probe is out.
            Circuit::Probing { since: now }
        };
        self.tally.remove(destination);
        if probe_ours {
            // Released at the end of the batch even if nothing was sent.
            self.tally.insert(destination.to_owned(), Tally::default());
        }
        if matches!(c, Circuit::Closed { failures: 0 }) {
            self.circuits.remove(destination);
        } else {
            self.circuits.insert(destination.to_owned(), c);
        }
    }

    /// Whether a delivery to `destination` may go at `now`.
    pub fn admit(&mut self, destination: &str, now: i64) -> Admit {
        let circuit = self
            .circuits
            .get(destination)
            .copied()
            .unwrap_or(Circuit::Closed { failures: 0 });
        match circuit {
            Circuit::Open { until } if now < until => Admit::CircuitOpen(until),
            Circuit::Probing { since } if now < since + PROBE_STALE_MS => {
                Admit::CircuitOpen(now + PROBE_WAIT_MS)
            }
            Circuit::Open { .. } | Circuit::Probing { .. } => {
                self.circuits
                    .insert(destination.to_owned(), Circuit::Probing { since: now });
                Admit::Probe
            }
            Circuit::Closed { .. } => Admit::Go,
        }
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
        let t = self.tally.entry(destination.to_owned()).or_default();
        match (circuit, next) {
            (_, Circuit::Closed { failures: 0 }) if !retryable => {
                *t = Tally {
                    answered: true,
                    ..Tally::default()
                };
            }
            (Circuit::Open { .. }, Circuit::Open { .. }) => {}
            (_, Circuit::Open { until }) => t.opened = Some(until),
            _ => t.fails += 1,
        }
        if matches!(next, Circuit::Closed { failures: 0 }) {
            self.circuits.remove(destination);
        } else {
            self.circuits.insert(destination.to_owned(), next);
        }
    }

    /// What the batch changed, by destination (and forgets it).
    pub fn changes(&mut self) -> Vec<(String, Tally)> {
        let mut out: Vec<_> = self.tally.drain().collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
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

/// A destination's row after `owner`'s batch learnt `t` at `now`: the row
/// as stored now (other instances' failures count), not as it was seeded.
/// A probe `owner` holds is released whatever came of it.
#[must_use]
pub fn merge(stored: &Breaker, t: &Tally, limits: &Limits, owner: &str, now: i64) -> Breaker {
    let mut b = stored.clone();
    let clear = |b: &mut Breaker| {
        b.probe_owner = None;
        b.probe_until = 0;
    };
    if let Some(until) = t.opened {
        b.open_until = b.open_until.max(until);
        b.failures = 0;
        clear(&mut b);
        return b;
    }
    if t.answered {
        b.failures = t.fails;
        b.open_until = 0;
        clear(&mut b);
    } else {
        b.failures = b.failures.saturating_add(t.fails);
        if b.probe_owner.as_deref() == Some(owner) {
            clear(&mut b);
        }
    }
    if b.open_until == 0 && b.failures >= limits.failures.max(1) {
        b.open_until = now + ms(limits.cooloff);
        b.failures = 0;
    }
    b
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
#[path = "gate_tests.rs"]
mod tests;
