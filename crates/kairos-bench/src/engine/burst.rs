//! Part 2, Kairos side: `n` reminders all due at one instant, drained by the
//! real `daemon::run` loop to the null sink, durably: every recorded outcome
//! reaches the disk through an `fdatasync` of the WAL (the engine's flusher
//! thread, group commit: one flush covers the commits made meanwhile, and at
//! most `kairos_engine::engine::AT_RISK` reminders are delivered before their
//! record is on the disk). The drain ends when the records are committed;
//! the flush of the last ones follows within one `fdatasync`, and stopping
//! the engine waits for it.
//!
//! The trigger is 1 s in the past when the engine starts: the instances are
//! inserted with trigger `T` (the moment the insert began), and the engine's
//! clock is the system clock shifted by a constant so that it reads `T + 1 s`
//! as it starts (`SystemClock::shifted`, what `kairos --clock-offset` uses;
//! durations are untouched). The drain time runs from starting the engine
//! thread to the first `Store::counters()` snapshot, read on a second
//! connection, with 0 `pending` and 0 `firing`; counters are polled only after
//! the sink has seen all `n`, so polling does not slow the drain.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration as StdDuration, Instant};

use anyhow::Result;
use chrono::Duration;
use kairos_engine::clock::SystemClock;
use kairos_engine::engine::Stats;
use kairos_store::{State, Store};

use super::{EngineThread, Tally, now, populate, whole_ms};

/// What the drain measured.
#[derive(Debug, Clone)]
pub struct Report {
    /// Reminders in the burst.
    pub n: usize,
    /// Time to insert them (not part of the drain).
    pub insert: StdDuration,
    /// Engine start → counters show nothing pending or firing; `None` if the
    /// deadline came first.
    pub drain: Option<StdDuration>,
    /// Engine start → the sink received the last reminder.
    pub last_delivery: Option<StdDuration>,
    /// Deliveries the sink received.
    pub delivered: usize,
    /// Engine start → first delivery (recover + materialise + first claim).
    pub first_delivery: Option<StdDuration>,
    /// The engine's counters.
    pub stats: Stats,
    /// Store counters at the end, as `state=n` words.
    pub counters: String,
}

/// Drains the burst, giving up after `deadline`.
///
/// # Errors
/// Store or engine failures.
pub fn kairos(dir: &Path, n: usize, deadline: StdDuration) -> Result<Report> {
    let path = dir.join("burst-kairos.db");
    let trigger = whole_ms(now());
    let (store, insert) = populate(&path, std::iter::repeat_n(trigger, n))?;
    let observer = Store::open(&path)?;
    let tally = Tally::new(n);
    // Now the engine's clock reads `trigger + 1 s`.
    let shift = (trigger + Duration::seconds(1)) - now();
    let clock = Arc::new(SystemClock::shifted(shift));
    let engine_start = now();
    let t0 = Instant::now();
    drop(store);
    let engine = EngineThread::start(&path, clock, tally.clone())?;
    let until = t0 + deadline;
    let got = tally.wait(until);
    let mut drain = None;
    let mut counts = observer.counters()?;
    if got >= n {
        loop {
            let asked = t0.elapsed();
            counts = observer.counters()?;
            let busy = counts.get(&State::Pending).copied().unwrap_or(0)
                + counts.get(&State::Firing).copied().unwrap_or(0);
            if busy == 0 {
                drain = Some(asked);
                break;
            }
            if Instant::now() >= until {
                break;
            }
            std::thread::sleep(StdDuration::from_millis(1));
        }
    }
    let stats = engine.stop()?;
    let fired = tally.take();
    // Each `at` is the real clock; the engine start is too.
    let since_start = |t: chrono::DateTime<chrono::Utc>| (t - engine_start).to_std().ok();
    let first_delivery = fired.iter().map(|f| f.at).min().and_then(since_start);
    let last_delivery = if fired.len() >= n {
        fired.iter().map(|f| f.at).max().and_then(since_start)
    } else {
        None
    };
    let counters = counts
        .iter()
        .filter(|(_, v)| **v > 0)
        .map(|(s, v)| format!("{s}={v}"))
        .collect::<Vec<_>>()
        .join(" ");
    Ok(Report {
        n,
        insert,
        drain,
        last_delivery,
        delivered: fired.len(),
        first_delivery,
        stats,
        counters,
    })
}
