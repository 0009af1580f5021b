//! `engine-bench`: the reminder engine measured end to end (issue #3), through
//! the public APIs of `kairos-engine` and `kairos-store` and the real `kairos`
//! binary. Nothing here reaches inside the engine, so the bench keeps working
//! while the engine changes.
//!
//! - [`lateness`]: fire time − trigger for reminders spread over a few
//!   seconds, for `daemon::run` and for a 1-second polling scanner;
//! - [`burst`] and [`redis`]: draining a burst that is all due at once, durably
//!   through the engine, and through a Redis sorted set (with and without an
//!   fsync per write);
//! - [`daemon`]: `kairos daemon` over a million pending instances: file size,
//!   start to armed, RSS, wake-ups while idle;
//! - [`procs`]: child processes that cannot outlive the bench, `/proc` readers.
//!
//! Shared here: the instances every part inserts, the null sink that
//! timestamps deliveries, and percentiles.

pub mod burst;
pub mod daemon;
pub mod lateness;
pub mod parts;
pub mod procs;
pub mod redis;

use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Instant;

use anyhow::{Context, Result};
use chrono::{DateTime, Duration, Utc};
use kairos_engine::channel::{Channel, Delivery, Reminder};
use kairos_engine::clock::{Clock, SystemClock};
use kairos_engine::engine::{Config, Stats};
use kairos_engine::materialise::Payload;
use kairos_store::{CalendarId, NewInstance, Store};

/// The calendar every bench instance belongs to.
pub const CALENDAR: &str = "bench";

/// Schedule fingerprint written into every key and `rule_version` (a fixed
/// made-up value: no event is stored, the instances are inserted directly).
const FINGERPRINT: u32 = 0x5eed_0001;

/// Instances per `insert_instances` call (one transaction each): bounds the
/// memory of a million-instance insert.
const INSERT_CHUNK: usize = 20_000;

/// SplitMix64: a seeded, dependency-free generator (same seed, same triggers).
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed`.
    #[must_use]
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, n)` (`n > 0`; the modulo bias is below 2⁻⁴⁰ for the
    /// ranges used here).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// `t` truncated to the millisecond: the store keeps milliseconds, so a
/// trigger with a sub-millisecond part would look up to 1 ms early.
#[must_use]
pub fn whole_ms(t: DateTime<Utc>) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(t.timestamp_millis()).unwrap_or(t)
}

/// The real clock (the engine's own `SystemClock`, so the bench reads time
/// exactly as the engine does).
#[must_use]
pub fn now() -> DateTime<Utc> {
    SystemClock::default().now()
}

/// Instance `i` of the bench calendar, shaped like a materialised one: a
/// `-PT15M` alarm of an occurrence starting 15 minutes after `trigger`.
///
/// # Errors
/// The payload does not serialise (it always does).
pub fn instance(cal: CalendarId, i: usize, trigger: DateTime<Utc>) -> Result<NewInstance> {
    let start = trigger + Duration::minutes(15);
    let occurrence = start.format("%Y-%m-%dT%H:%M:%SZ").to_string();
    let uid = format!("b{i}");
    let payload = Payload {
        uid: uid.clone(),
        occurrence_start: start.to_rfc3339(),
        summary: None,
        location: None,
        calendar: CALENDAR.to_owned(),
    };
    Ok(NewInstance {
        key: format!("{CALENDAR}/{uid}/{occurrence}/#0@{FINGERPRINT:08x}"),
        calendar: cal,
        event_uid: uid,
        occurrence,
        alarm: "#0".to_owned(),
        repetition: 0,
        rule_version: FINGERPRINT,
        trigger_at: trigger,
        snooze_of: None,
        payload: serde_json::to_string(&payload)?,
    })
}

/// Creates the database at `path` (which must not exist) with the bench
/// calendar and one pending instance per trigger, inserted with
/// `Store::insert_instances` in chunks. Returns the open store and how long the
/// inserts took.
///
/// # Errors
/// Store failures.
pub fn populate(
    path: &Path,
    triggers: impl IntoIterator<Item = DateTime<Utc>>,
) -> Result<(Store, std::time::Duration)> {
    let mut store =
        Store::open(path).with_context(|| format!("cannot create {}", path.display()))?;
    let cal = store.ensure_calendar(CALENDAR, now())?;
    let t0 = Instant::now();
    let mut chunk = Vec::with_capacity(INSERT_CHUNK);
    for (i, t) in triggers.into_iter().enumerate() {
        chunk.push(instance(cal, i, t)?);
        if chunk.len() == INSERT_CHUNK {
            store.insert_instances(&chunk, now())?;
            chunk.clear();
        }
    }
    if !chunk.is_empty() {
        store.insert_instances(&chunk, now())?;
    }
    Ok((store, t0.elapsed()))
}

/// One delivery as the null sink saw it.
#[derive(Debug, Clone)]
pub struct Fired {
    /// Instance key.
    pub key: String,
    /// The reminder's trigger, as the engine sent it (RFC 3339, ms).
    pub trigger: String,
    /// The real clock when `deliver` was called.
    pub at: DateTime<Utc>,
}

/// What the null sink has received; shared between the engine thread (which
/// delivers) and the bench (which waits).
pub struct Tally {
    fired: Mutex<Vec<Fired>>,
    reached: Condvar,
    target: usize,
}

impl Tally {
    /// A tally that wakes its waiters once `target` deliveries arrived.
    #[must_use]
    pub fn new(target: usize) -> Arc<Self> {
        Arc::new(Self {
            fired: Mutex::new(Vec::with_capacity(target)),
            reached: Condvar::new(),
            target,
        })
    }

    /// Waits until `target` deliveries arrived or `deadline` passed; returns
    /// how many arrived.
    pub fn wait(&self, deadline: Instant) -> usize {
        let mut fired = self.fired.lock().unwrap_or_else(PoisonError::into_inner);
        while fired.len() < self.target {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            fired = self
                .reached
                .wait_timeout(fired, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        fired.len()
    }

    /// Everything received so far.
    pub fn take(&self) -> Vec<Fired> {
        std::mem::take(&mut *self.fired.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// A channel that tells no one: it timestamps each delivery with the real
/// clock, keeps it in a [`Tally`] and succeeds. What is measured is the
/// engine, not a notification daemon.
pub struct NullSink(pub Arc<Tally>);

impl Channel for NullSink {
    fn name(&self) -> &str {
        "bench-null"
    }

    fn deliver<'a>(&'a self, reminder: &'a Reminder) -> Delivery<'a> {
        // Timestamped when the engine hands it over, before the future runs.
        let at = now();
        let mut fired = self.0.fired.lock().unwrap_or_else(PoisonError::into_inner);
        fired.push(Fired {
            key: reminder.key.clone(),
            trigger: reminder.trigger.clone(),
            at,
        });
        if fired.len() >= self.0.target {
            self.0.reached.notify_all();
        }
        Box::pin(async { Ok(()) })
    }
}

/// The engine as `kairos daemon` runs it — the one host start-up
/// (`kairos_host`: its own thread and runtime, the database lock) with the
/// default [`Config`] — over the database at a path, delivering to a
/// [`NullSink`]. No sync (nothing is paired).
pub struct EngineThread(kairos_host::Host);

impl EngineThread {
    /// Starts it.
    ///
    /// # Errors
    /// The database is held or cannot be opened; the thread cannot start.
    pub fn start(db: &Path, clock: Arc<dyn Clock>, tally: Arc<Tally>) -> Result<Self> {
        let sink: Box<dyn Channel> = Box::new(NullSink(tally));
        Ok(Self(kairos_host::Host::start(kairos_host::Options {
            db: db.to_owned(),
            clock,
            channels: vec![sink],
            config: Config::default(),
            sync: false,
            on_fired: Box::new(|_| {}),
            on_locked: Box::new(|_| {}),
            waker: kairos_host::Waker::default(),
        })?))
    }

    /// Asks the loop to stop (it does between two waits) and returns its
    /// counters.
    ///
    /// # Errors
    /// The engine failed.
    pub fn stop(self) -> Result<Stats> {
        Ok(self.0.stop()?)
    }
}

/// Lateness percentiles, in microseconds.
#[derive(Debug, Clone, Copy, Default)]
pub struct Percentiles {
    /// Smallest.
    pub min: i64,
    /// Median (nearest rank).
    pub p50: i64,
    /// 99th percentile (nearest rank).
    pub p99: i64,
    /// Largest.
    pub max: i64,
}

impl Percentiles {
    /// Of `samples` (sorted here).
    #[must_use]
    pub fn of(mut samples: Vec<i64>) -> Self {
        samples.sort_unstable();
        let n = samples.len();
        let rank = |p: f64| {
            // Nearest rank: the smallest sample with at least p of them at or below it.
            #[allow(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                clippy::cast_precision_loss
            )]
            let r = (p * n as f64).ceil() as usize;
            samples.get(r.clamp(1, n.max(1)) - 1).copied().unwrap_or(0)
        };
        Self {
            min: samples.first().copied().unwrap_or(0),
            p50: rank(0.50),
            p99: rank(0.99),
            max: samples.last().copied().unwrap_or(0),
        }
    }
}

/// Microseconds as milliseconds with 3 decimals.
#[must_use]
pub fn ms(us: i64) -> String {
    #[allow(clippy::cast_precision_loss)]
    let v = us as f64 / 1000.0;
    format!("{v:.3} ms")
}

/// A duration, readable (`850.2 ms`, `3.412 s`).
#[must_use]
pub fn dur(d: std::time::Duration) -> String {
    if d.as_secs_f64() >= 1.0 {
        format!("{:.3} s", d.as_secs_f64())
    } else {
        format!("{:.1} ms", d.as_secs_f64() * 1000.0)
    }
}

/// Bytes, readable.
#[must_use]
pub fn bytes(n: u64) -> String {
    #[allow(clippy::cast_precision_loss)]
    let mb = n as f64 / 1_048_576.0;
    format!("{mb:.1} MiB ({n} bytes)")
}
