//! What this engine showed and was answered outside it (another process on
//! the same file, or during the delivery itself) is taken back once, by the
//! engine's own reconciliation.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use kairos_engine::channel::{Channel, Delivery, Reminder, WithdrawReason, Withdrawal};
use kairos_engine::clock::ManualClock;
use kairos_engine::engine::{Config, Engine, EngineEvent, HERE};
use kairos_store::Store;

use crate::engine::{setup, t0};

/// Shows what it is given; dismisses (from its own connection to the
/// file) the keys named in `answer` while showing them; records withdrawals.
#[derive(Clone, Default)]
struct Screen {
    db: Arc<Mutex<Option<PathBuf>>>,
    answer: Arc<Mutex<Vec<String>>>,
    withdrawn: Arc<Mutex<Vec<Withdrawal>>>,
}

impl Channel for Screen {
    fn name(&self) -> &str {
        "screen"
    }
    fn deliver<'a>(&'a self, r: &'a Reminder) -> Delivery<'a> {
        Box::pin(async move {
            if self.answer.lock().expect("lock").contains(&r.key) {
                let db = self.db.lock().expect("lock").clone().expect("db");
                let mut other = Store::open(&db).expect("second connection");
                kairos_engine::actions::dismiss(&mut other, &r.key, t0()).expect("dismiss");
            }
            Ok(())
        })
    }
    fn withdraw(&self, w: &Withdrawal) {
        self.withdrawn.lock().expect("lock").push(w.clone());
    }
}

impl Screen {
    fn keys(&self) -> Vec<(String, WithdrawReason)> {
        let w = self.withdrawn.lock().expect("lock");
        w.iter().map(|w| (w.key.clone(), w.reason)).collect()
    }
}

fn engine(db: &std::path::Path, ch: &Screen) -> Engine {
    *ch.db.lock().expect("lock") = Some(db.to_path_buf());
    let clock = Arc::new(ManualClock::new(t0()));
    Engine::new(
        Store::open(db).expect("open"),
        clock,
        vec![Box::new(ch.clone())],
        Config::default(),
    )
}

#[tokio::test]
async fn answered_in_another_connection_is_withdrawn_once_and_announced() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = setup(dir.path(), &[t0(), t0(), t0()]);
    let ch = Screen::default();
    let mut e = engine(&db, &ch);
    assert_eq!(e.fire_due().await.expect("fire"), 3);
    let mut events = e.subscribe();
    assert_eq!(e.reconcile_fresh().expect("fresh"), 0, "none answered yet");

    let mut other = Store::open(&db).expect("other");
    kairos_engine::actions::dismiss(&mut other, "k0", t0()).expect("dismiss");
    kairos_engine::actions::snooze(&mut other, "k1", chrono::Duration::minutes(5), t0())
        .expect("snooze");
    assert_eq!(e.reconcile_shown().expect("reconcile"), 2);
    assert_eq!(
        ch.keys(),
        [
            ("k0".to_owned(), WithdrawReason::Dismissed),
            ("k1".to_owned(), WithdrawReason::Snoozed)
        ]
    );
    let w = ch.withdrawn.lock().expect("lock")[0].clone();
    assert_eq!(w.by, HERE);
    assert_eq!(
        events.try_recv().expect("announced"),
        EngineEvent::Withdrawn(w)
    );
    // Once: a second reconciliation finds nothing new; k2 is still shown.
    assert_eq!(e.reconcile_shown().expect("again"), 0);
    assert_eq!(ch.keys().len(), 2);
    kairos_engine::actions::dismiss(&mut other, "k2", t0()).expect("dismiss k2");
    assert_eq!(e.reconcile_shown().expect("k2"), 1);
}

#[tokio::test]
async fn dismissed_while_being_shown_is_withdrawn_after_the_round() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = setup(dir.path(), &[t0(), t0()]);
    let ch = Screen::default();
    ch.answer.lock().expect("lock").push("k1".into());
    let mut e = engine(&db, &ch);
    assert_eq!(e.fire_due().await.expect("fire"), 2);
    assert_eq!(e.reconcile_fresh().expect("fresh"), 1);
    assert_eq!(ch.keys(), [("k1".to_owned(), WithdrawReason::Dismissed)]);
    assert_eq!(e.reconcile_fresh().expect("nothing fresh"), 0);
    assert_eq!(e.reconcile_shown().expect("all"), 0, "taken back once");
}
