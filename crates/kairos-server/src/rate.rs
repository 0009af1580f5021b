//! Per-device rate limits: two token buckets, messages and ops, each
//! refilled continuously to its per-second budget.

use kairos_proto::{RATE_MESSAGES_PER_SEC, RATE_OPS_PER_SEC};
use tokio::time::Instant;

/// The budgets of one device.
#[derive(Debug)]
pub struct Bucket {
    messages: f64,
    ops: f64,
    /// Ops per second (and the most the bucket holds).
    ops_rate: f64,
    at: Instant,
}

impl Default for Bucket {
    fn default() -> Self {
        Self::new(RATE_OPS_PER_SEC)
    }
}

impl Bucket {
    /// Full budgets, with `ops_per_sec` ops a second.
    #[must_use]
    pub fn new(ops_per_sec: u32) -> Self {
        Self {
            messages: f64::from(RATE_MESSAGES_PER_SEC),
            ops: f64::from(ops_per_sec),
            ops_rate: f64::from(ops_per_sec),
            at: Instant::now(),
        }
    }

    /// The op budget per second.
    #[must_use]
    pub fn ops_per_sec(&self) -> u32 {
        // Set from a u32 in `new`.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let n = self.ops_rate as u32;
        n
    }

    fn refill(&mut self) {
        let now = Instant::now();
        let dt = now.duration_since(self.at).as_secs_f64();
        self.at = now;
        let max_m = f64::from(RATE_MESSAGES_PER_SEC);
        let max_o = self.ops_rate;
        self.messages = (self.messages + dt * max_m).min(max_m);
        self.ops = (self.ops + dt * max_o).min(max_o);
    }

    /// Takes one message (any frame, pings too) from the budget; `false` if
    /// the device is over its limit.
    pub fn take_message(&mut self) -> bool {
        self.refill();
        if self.messages < 1.0 {
            return false;
        }
        self.messages -= 1.0;
        true
    }

    /// Takes `n` ops from the budget; `false` if the device is over its limit.
    pub fn take_ops(&mut self, n: usize) -> bool {
        self.refill();
        // At most 500 ops per message: exact in an f64.
        let n = f64::from(u32::try_from(n).unwrap_or(u32::MAX));
        if self.ops < n {
            return false;
        }
        self.ops -= n;
        true
    }
}
