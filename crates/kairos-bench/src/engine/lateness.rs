//! Part 1: how late reminders fire. `n` reminders with triggers drawn
//! uniformly (seeded, millisecond resolution) from a window of `span` seconds
//! that opens a moment after the database is ready:
//!
//! - **Kairos**: the real `kairos_engine::daemon::run` loop (its `timerfd`
//!   wall timer, the default `Config`) over a real SQLite file, delivering to
//!   the [`NullSink`](super::NullSink); lateness = the real clock when the
//!   engine calls `deliver` − the trigger.
//! - **1 s scanner**: every second, `Store::due(now, all)` (`SELECT … WHERE
//!   state = 'pending' AND trigger_at <= now ORDER BY trigger_at`), each row
//!   timestamped as it is handed to the null sink, then all marked
//!   `delivered` in one transaction. Same schema, same instances, a fresh file.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration as StdDuration, Instant};

use anyhow::{Result, bail};
use chrono::{DateTime, Duration, Utc};
use kairos_engine::clock::SystemClock;
use kairos_store::State;

use super::{EngineThread, Percentiles, Rng, Tally, now, populate, whole_ms};

/// How long after the database is ready the window opens, at least.
const LEAD: StdDuration = StdDuration::from_millis(1500);

/// What one run measured.
#[derive(Debug, Clone)]
pub struct Report {
    /// Who fired (`Kairos daemon::run`, `1 s scanner`).
    pub who: &'static str,
    /// Reminders scheduled.
    pub n: usize,
    /// Deliveries received (all of them, repeats included).
    pub delivered: usize,
    /// Distinct keys among them.
    pub distinct: usize,
    /// Fire time − trigger.
    pub lateness: Percentiles,
    /// Reminders delivered before their trigger (must be 0).
    pub early: usize,
    /// Time to insert the instances (not part of the lateness).
    pub insert: StdDuration,
    /// Counters after the run (engine) or wake-ups (scanner), in words.
    pub note: String,
}

/// The triggers: `n` instants uniform in `[start, start + span)`, whole ms.
fn triggers(n: usize, start: DateTime<Utc>, span: StdDuration, seed: u64) -> Vec<DateTime<Utc>> {
    let span_ms = u64::try_from(span.as_millis()).unwrap_or(u64::MAX);
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| {
            let off = i64::try_from(rng.below(span_ms)).unwrap_or(0);
            start + Duration::milliseconds(off)
        })
        .collect()
}

/// Inserts the run's instances into a fresh `path`; the window opens `LEAD`
/// after the inserts are done (the inserts are timed first on the same
/// sizes, so the window is known before anything is written).
fn prepare(
    path: &Path,
    n: usize,
    span: StdDuration,
    seed: u64,
    estimate: StdDuration,
) -> Result<(kairos_store::Store, Vec<DateTime<Utc>>, StdDuration)> {
    let lead = Duration::from_std(LEAD + estimate * 2)?;
    let start = whole_ms(now()) + lead;
    let ts = triggers(n, start, span, seed);
    let (store, insert) = populate(path, ts.iter().copied())?;
    if now() >= start {
        bail!(
            "inserting {n} instances took {insert:?}, past the start of the window; \
             the machine is too busy for this measurement"
        );
    }
    Ok((store, ts, insert))
}

/// Times inserting `n` instances into a scratch file (so the real runs can
/// pick a window that opens after their inserts).
///
/// # Errors
/// Store failures.
pub fn insert_estimate(dir: &Path, n: usize) -> Result<StdDuration> {
    let path = dir.join("lateness-estimate.db");
    let far = whole_ms(now()) + Duration::days(1);
    let (store, took) = populate(&path, std::iter::repeat_n(far, n))?;
    drop(store);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(dir.join(format!("lateness-estimate.db{suffix}")));
    }
    Ok(took)
}

fn lateness_of(fired: &[(DateTime<Utc>, DateTime<Utc>)]) -> (Percentiles, usize) {
    let mut early = 0;
    let samples = fired
        .iter()
        .map(|(trigger, at)| {
            let us = (*at - *trigger).num_microseconds().unwrap_or(i64::MAX);
            if us < 0 {
                early += 1;
            }
            us
        })
        .collect();
    (Percentiles::of(samples), early)
}

/// Kairos: `daemon::run` over the database until every reminder arrived
/// (or the window plus 10 s passed).
///
/// # Errors
/// Store or engine failures.
pub fn kairos(
    dir: &Path,
    n: usize,
    span: StdDuration,
    seed: u64,
    estimate: StdDuration,
) -> Result<Report> {
    let path = dir.join("lateness-kairos.db");
    let (store, ts, insert) = prepare(&path, n, span, seed, estimate)?;
    let last = ts.iter().max().copied().unwrap_or_else(now);
    let tally = Tally::new(n);
    drop(store);
    let engine = EngineThread::start(&path, Arc::new(SystemClock::default()), tally.clone())?;
    let wait = (last - now()).to_std().unwrap_or_default() + StdDuration::from_secs(10);
    tally.wait(Instant::now() + wait);
    let stats = engine.stop()?;
    let fired = tally.take();
    let distinct = fired.iter().map(|f| &f.key).collect::<HashSet<_>>().len();
    let pairs: Vec<_> = fired
        .iter()
        .filter_map(|f| {
            let t = DateTime::parse_from_rfc3339(&f.trigger).ok()?;
            Some((t.with_timezone(&Utc), f.at))
        })
        .collect();
    let (lateness, early) = lateness_of(&pairs);
    let counters = kairos_store::Store::open(&path)?.counters()?;
    Ok(Report {
        who: "Kairos daemon::run",
        n,
        delivered: fired.len(),
        distinct,
        lateness,
        early,
        insert,
        note: format!(
            "engine stats: {} on time, {} late, {} missed; store: {} delivered, {} pending",
            stats.on_time,
            stats.late,
            stats.missed,
            counters.get(&State::Delivered).copied().unwrap_or(0),
            counters.get(&State::Pending).copied().unwrap_or(0),
        ),
    })
}

/// The baseline: a loop that scans the same kind of database every second.
///
/// # Errors
/// Store failures.
pub fn scanner(
    dir: &Path,
    n: usize,
    span: StdDuration,
    seed: u64,
    estimate: StdDuration,
) -> Result<Report> {
    let path = dir.join("lateness-scanner.db");
    let (mut store, ts, insert) = prepare(&path, n, span, seed, estimate)?;
    let last = ts.iter().max().copied().unwrap_or_else(now);
    let give_up = last + Duration::seconds(10);
    let mut fired: Vec<(String, DateTime<Utc>, DateTime<Utc>)> = Vec::with_capacity(n);
    let mut scans = 0;
    let t0 = Instant::now();
    // Ticks at t0, t0 + 1 s, …: the phase against the triggers is arbitrary,
    // as it is for any scanner.
    while fired.len() < n && now() < give_up {
        let tick = t0 + StdDuration::from_secs(scans);
        std::thread::sleep(tick.saturating_duration_since(Instant::now()));
        scans += 1;
        let at = now();
        let due = store.due(at, usize::MAX)?;
        for inst in &due {
            fired.push((inst.key.clone(), inst.trigger_at, now()));
        }
        store.write(|tx| -> Result<(), kairos_store::StoreError> {
            for inst in &due {
                tx.transition(
                    &inst.key,
                    &[State::Pending],
                    State::Delivered,
                    "delivered by the 1 s scanner",
                    at,
                )?;
            }
            Ok(())
        })?;
    }
    let distinct = fired.iter().map(|f| &f.0).collect::<HashSet<_>>().len();
    let pairs: Vec<_> = fired.iter().map(|f| (f.1, f.2)).collect();
    let (lateness, early) = lateness_of(&pairs);
    Ok(Report {
        who: "1 s polling scanner",
        n,
        delivered: fired.len(),
        distinct,
        lateness,
        early,
        insert,
        note: format!("{scans} scans"),
    })
}
