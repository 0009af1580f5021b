//! Channels deliver concurrently, each bounded by its own timeout: an
//! attempt that hangs holds back neither the other channels of its
//! reminder nor the reminders due after it; its timeout is a failed,
//! retryable attempt recorded with the reason, retried on that channel
//! only (marked `repeat`: it may have been shown); a crash while it runs
//! repeats only it. Tokio's clock is paused, so a 10 s timeout passes at
//! once and the tests can check that nothing waited for it.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration as StdDuration;

use chrono::Duration;
use kairos_engine::channel::{Channel, Delivery, Reminder};
use kairos_engine::clock::ManualClock;
use kairos_engine::engine::{Config, Engine};
use kairos_store::{Outcome, State, Store};

use crate::engine::{setup, t0};

/// What a channel was given: `(key, repeat)`, in order.
type Log = Arc<Mutex<Vec<(String, bool)>>>;

/// A test channel: notes each delivery; never returns from the first
/// attempt on a key in `hang` (a notification service that does not
/// answer); otherwise takes `pause`. Counts the attempts running at once.
struct Gate {
    name: &'static str,
    got: Log,
    hang: Mutex<HashSet<String>>,
    pause: Option<StdDuration>,
    timeout: StdDuration,
    running: AtomicUsize,
    most: Arc<AtomicUsize>,
}

impl Gate {
    fn new(name: &'static str, hang: &[&str]) -> (Self, Log) {
        let got = Log::default();
        let gate = Self {
            name,
            got: got.clone(),
            hang: Mutex::new(hang.iter().map(|k| (*k).to_owned()).collect()),
            pause: None,
            timeout: StdDuration::from_secs(10),
            running: AtomicUsize::new(0),
            most: Arc::default(),
        };
        (gate, got)
    }
}

/// Counts an attempt as running until it ends or is dropped.
struct Running<'a>(&'a AtomicUsize);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Channel for Gate {
    fn name(&self) -> &str {
        self.name
    }
    fn timeout(&self) -> StdDuration {
        self.timeout
    }
    fn deliver<'a>(&'a self, r: &'a Reminder) -> Delivery<'a> {
        Box::pin(async move {
            self.got
                .lock()
                .expect("lock")
                .push((r.key.clone(), r.repeat));
            let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
            let _running = Running(&self.running);
            self.most.fetch_max(now, Ordering::SeqCst);
            if self.hang.lock().expect("lock").remove(&r.key) {
                std::future::pending::<()>().await;
            }
            if let Some(p) = self.pause {
                tokio::time::sleep(p).await;
            }
            Ok(())
        })
    }
}

fn engine(
    db: &std::path::Path,
    clock: &Arc<ManualClock>,
    channels: Vec<Gate>,
    config: Config,
) -> Engine {
    Engine::new(
        Store::open(db).expect("open"),
        clock.clone(),
        channels
            .into_iter()
            .map(|c| Box::new(c) as Box<dyn Channel>)
            .collect(),
        config,
    )
}

fn keys(log: &Log) -> Vec<(String, bool)> {
    log.lock().expect("lock").clone()
}

fn k(key: &str, repeat: bool) -> (String, bool) {
    (key.to_owned(), repeat)
}

fn state(e: &mut Engine, key: &str) -> State {
    e.store().get(key).expect("read").expect("instance").state
}

#[tokio::test(start_paused = true)]
async fn a_hanging_channel_holds_back_neither_other_channels_nor_later_reminders() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = setup(dir.path(), &[t0(), t0() + Duration::seconds(1)]);
    let clock = Arc::new(ManualClock::new(t0()));
    let (slow, slow_got) = Gate::new("slow", &["k0"]);
    let (fast, fast_got) = Gate::new("fast", &[]);
    let mut e = engine(&db, &clock, vec![slow, fast], Config::default());
    let start = tokio::time::Instant::now();

    assert_eq!(e.fire_due().await.expect("fire"), 1);
    assert_eq!(keys(&fast_got), [k("k0", false)], "fast has k0 at once");
    assert_eq!(e.in_flight(), 1, "slow still shows k0");
    assert_eq!(state(&mut e, "k0"), State::Firing);

    // The next reminder, due a second later, goes to both channels and is
    // recorded while slow still hangs on k0.
    clock.advance(Duration::seconds(1));
    assert_eq!(e.fire_due().await.expect("fire"), 1);
    assert_eq!(keys(&fast_got), [k("k0", false), k("k1", false)]);
    assert_eq!(keys(&slow_got), [k("k0", false), k("k1", false)]);
    assert_eq!(state(&mut e, "k1"), State::Delivered);
    assert_eq!(state(&mut e, "k0"), State::Firing);
    assert!(
        start.elapsed() < StdDuration::from_secs(1),
        "nothing waited for slow's timeout"
    );

    // Slow's timeout ends its attempt: recorded as a retryable failure with
    // the reason; fast's delivery of k0 is recorded as well.
    assert_eq!(e.delivered().await.expect("delivered"), 1);
    assert!(
        start.elapsed() >= StdDuration::from_secs(10),
        "the timeout, on tokio's clock"
    );
    assert_eq!(e.in_flight(), 0);
    assert_eq!(state(&mut e, "k0"), State::Failed);
    let d = e.store().deliveries_of("k0").expect("deliveries");
    let slow_d: Vec<_> = d.iter().filter(|d| d.channel == "slow").collect();
    assert_eq!(slow_d.len(), 1, "{d:?}");
    assert_eq!(slow_d[0].outcome, Outcome::Retryable);
    let reason = slow_d[0].error.as_deref().unwrap_or_default();
    assert!(reason.contains("slow timed out after 10s"), "{reason}");

    // Retried after its backoff on slow only, marked repeat (the attempt
    // given up on may have been shown); fast is not given k0 again.
    clock.advance(Duration::seconds(5));
    assert_eq!(e.fire_due().await.expect("retry"), 1);
    assert_eq!(
        keys(&slow_got),
        [k("k0", false), k("k1", false), k("k0", true)]
    );
    assert_eq!(keys(&fast_got), [k("k0", false), k("k1", false)]);
    assert_eq!(state(&mut e, "k0"), State::Delivered);
    let d = e.store().deliveries_of("k0").expect("deliveries");
    let delivered: Vec<&str> = d
        .iter()
        .filter(|d| d.outcome == Outcome::Delivered)
        .map(|d| d.channel.as_str())
        .collect();
    assert_eq!(delivered.len(), 2, "once per channel: {d:?}");
    assert!(delivered.contains(&"slow") && delivered.contains(&"fast"));
}

#[tokio::test(start_paused = true)]
async fn a_crash_during_concurrent_deliveries_repeats_only_the_attempt_running() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = setup(dir.path(), &[t0(); 3]);
    let clock = Arc::new(ManualClock::new(t0()));
    // Groups far larger than the run: one commit at the end of the round,
    // which empties the journal and must write back k1's lines.
    let config = Config {
        record_every: 1000,
        record_within: Duration::hours(1),
        ..Config::default()
    };
    {
        let (slow, _) = Gate::new("slow", &["k1"]);
        let (fast, fast_got) = Gate::new("fast", &[]);
        let mut e = engine(&db, &clock, vec![slow, fast], config.clone());
        assert_eq!(e.fire_due().await.expect("fire"), 3);
        assert_eq!(keys(&fast_got).len(), 3);
        let counts = e.store().counters().expect("counters");
        assert_eq!(counts.get(&State::Delivered), Some(&2));
        assert_eq!(counts.get(&State::Firing), Some(&1));
        // SIGKILL: the running attempt and the engine are dropped.
    }
    let (slow, slow_got) = Gate::new("slow", &[]);
    let (fast, fast_got) = Gate::new("fast", &[]);
    let mut e = engine(&db, &clock, vec![slow, fast], config);
    assert_eq!(e.recover().expect("recover"), 1);
    let d = e.store().deliveries_of("k1").expect("deliveries");
    assert!(
        d.iter()
            .any(|d| d.channel == "fast" && d.outcome == Outcome::Delivered),
        "fast's delivery of k1, known only to the journal, is recorded: {d:?}"
    );
    assert_eq!(e.fire_due().await.expect("fire"), 1);
    assert_eq!(
        keys(&slow_got),
        [k("k1", true)],
        "only the attempt running, marked"
    );
    assert!(keys(&fast_got).is_empty(), "fast is not given k1 again");
    let counts = e.store().counters().expect("counters");
    assert_eq!(counts.get(&State::Delivered), Some(&3));
    let d = e.store().deliveries_of("k1").expect("deliveries");
    assert_eq!(
        d.iter().filter(|d| d.outcome == Outcome::Delivered).count(),
        2,
        "{d:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_channel_runs_at_most_max_in_flight_attempts_and_queues_the_rest() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = setup(dir.path(), &[t0(); 6]);
    let clock = Arc::new(ManualClock::new(t0()));
    let (mut slow, slow_got) = Gate::new("slow", &[]);
    slow.pause = Some(StdDuration::from_secs(1));
    let most = slow.most.clone();
    let (fast, fast_got) = Gate::new("fast", &[]);
    let config = Config {
        max_in_flight: 2,
        ..Config::default()
    };
    let mut e = engine(&db, &clock, vec![slow, fast], config);
    assert_eq!(e.fire_due().await.expect("fire"), 6);
    assert_eq!(keys(&fast_got).len(), 6, "fast is not queued behind slow");
    assert_eq!(keys(&slow_got).len(), 2, "two running, four waiting");
    assert_eq!(e.drain().await.expect("drain"), 6);
    assert_eq!(most.load(Ordering::SeqCst), 2);
    let order: Vec<String> = keys(&slow_got).into_iter().map(|(k, _)| k).collect();
    assert_eq!(
        order,
        ["k0", "k1", "k2", "k3", "k4", "k5"],
        "in claim order"
    );
    let counts = e.store().counters().expect("counters");
    assert_eq!(counts.get(&State::Delivered), Some(&6));
}
