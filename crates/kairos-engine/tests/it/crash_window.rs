//! The SIGKILL window: delivered outcomes are committed in groups bounded by
//! count and by time (time moved by hand, one millisecond per delivery), and
//! after a crash the journal decides: what it says was delivered is recorded,
//! the attempt in flight is delivered again marked `repeat`, the rest
//! normally.

use std::sync::{Arc, Mutex};

use chrono::Duration;
use kairos_engine::channel::{Channel, Delivery, Reminder};
use kairos_engine::clock::ManualClock;
use kairos_engine::engine::{Config, Engine};
use kairos_store::{State, Store};

use crate::engine::{setup, t0};

/// At each delivery, notes how many instances the database already holds
/// `delivered` (read on its own connection), then moves the clock by `step`.
struct Watcher {
    db: Mutex<Store>,
    clock: Arc<ManualClock>,
    step: Duration,
    seen: Arc<Mutex<Vec<u64>>>,
}

impl Channel for Watcher {
    fn name(&self) -> &str {
        "watcher"
    }
    fn deliver<'a>(&'a self, _r: &'a Reminder) -> Delivery<'a> {
        Box::pin(async move {
            let counts = self.db.lock().expect("lock").counters().expect("counters");
            let delivered = counts.get(&State::Delivered).copied().unwrap_or(0);
            self.seen.lock().expect("lock").push(delivered);
            self.clock.advance(self.step);
            Ok(())
        })
    }
}

/// Fires ten instances all due at once with `config` and a clock that moves
/// `step` per delivery; returns what the database said at each delivery.
async fn recorded_at_each_delivery(config: Config, step: Duration) -> Vec<u64> {
    let dir = tempfile::tempdir().expect("tmp");
    let db = setup(dir.path(), &[t0(); 10]);
    let clock = Arc::new(ManualClock::new(t0()));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let watcher = Watcher {
        db: Mutex::new(Store::open(&db).expect("observer")),
        clock: clock.clone(),
        step,
        seen: seen.clone(),
    };
    let mut e = Engine::new(
        Store::open(&db).expect("open"),
        clock,
        vec![Box::new(watcher)],
        config,
    );
    assert_eq!(e.fire_due().await.expect("fire"), 10);
    let counts = e.store().counters().expect("counters");
    assert_eq!(
        counts.get(&State::Delivered),
        Some(&10),
        "all recorded at the end"
    );
    seen.lock().expect("lock").clone()
}

#[tokio::test]
async fn slow_deliveries_are_recorded_once_the_time_budget_has_passed() {
    // A count cap far away: only the time bound can cause a record.
    let config = Config {
        record_every: 1000,
        record_within: Duration::milliseconds(3),
        ..Config::default()
    };
    // Delivery i begins at t0 + i ms; the group begun at 0 is recorded
    // before the one beginning at 3 ms, and so on.
    assert_eq!(
        recorded_at_each_delivery(config, Duration::milliseconds(1)).await,
        [0, 0, 0, 3, 3, 3, 6, 6, 6, 9]
    );
}

#[tokio::test]
async fn fast_deliveries_are_recorded_once_the_count_is_reached() {
    // Time stands still: only the count bound can cause a record.
    let config = Config {
        record_every: 4,
        record_within: Duration::hours(1),
        ..Config::default()
    };
    assert_eq!(
        recorded_at_each_delivery(config, Duration::zero()).await,
        [0, 0, 0, 0, 4, 4, 4, 4, 8, 8]
    );
}

#[tokio::test]
async fn a_clock_set_back_mid_group_records_at_once() {
    let config = Config {
        record_every: 1000,
        record_within: Duration::milliseconds(3),
        ..Config::default()
    };
    // Each delivery moves the clock back: a window measured on it would
    // never close.
    assert_eq!(
        recorded_at_each_delivery(config, Duration::milliseconds(-1)).await,
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    );
}

/// Shows reminders; never returns from the one called `stall` (the process
/// dies while showing it).
struct Screen {
    got: Arc<Mutex<Vec<Reminder>>>,
    stall: Option<&'static str>,
}

impl Channel for Screen {
    fn name(&self) -> &str {
        "screen"
    }
    fn deliver<'a>(&'a self, r: &'a Reminder) -> Delivery<'a> {
        Box::pin(async move {
            self.got.lock().expect("lock").push(r.clone());
            if self.stall == Some(r.key.as_str()) {
                std::future::pending::<()>().await;
            }
            Ok(())
        })
    }
}

fn screen(
    db: &std::path::Path,
    stall: Option<&'static str>,
) -> (Engine, Arc<Mutex<Vec<Reminder>>>) {
    let got = Arc::new(Mutex::new(Vec::new()));
    let ch = Screen {
        got: got.clone(),
        stall,
    };
    // Groups far larger than the run: nothing is recorded before the crash.
    let config = Config {
        record_every: 1000,
        record_within: Duration::hours(1),
        ..Config::default()
    };
    let clock = Arc::new(ManualClock::new(t0() + Duration::seconds(1)));
    let e = Engine::new(
        Store::open(db).expect("open"),
        clock,
        vec![Box::new(ch)],
        config,
    );
    (e, got)
}

#[tokio::test]
async fn after_a_crash_only_the_attempt_in_flight_is_repeated_and_says_so() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = setup(dir.path(), &[t0(); 4]);
    // The first engine shows k0 and k1, is still showing k2 (it never
    // returns) when it dies, and has shown k3 meanwhile: the hanging
    // attempt holds back no other reminder.
    {
        let (mut e, got) = screen(&db, Some("k2"));
        assert_eq!(
            e.fire_due().await.expect("fire"),
            4,
            "returns with k2 running"
        );
        let shown: Vec<String> = got
            .lock()
            .expect("lock")
            .iter()
            .map(|r| r.key.clone())
            .collect();
        assert_eq!(shown, ["k0", "k1", "k2", "k3"]);
        assert_eq!(e.in_flight(), 1);
        let counts = e.store().counters().expect("counters");
        assert_eq!(counts.get(&State::Firing), Some(&1), "k2, unrecorded");
        assert_eq!(counts.get(&State::Delivered), Some(&3));
        // The process dies: the running attempt is dropped mid-delivery.
    }
    let (mut e, got) = screen(&db, None);
    assert_eq!(e.recover().expect("recover"), 1);
    assert_eq!(e.fire_due().await.expect("fire"), 1, "only k2 is due");
    let again: Vec<(String, bool)> = got
        .lock()
        .expect("lock")
        .iter()
        .map(|r| (r.key.clone(), r.repeat))
        .collect();
    assert_eq!(
        again,
        [("k2".to_owned(), true)],
        "k0, k1 and k3 are not shown again; k2 (in flight) says repeat"
    );
    let counts = e.store().counters().expect("counters");
    assert_eq!(counts.get(&State::Delivered), Some(&4));
    let k0 = e.store().deliveries_of("k0").expect("deliveries");
    assert_eq!(k0.len(), 1, "one delivery of k0");
    // The JSON a consumer reads says it too, and only when true.
    let line = serde_json::to_value(&got.lock().expect("lock")[0]).expect("json");
    assert_eq!(line["repeat"], true);
    let first = Reminder {
        repeat: false,
        ..got.lock().expect("lock")[0].clone()
    };
    let line = serde_json::to_value(&first).expect("json");
    assert!(
        line.get("repeat").is_none(),
        "absent on a first delivery: {line}"
    );
}
