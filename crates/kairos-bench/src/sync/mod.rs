//! `sync-bench`: the sync server and clients measured on real processes over
//! 127.0.0.1 (issue #10). Nothing here reaches inside `kairos-server` or
//! `kairos-sync`: the server is the real binary driven through its CLI and
//! `docs/sync-protocol.md`; the bench's own clients speak the protocol with
//! `kairos-proto`'s message types over tokio-tungstenite; the devices of
//! parts 2 and 4 are the real `kairos` binary.
//!
//! - [`server`]: starting `kairos-server`, `invite`, its memory and CPU;
//! - [`client`]: a device session (join, hello → caught_up, push);
//! - [`fleet`]: many accounts with two devices each, made once;
//! - [`ack`]: acknowledgement propagation under 1,000 dismisses/s;
//! - [`devices`]: the real `kairos` on two databases (end to end, catch-up);
//! - [`idle`]: 10,000 idle connections;
//! - [`ingest`]: server start time and durable op ingest (and Redis).

pub mod ack;
pub mod client;
pub mod devices;
pub mod fleet;
pub mod idle;
pub mod ingest;
pub mod scrape;
pub mod server;

use std::time::Duration;

/// One line of the summary table: what, target, result, met.
#[derive(Debug, Clone)]
pub struct Row {
    /// What was measured.
    pub what: String,
    /// The target (empty: none).
    pub target: String,
    /// The figure.
    pub result: String,
    /// `Some(true)`: met; `Some(false)`: not met; `None`: no target.
    pub met: Option<bool>,
}

impl Row {
    /// A row with a target.
    #[must_use]
    pub fn new(what: &str, target: &str, result: String, met: bool) -> Self {
        Self {
            what: what.to_owned(),
            target: target.to_owned(),
            result,
            met: Some(met),
        }
    }

    /// A row without a target (context for the others).
    #[must_use]
    pub fn info(what: &str, result: String) -> Self {
        Self {
            what: what.to_owned(),
            target: String::new(),
            result,
            met: None,
        }
    }
}

impl std::fmt::Display for Row {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let met = match self.met {
            Some(true) => "**met**",
            Some(false) => "**not met**",
            None => "",
        };
        write!(
            f,
            "| {} | {} | {} | {met} |",
            self.what, self.target, self.result
        )
    }
}

/// Percentiles of a set of durations (nearest rank).
#[derive(Debug, Clone, Copy)]
pub struct Summary {
    /// How many.
    pub n: usize,
    /// Median.
    pub p50: Duration,
    /// 99th percentile.
    pub p99: Duration,
    /// 99.9th percentile.
    pub p999: Duration,
    /// Largest.
    pub max: Duration,
    /// Smallest.
    pub min: Duration,
}

impl Summary {
    /// Of `v` (sorted here); `None` if empty.
    #[must_use]
    pub fn of(mut v: Vec<Duration>) -> Option<Self> {
        if v.is_empty() {
            return None;
        }
        v.sort_unstable();
        let at = |p: f64| {
            // Nearest rank: ceil(p × n) − 1, within the slice.
            #[allow(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                clippy::cast_precision_loss
            )]
            let i = ((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
            v[i]
        };
        Some(Self {
            n: v.len(),
            p50: at(0.50),
            p99: at(0.99),
            p999: at(0.999),
            max: v[v.len() - 1],
            min: v[0],
        })
    }
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "n {}, min {}, p50 {}, p99 {}, p99.9 {}, max {}",
            self.n,
            ms(self.min),
            ms(self.p50),
            ms(self.p99),
            ms(self.p999),
            ms(self.max)
        )
    }
}

/// A duration in milliseconds with two decimals (`12.34 ms`).
#[must_use]
pub fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// `1234567` → `1,234,567`.
#[must_use]
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The load average (1, 5, 15 min) from /proc/loadavg.
#[must_use]
pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether the kernel groups processes by session for scheduling
/// (`kernel.sched_autogroup_enabled`): when on, `nice` does not hold other
/// sessions' builds back from a benchmark, and loaded runs measure a
/// fraction of the CPU (docs/benchmarks.md, "The machine's scheduler").
#[must_use]
pub fn autogroup() -> &'static str {
    match std::fs::read_to_string("/proc/sys/kernel/sched_autogroup_enabled")
        .unwrap_or_default()
        .trim()
    {
        "1" => "on (nice does not hold other sessions back)",
        "0" => "off",
        _ => "unknown",
    }
}

/// Wall-clock milliseconds since the Unix epoch, for HLC stamps (the bench
/// is a device: its stamps come from its wall clock).
#[must_use]
pub fn wall_ms() -> u64 {
    u64::try_from(chrono::Utc::now().timestamp_millis()).unwrap_or(0)
}

/// Raises this process's open-file soft limit to its hard limit (children
/// inherit it, so the server started afterwards gets it too). Returns the
/// new (soft, hard).
///
/// # Errors
/// `getrlimit`/`setrlimit` failed.
pub fn raise_nofile() -> anyhow::Result<(u64, u64)> {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (_, hard) = getrlimit(Resource::RLIMIT_NOFILE)?;
    setrlimit(Resource::RLIMIT_NOFILE, hard, hard)?;
    Ok(getrlimit(Resource::RLIMIT_NOFILE)?)
}
