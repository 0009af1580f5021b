//! The server's counters and histograms, and their Prometheus text
//! exposition (`GET /metrics`, format 0.0.4).
//!
//! Hand-written rather than `prometheus-client`: the whole need is a few
//! atomics and one function that prints them, and a crate would add a
//! registry, its own metric types and a dependency tree for that. Every
//! value is a relaxed atomic: a scrape may see one counter a moment ahead
//! of another, which Prometheus tolerates; nothing here takes a lock on a
//! session's path.
//!
//! Adding a metric (the reminder task's are in `remind::metrics`): a field in
//! [`Metrics`], its update where the thing happens (`ctx.metrics.x.inc()`),
//! and one line in [`Metrics::render`]. [`Family`] is a counter per label
//! value (a channel, an outcome) for label sets not known in advance.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A monotonic counter.
#[derive(Debug, Default)]
pub struct Counter(AtomicU64);

impl Counter {
    /// Adds one.
    pub fn inc(&self) {
        self.add(1);
    }

    /// Adds `n`.
    pub fn add(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }

    /// The current value.
    #[must_use]
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// A counter per label value (label values must be short, fixed words:
/// they are printed as they are, escaped).
#[derive(Debug, Default)]
pub struct Family(Mutex<BTreeMap<String, u64>>);

impl Family {
    /// Adds `n` to the counter of `label`.
    pub fn add(&self, label: &str, n: u64) {
        let mut m = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // The label is copied once, when first seen.
        match m.get_mut(label) {
            Some(v) => *v += n,
            None => {
                m.insert(label.to_owned(), n);
            }
        }
    }

    pub(crate) fn snapshot(&self) -> Vec<(String, u64)> {
        let m = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        m.iter().map(|(k, v)| (k.clone(), *v)).collect()
    }
}

/// Upper bounds (seconds) of the latency buckets: 100 µs to 10 s.
const BOUNDS: [f64; 14] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 10.0,
];

/// A latency histogram with fixed buckets ([`BOUNDS`], plus `+Inf`).
#[derive(Debug, Default)]
pub struct Histogram {
    /// Observations per bucket (not cumulative; summed when printed).
    buckets: [AtomicU64; BOUNDS.len() + 1],
    /// The sum of observations in nanoseconds.
    sum_ns: AtomicU64,
}

impl Histogram {
    /// Records one observation.
    pub fn observe(&self, d: Duration) {
        let secs = d.as_secs_f64();
        let i = BOUNDS
            .iter()
            .position(|b| secs <= *b)
            .unwrap_or(BOUNDS.len());
        self.buckets[i].fetch_add(1, Ordering::Relaxed);
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        self.sum_ns.fetch_add(ns, Ordering::Relaxed);
    }

    /// How many observations.
    #[must_use]
    pub fn count(&self) -> u64 {
        self.buckets.iter().map(|b| b.load(Ordering::Relaxed)).sum()
    }
}

/// Why ops (or a message) were refused.
#[derive(Debug, Clone, Copy)]
pub enum Rejected {
    /// Over the device's rate budget (the ops of the push).
    RateLimit,
    /// A push carried an op of another device (its ops).
    ForeignDevice,
    /// A message that does not decode (one per message).
    BadMessage,
    /// A frame over the protocol's limit (one per frame).
    TooBig,
}

impl Rejected {
    const ALL: [Self; 4] = [
        Self::RateLimit,
        Self::ForeignDevice,
        Self::BadMessage,
        Self::TooBig,
    ];

    fn label(self) -> &'static str {
        match self {
            Self::RateLimit => "rate_limit",
            Self::ForeignDevice => "foreign_device",
            Self::BadMessage => "bad_message",
            Self::TooBig => "too_big",
        }
    }
}

/// Everything `/metrics` reports, shared by every connection (`Ctx`).
#[derive(Debug, Default)]
pub struct Metrics {
    /// Sessions that got past the upgrade.
    pub sessions_opened: Counter,
    /// Sessions that ended, however.
    pub sessions_closed: Counter,
    /// New ops committed by this instance (duplicates not counted).
    pub ops_accepted: Counter,
    /// Refused ops, by [`Rejected`] (indexed by its position in `ALL`).
    ops_rejected: [Counter; 4],
    /// Ops sent while catching a device up (after `hello`, or after a lag).
    pub catch_up_ops: Counter,
    /// From the commit of ops to their frame written to another device's
    /// session on this instance.
    pub fan_out: Histogram,
    /// From a push handed to the store to its results (queue + commit).
    pub store_write: Histogram,
    /// Refused upgrades: bad token or pairing code, by path (`sync`, `join`).
    pub auth_failures: Family,
    /// Server-side reminders (`kairos_remind_*`).
    pub reminders: crate::remind::metrics::Reminding,
}

impl Metrics {
    /// Counts `n` refused ops (or messages) for `why`.
    pub fn reject(&self, why: Rejected, n: u64) {
        self.ops_rejected[why as usize].add(n);
    }

    /// `write` (a push's store future), its time recorded in
    /// `store_write` when it completes.
    pub(crate) fn time_write<T: Send>(
        self: &Arc<Self>,
        write: impl Future<Output = T> + Send + 'static,
    ) -> impl Future<Output = T> + Send + 'static {
        let (metrics, start) = (Arc::clone(self), Instant::now());
        async move {
            let out = write.await;
            metrics.store_write.observe(start.elapsed());
            out
        }
    }

    /// The exposition. `devices`: devices with an open session now (the
    /// hub's count, taken at the scrape); `retried`: the store's groups of
    /// pushes run again (`Store::retried_groups`).
    #[must_use]
    pub fn render(&self, devices: usize, retried: (u64, u64)) -> String {
        let mut o = String::with_capacity(4096);
        gauge(
            &mut o,
            "kairos_connected_devices",
            "Devices with an open session.",
            devices as u64,
        );
        counter(
            &mut o,
            "kairos_sessions_opened_total",
            "Sessions opened.",
            self.sessions_opened.get(),
        );
        counter(
            &mut o,
            "kairos_sessions_closed_total",
            "Sessions closed.",
            self.sessions_closed.get(),
        );
        counter(
            &mut o,
            "kairos_ops_accepted_total",
            "New ops committed by this instance.",
            self.ops_accepted.get(),
        );
        header(
            &mut o,
            "kairos_ops_rejected_total",
            "counter",
            "Ops refused (for an undecodable or oversized message: messages), by reason.",
        );
        for (r, c) in Rejected::ALL.iter().zip(&self.ops_rejected) {
            let _ = writeln!(
                o,
                "kairos_ops_rejected_total{{reason=\"{}\"}} {}",
                r.label(),
                c.get()
            );
        }
        counter(
            &mut o,
            "kairos_catch_up_ops_total",
            "Ops sent while catching devices up.",
            self.catch_up_ops.get(),
        );
        histogram(
            &mut o,
            "kairos_fan_out_seconds",
            "Commit of ops to their frame written to another session.",
            &self.fan_out,
        );
        histogram(
            &mut o,
            "kairos_store_write_seconds",
            "A push handed to the store to its results (queue and commit).",
            &self.store_write,
        );
        header(
            &mut o,
            "kairos_auth_failures_total",
            "counter",
            "Refused credentials, by path.",
        );
        for (path, n) in self.auth_failures.snapshot() {
            let _ = writeln!(
                o,
                "kairos_auth_failures_total{{path=\"{}\"}} {n}",
                escape(&path)
            );
        }
        header(
            &mut o,
            "kairos_store_group_retries_total",
            "counter",
            "Groups of pushes the store ran again: with the lookup of their ids (one repeated an id stored before), or job by job (the database refused a push).",
        );
        let _ = writeln!(
            o,
            "kairos_store_group_retries_total{{how=\"lookup\"}} {}\nkairos_store_group_retries_total{{how=\"job_by_job\"}} {}",
            retried.0, retried.1
        );
        self.reminders.render(&mut o);
        o
    }
}

pub(crate) fn header(o: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(o, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

pub(crate) fn counter(o: &mut String, name: &str, help: &str, v: u64) {
    header(o, name, "counter", help);
    let _ = writeln!(o, "{name} {v}");
}

pub(crate) fn gauge(o: &mut String, name: &str, help: &str, v: u64) {
    header(o, name, "gauge", help);
    let _ = writeln!(o, "{name} {v}");
}

fn histogram(o: &mut String, name: &str, help: &str, h: &Histogram) {
    header(o, name, "histogram", help);
    #[allow(clippy::cast_precision_loss)] // a sum of latencies, printed
    let sum = h.sum_ns.load(Ordering::Relaxed) as f64 / 1e9;
    buckets(o, name, &BOUNDS, &h.buckets, sum);
}

/// A histogram's lines after its header: the cumulative `_bucket` counts
/// (one per bound in `bounds`, then `+Inf`: `counts` has one more entry
/// than `bounds`), `_sum` (seconds) and `_count`.
pub(crate) fn buckets(o: &mut String, name: &str, bounds: &[f64], counts: &[AtomicU64], sum: f64) {
    let mut cumulative = 0;
    for (i, b) in counts.iter().enumerate() {
        cumulative += b.load(Ordering::Relaxed);
        match bounds.get(i) {
            Some(le) => {
                let _ = writeln!(o, "{name}_bucket{{le=\"{le}\"}} {cumulative}");
            }
            None => {
                let _ = writeln!(o, "{name}_bucket{{le=\"+Inf\"}} {cumulative}");
            }
        }
    }
    let _ = writeln!(o, "{name}_sum {sum}\n{name}_count {cumulative}");
}

/// A label value as the text format wants it.
pub(crate) fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_cumulative_and_count_every_observation() {
        let m = Metrics::default();
        m.fan_out.observe(Duration::from_micros(50));
        m.fan_out.observe(Duration::from_millis(3));
        m.fan_out.observe(Duration::from_secs(20));
        let text = m.render(2, (3, 1));
        assert!(
            text.contains("kairos_fan_out_seconds_bucket{le=\"0.0001\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("kairos_fan_out_seconds_bucket{le=\"0.005\"} 2\n"),
            "{text}"
        );
        assert!(
            text.contains("kairos_fan_out_seconds_bucket{le=\"10\"} 2\n"),
            "{text}"
        );
        assert!(
            text.contains("kairos_fan_out_seconds_bucket{le=\"+Inf\"} 3\n"),
            "{text}"
        );
        assert!(text.contains("kairos_fan_out_seconds_count 3\n"), "{text}");
        assert!(text.contains("kairos_connected_devices 2\n"), "{text}");
        assert!(
            text.contains("kairos_store_group_retries_total{how=\"lookup\"} 3\n")
                && text.contains("kairos_store_group_retries_total{how=\"job_by_job\"} 1\n"),
            "{text}"
        );
        assert_eq!(m.fan_out.count(), 3);
    }

    #[test]
    fn rejections_are_counted_under_their_reason() {
        let m = Metrics::default();
        m.reject(Rejected::ForeignDevice, 3);
        m.reject(Rejected::TooBig, 1);
        m.auth_failures.add("sync", 1);
        let text = m.render(0, (0, 0));
        assert!(
            text.contains("kairos_ops_rejected_total{reason=\"foreign_device\"} 3\n"),
            "{text}"
        );
        assert!(
            text.contains("kairos_ops_rejected_total{reason=\"too_big\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("kairos_ops_rejected_total{reason=\"rate_limit\"} 0\n"),
            "{text}"
        );
        assert!(
            text.contains("kairos_auth_failures_total{path=\"sync\"} 1\n"),
            "{text}"
        );
    }
}
