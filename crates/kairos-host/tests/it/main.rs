//! The engine host on a real database file: one per database, a change
//! wakes it, another process's signal reaches subscribers as `Changed`.
//! Its live sync connection follows the pairing (`pairing`); it is tested
//! end to end with the real server in kairos-cli's sync tests too, through
//! `kairos daemon`, which runs on it.

// Radicale is a Python server started from the Linux venv: not under Wine.
#[cfg(unix)]
mod caldav_linked;
mod pairing;

use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::Duration;

use chrono::Utc;
use kairos_engine::channel::{Channel, Delivery, Reminder};
use kairos_engine::clock::SystemClock;
use kairos_engine::engine::{Config, EngineEvent};
use kairos_host::{Host, HostError, Options, Phase, Waker};
use kairos_store::{NewInstance, State, Store};

/// Hands each key it is given to the test.
struct Tell(Sender<String>);

impl Channel for Tell {
    fn name(&self) -> &str {
        "tell"
    }
    fn deliver<'a>(&'a self, r: &'a Reminder) -> Delivery<'a> {
        let _ = self.0.send(r.key.clone());
        Box::pin(async { Ok(()) })
    }
}

fn start(db: &std::path::Path, waker: &Waker) -> (Result<Host, HostError>, Receiver<String>) {
    let (tx, rx) = channel();
    let host = Host::start(Options {
        db: db.to_owned(),
        clock: Arc::new(SystemClock::shifted(chrono::Duration::zero())),
        channels: vec![Box::new(Tell(tx))],
        config: Config::default(),
        sync: true,
        on_fired: Box::new(|_| {}),
        on_locked: Box::new(|_| {}),
        waker: waker.clone(),
    });
    (host, rx)
}

/// Adds a reminder that is already due (a second ago).
fn add_due(db: &std::path::Path, key: &str) {
    let now = Utc::now();
    let mut store = Store::open(db).expect("open");
    let cal = store.ensure_calendar("c", now).expect("calendar");
    let new = NewInstance {
        key: key.to_owned(),
        calendar: cal,
        event_uid: key.to_owned(),
        occurrence: now.to_rfc3339(),
        alarm: "#0".into(),
        repetition: 0,
        rule_version: 1,
        trigger_at: now - chrono::Duration::seconds(1),
        snooze_of: None,
        payload:
            r#"{"uid":"e","occurrence_start":"x","summary":"S","location":null,"calendar":"c"}"#
                .into(),
    };
    store.insert_instances(&[new], now).expect("insert");
}

const WAIT: Duration = Duration::from_secs(10);

#[test]
fn a_second_host_on_one_database_is_refused_naming_the_first() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("k.db");
    let (first, _rx) = start(&db, &Waker::default());
    let first = first.expect("first host");
    let (second, _rx2) = start(&db, &Waker::default());
    match second {
        Err(HostError::Locked(m)) => {
            assert!(m.contains(&format!("pid {}", std::process::id())), "{m}");
        }
        other => panic!("a second host started: {:?}", other.err()),
    }
    assert!(!first.syncing(), "not paired: no live connection");
    assert_eq!(first.sync_state().borrow().phase, Phase::NotPaired);
    first.stop().expect("stops cleanly");
    let (again, _rx3) = start(&db, &Waker::default());
    again
        .expect("the lock is free once the first stopped")
        .stop()
        .expect("stop");
}

#[test]
fn a_change_made_in_this_process_wakes_the_engine_through_the_waker() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("k.db");
    let waker = Waker::default();
    let (host, rx) = start(&db, &waker);
    let host = host.expect("host");
    add_due(&db, "k1");
    // Without the wake the engine sleeps until its horizon refresh.
    waker.wake();
    assert_eq!(rx.recv_timeout(WAIT).expect("fired"), "k1");
    add_due(&db, "k2");
    host.changed();
    assert_eq!(rx.recv_timeout(WAIT).expect("fired"), "k2");
    let stats = host.stop().expect("stop");
    assert_eq!(stats.late + stats.on_time, 2, "{stats:?}");
    let store = Store::open(&db).expect("open");
    assert_eq!(
        store.counters().expect("counts").get(&State::Delivered),
        Some(&2)
    );
}

#[test]
fn another_process_signal_wakes_the_engine_and_reaches_subscribers_as_changed() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("k.db");
    let (host, rx) = start(&db, &Waker::default());
    let host = host.expect("host");
    let mut events = host.subscribe();
    add_due(&db, "k1");
    // What `kairos import|dismiss` do: notify the lock holder (SIGUSR1 on
    // Unix, its named pipe on Windows; here this very process, whose host
    // listens for it).
    assert!(
        kairos_engine::daemon::notify_running(&db),
        "the holder was told"
    );
    assert_eq!(rx.recv_timeout(WAIT).expect("fired"), "k1");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let changed = rt.block_on(async {
        tokio::time::timeout(WAIT, async {
            loop {
                match events.recv().await {
                    Ok(EngineEvent::Changed) => return true,
                    Ok(_) => {}
                    Err(_) => return false,
                }
            }
        })
        .await
    });
    assert_eq!(changed, Ok(true));
    host.stop().expect("stop");
}
