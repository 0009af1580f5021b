//! The delivery state machine over a real SQLite file, with time moved by
//! hand (a `ManualClock`): due means due, retries back off, the far too late
//! expire, two engines never deliver one instance twice, and editing an event
//! recomputes exactly what it should.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Duration, Utc};
use kairos_engine::channel::{Channel, Delivery, DeliveryError, Reminder};
use kairos_engine::clock::{Clock, ManualClock};
use kairos_engine::engine::{Config, Engine};
use kairos_engine::policy::FailureKind;
use kairos_store::{NewInstance, State, Store};

/// Records what it is given; fails the first `fail` calls with `kind`.
#[derive(Clone)]
pub(crate) struct Recorder {
    pub(crate) got: Arc<Mutex<Vec<Reminder>>>,
    fail: Arc<AtomicUsize>,
    kind: FailureKind,
}

impl Recorder {
    pub(crate) fn new() -> Self {
        Self::failing(0, FailureKind::Retryable)
    }
    fn failing(n: usize, kind: FailureKind) -> Self {
        Self {
            got: Arc::default(),
            fail: Arc::new(AtomicUsize::new(n)),
            kind,
        }
    }
    pub(crate) fn keys(&self) -> Vec<String> {
        self.got
            .lock()
            .expect("lock")
            .iter()
            .map(|r| r.key.clone())
            .collect()
    }
}

impl Channel for Recorder {
    fn name(&self) -> &str {
        "recorder"
    }
    fn deliver<'a>(&'a self, r: &'a Reminder) -> Delivery<'a> {
        Box::pin(async move {
            if self.fail.load(Ordering::SeqCst) > 0 {
                self.fail.fetch_sub(1, Ordering::SeqCst);
                return Err(DeliveryError {
                    kind: self.kind,
                    message: "test failure".into(),
                });
            }
            self.got.lock().expect("lock").push(r.clone());
            Ok(())
        })
    }
}

pub(crate) fn t0() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-06-01T09:00:00Z")
        .expect("t0")
        .with_timezone(&Utc)
}

pub(crate) fn setup(dir: &std::path::Path, triggers: &[DateTime<Utc>]) -> std::path::PathBuf {
    let db = dir.join("k.db");
    let mut store = Store::open(&db).expect("open");
    let cal = store.ensure_calendar("c", t0()).expect("calendar");
    let new: Vec<NewInstance> = triggers
        .iter()
        .enumerate()
        .map(|(i, t)| NewInstance {
            key: format!("k{i}"),
            calendar: cal,
            event_uid: format!("e{i}"),
            occurrence: t.to_rfc3339(),
            alarm: "#0".into(),
            repetition: 0,
            rule_version: 1,
            trigger_at: *t,
            snooze_of: None,
            payload:
                r#"{"uid":"e","occurrence_start":"x","summary":"S","location":null,"calendar":"c"}"#
                    .into(),
        })
        .collect();
    store.insert_instances(&new, t0()).expect("insert");
    db
}

fn engine(db: &std::path::Path, clock: &Arc<ManualClock>, ch: &Recorder) -> Engine {
    let store = Store::open(db).expect("open");
    Engine::new(
        store,
        clock.clone(),
        vec![Box::new(ch.clone())],
        Config::default(),
    )
}

#[tokio::test]
async fn fires_when_due_and_not_before() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = setup(dir.path(), &[t0()]);
    let clock = Arc::new(ManualClock::new(t0() - Duration::milliseconds(1)));
    let ch = Recorder::new();
    let mut e = engine(&db, &clock, &ch);
    assert_eq!(
        e.next_wake().expect("next"),
        clock.now(),
        "nothing materialised yet: now"
    );
    e.materialise().expect("materialise");
    assert_eq!(e.next_wake().expect("next"), t0(), "then the first trigger");
    assert_eq!(e.fire_due().await.expect("fire"), 0);
    assert!(ch.keys().is_empty());
    clock.set(t0());
    e.fire_due().await.expect("fire");
    assert_eq!(ch.keys(), ["k0"]);
    assert_eq!(ch.got.lock().expect("lock")[0].status, "on_time");
    assert_eq!(
        e.store().get("k0").expect("get").expect("exists").state,
        State::Delivered
    );
    e.fire_due().await.expect("again");
    assert_eq!(ch.keys(), ["k0"], "never twice");
}

#[tokio::test]
async fn retryable_failures_back_off_then_deliver() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = setup(dir.path(), &[t0()]);
    let clock = Arc::new(ManualClock::new(t0()));
    let ch = Recorder::failing(2, FailureKind::Retryable);
    let mut e = engine(&db, &clock, &ch);
    e.fire_due().await.expect("attempt 1");
    let inst = e.store().get("k0").expect("get").expect("exists");
    assert_eq!(inst.state, State::Failed);
    assert_eq!(
        inst.next_attempt_at,
        Some(t0() + Duration::seconds(2)),
        "backoff after 1 failure"
    );
    clock.advance(Duration::seconds(1));
    e.fire_due().await.expect("too early");
    assert_eq!(
        e.store().get("k0").expect("get").expect("exists").attempts,
        1,
        "not retried before its time"
    );
    clock.advance(Duration::seconds(1));
    e.fire_due().await.expect("attempt 2");
    clock.advance(Duration::seconds(4));
    e.fire_due().await.expect("attempt 3");
    let inst = e.store().get("k0").expect("get").expect("exists");
    assert_eq!((inst.state, inst.attempts), (State::Delivered, 3));
    assert_eq!(ch.keys(), ["k0"]);
    assert!(
        !ch.got.lock().expect("lock")[0].repeat,
        "a retry after recorded failures is not a repeat"
    );
    assert_eq!(e.stats.failures, 2);
}

#[tokio::test]
async fn a_permanent_failure_is_abandoned_with_the_reason() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = setup(dir.path(), &[t0()]);
    let clock = Arc::new(ManualClock::new(t0()));
    let ch = Recorder::failing(1, FailureKind::Permanent);
    let mut e = engine(&db, &clock, &ch);
    e.fire_due().await.expect("fire");
    assert_eq!(
        e.store().get("k0").expect("get").expect("exists").state,
        State::Abandoned
    );
    let audit = e.store().audit_of("k0").expect("audit");
    assert!(
        audit
            .iter()
            .any(|a| a.reason.contains("abandoned after 1 attempts (Permanent)")),
        "{audit:?}"
    );
}

#[tokio::test]
async fn catch_up_marks_recent_ones_missed_and_old_ones_expired() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = setup(
        dir.path(),
        &[t0() - Duration::hours(1), t0() - Duration::days(8), t0()],
    );
    let clock = Arc::new(ManualClock::new(t0()));
    let ch = Recorder::new();
    let mut e = engine(&db, &clock, &ch);
    e.fire_due().await.expect("fire");
    let got = ch.got.lock().expect("lock").clone();
    let status: Vec<(&str, &str)> = got.iter().map(|r| (r.key.as_str(), r.status)).collect();
    assert_eq!(
        status,
        [("k0", "missed"), ("k2", "on_time")],
        "due order; the 8-day-old one is not shown"
    );
    assert_eq!(
        e.store().get("k1").expect("get").expect("exists").state,
        State::Expired
    );
    assert_eq!(e.stats.expired, 1);
}

#[test]
fn two_engines_on_one_file_deliver_each_instance_once() {
    let dir = tempfile::tempdir().expect("tmp");
    let triggers: Vec<DateTime<Utc>> = (0..400).map(|i| t0() + Duration::milliseconds(i)).collect();
    let db = setup(dir.path(), &triggers);
    let clock = Arc::new(ManualClock::new(t0() + Duration::seconds(1)));
    let (a, b) = (Recorder::new(), Recorder::new());
    let run = |ch: Recorder| {
        let (db, clock) = (db.clone(), clock.clone());
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("rt");
            let mut e = engine(&db, &clock, &ch);
            rt.block_on(async { while e.fire_due().await.expect("fire") > 0 {} });
        })
    };
    let (ta, tb) = (run(a.clone()), run(b.clone()));
    ta.join().expect("a");
    tb.join().expect("b");
    let mut all = a.keys();
    all.extend(b.keys());
    let unique: std::collections::HashSet<_> = all.iter().collect();
    assert_eq!(
        all.len(),
        400,
        "each delivered exactly once in total ({} by a, {} by b)",
        a.keys().len(),
        b.keys().len()
    );
    assert_eq!(unique.len(), 400);
}
