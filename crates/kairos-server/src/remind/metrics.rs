//! The reminder metrics of `/metrics` (Prometheus text), in the style of
//! `crate::metrics`: relaxed atomics and label families, printed by
//! [`Reminding::render`]. Counters are this instance's since it started;
//! the queue depth is as of the reminder task's last count (made at its
//! start, then after a scrape asked for it: at most a scrape interval
//! old), the circuits as of its last drain.

use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crate::metrics::{Counter, Family, buckets, counter, escape, gauge, header};

/// Upper bounds (seconds) of the due → sent buckets: 100 ms to 10 min.
const BOUNDS: [f64; 12] = [
    0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0,
];

/// How late a delivery is past its due time and still on time.
pub const ON_TIME: Duration = Duration::from_secs(1);

/// The outcomes of `kairos_remind_deliveries_total`.
pub const OUTCOMES: [&str; 7] = [
    "delivered",
    "retried",
    "abandoned",
    "cancelled_ack",
    "cancelled_withdrawn",
    "deferred_circuit",
    "deferred_rate",
];

/// Everything the reminder task reports.
#[derive(Debug, Default)]
pub struct Reminding {
    /// (channel, outcome) → count, the key `channel/outcome`.
    deliveries: Family,
    /// Delivered within [`ON_TIME`] of due (the trigger plus the fallback's delay).
    pub on_time: Counter,
    /// Delivered later than that.
    pub late: Counter,
    /// Second successes for one (instance, channel) the database refused.
    pub duplicates: Counter,
    /// Deliveries given up (after the retries, or a permanent failure).
    pub missed: Counter,
    /// Due → sent, seconds.
    latency: [AtomicU64; BOUNDS.len() + 1],
    latency_sum_ms: AtomicU64,
    /// Pending deliveries whose time has come / not yet.
    queue_due: AtomicU64,
    queue_future: AtomicU64,
    /// `/metrics` was read since the queue was last counted.
    scraped: AtomicBool,
    /// Destinations whose circuit is open or half-open.
    open: Mutex<Vec<String>>,
}

impl Reminding {
    /// Counts one `outcome` (one of [`OUTCOMES`]) on `channel`.
    pub fn outcome(&self, channel: &str, outcome: &str) {
        self.deliveries.add(&format!("{channel}/{outcome}"), 1);
    }

    /// The count of `outcome` on `channel`.
    #[must_use]
    pub fn count(&self, channel: &str, outcome: &str) -> u64 {
        let key = format!("{channel}/{outcome}");
        self.deliveries
            .snapshot()
            .into_iter()
            .find(|(k, _)| *k == key)
            .map_or(0, |(_, n)| n)
    }

    /// Records a first success `late_by` after it was due.
    pub fn sent(&self, late_by: Duration) {
        if late_by > ON_TIME {
            self.late.inc();
        } else {
            self.on_time.inc();
        }
        let secs = late_by.as_secs_f64();
        let i = BOUNDS
            .iter()
            .position(|b| secs <= *b)
            .unwrap_or(BOUNDS.len());
        self.latency[i].fetch_add(1, Ordering::Relaxed);
        let ms = u64::try_from(late_by.as_millis()).unwrap_or(u64::MAX);
        self.latency_sum_ms.fetch_add(ms, Ordering::Relaxed);
    }

    /// Whether `/metrics` was read since the last call (then false).
    pub fn take_scraped(&self) -> bool {
        self.scraped.swap(false, Ordering::Relaxed)
    }

    /// Sets the queue depth.
    pub fn depth(&self, due: u64, future: u64) {
        self.queue_due.store(due, Ordering::Relaxed);
        self.queue_future.store(future, Ordering::Relaxed);
    }

    /// Sets the destinations whose circuit is open.
    pub fn circuits(&self, open: Vec<String>) {
        *self
            .open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = open;
    }

    /// Appends the reminder metrics to `o`, and asks the reminder task to
    /// count the queue again for the next scrape.
    pub fn render(&self, o: &mut String) {
        self.scraped.store(true, Ordering::Relaxed);
        header(
            o,
            "kairos_remind_deliveries_total",
            "counter",
            "Fallback deliveries by channel and outcome (deferred: not an attempt).",
        );
        let snapshot = self.deliveries.snapshot();
        for channel in ["webhook", "email"] {
            for outcome in OUTCOMES {
                let key = format!("{channel}/{outcome}");
                let n = snapshot.iter().find(|(k, _)| *k == key).map_or(0, |e| e.1);
                let _ = writeln!(
                    o,
                    "kairos_remind_deliveries_total{{channel=\"{channel}\",outcome=\"{outcome}\"}} {n}"
                );
            }
        }
        counter(
            o,
            "kairos_remind_on_time_total",
            "Deliveries sent at most 1 s after due (trigger plus the fallback's delay).",
            self.on_time.get(),
        );
        counter(
            o,
            "kairos_remind_late_total",
            "Deliveries sent more than 1 s after due.",
            self.late.get(),
        );
        counter(
            o,
            "kairos_remind_duplicates_total",
            "Second successes for one (instance, channel), refused by the database.",
            self.duplicates.get(),
        );
        counter(
            o,
            "kairos_remind_missed_total",
            "Deliveries abandoned (retries exhausted or a permanent failure).",
            self.missed.get(),
        );
        let name = "kairos_remind_latency_seconds";
        header(o, name, "histogram", "Due to sent, first successes.");
        #[allow(clippy::cast_precision_loss)] // a sum of latencies, printed
        let sum = self.latency_sum_ms.load(Ordering::Relaxed) as f64 / 1e3;
        buckets(o, name, &BOUNDS, &self.latency, sum);
        header(
            o,
            "kairos_remind_queue_depth",
            "gauge",
            "Pending deliveries, due now or later (counted after the previous scrape).",
        );
        let _ = writeln!(
            o,
            "kairos_remind_queue_depth{{when=\"due\"}} {}\nkairos_remind_queue_depth{{when=\"future\"}} {}",
            self.queue_due.load(Ordering::Relaxed),
            self.queue_future.load(Ordering::Relaxed)
        );
        let open = self
            .open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        gauge(
            o,
            "kairos_remind_circuits_open",
            "Destinations whose circuit is open or half-open on this instance.",
            open.len() as u64,
        );
        header(
            o,
            "kairos_remind_circuit_open",
            "gauge",
            "1 for each destination whose circuit is open or half-open.",
        );
        for d in open {
            let _ = writeln!(
                o,
                "kairos_remind_circuit_open{{destination=\"{}\"}} 1",
                escape(&d)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn late_is_past_one_second_and_every_outcome_is_printed() {
        let m = Reminding::default();
        m.sent(Duration::from_millis(900));
        m.sent(Duration::from_millis(1500));
        m.outcome("webhook", "delivered");
        m.circuits(vec!["h:80".into()]);
        let mut o = String::new();
        m.render(&mut o);
        for line in [
            "kairos_remind_on_time_total 1\n",
            "kairos_remind_late_total 1\n",
            "kairos_remind_latency_seconds_bucket{le=\"1\"} 1\n",
            "kairos_remind_latency_seconds_bucket{le=\"2.5\"} 2\n",
            "kairos_remind_deliveries_total{channel=\"webhook\",outcome=\"delivered\"} 1\n",
            "kairos_remind_deliveries_total{channel=\"email\",outcome=\"retried\"} 0\n",
            "kairos_remind_circuits_open 1\n",
            "kairos_remind_circuit_open{destination=\"h:80\"} 1\n",
        ] {
            assert!(o.contains(line), "{line} in {o}");
        }
    }
}
