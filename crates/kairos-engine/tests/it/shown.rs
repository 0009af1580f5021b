//! What this engine showed and was answered outside it (another process on
//! the same file, or during the delivery itself), or whose event or calendar
//! was deleted since, is taken back once, by the engine's own
//! reconciliation.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use kairos_engine::channel::{Channel, Delivery, Reminder, WithdrawReason, Withdrawal};
use kairos_engine::clock::ManualClock;
use kairos_engine::engine::{Config, Engine, EngineEvent, HERE};
use kairos_store::Store;

use crate::engine::t0;
use crate::support::cal;

/// A database with one event per name in calendar "c", each with a reminder
/// due at [`t0`]; the reminders' keys in the same order.
fn setup(dir: &std::path::Path, names: &[&str]) -> (PathBuf, Vec<String>) {
    let db = dir.join("k.db");
    let mut store = Store::open(&db).expect("open");
    let mut keys = Vec::new();
    for name in names {
        let body = format!(
            "BEGIN:VEVENT\nUID:{name}\nSUMMARY:{name}\nDTSTART:20260601T091500Z\n\
             BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT15M\nEND:VALARM\nEND:VEVENT"
        );
        let h = chrono::Duration::hours(72);
        let from = t0() - chrono::Duration::hours(1);
        kairos_engine::import::import(&mut store, "c", &cal(&body), from, h, chrono_tz::UTC)
            .expect("import");
        let due = store
            .due(chrono::DateTime::<chrono::Utc>::MAX_UTC, 100)
            .expect("due");
        let key = due.iter().find(|i| i.event_uid == *name).expect("planned");
        assert_eq!(key.trigger_at, t0());
        keys.push(key.key.clone());
    }
    (db, keys)
}

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
    let (db, k) = setup(dir.path(), &["e0", "e1", "e2"]);
    let ch = Screen::default();
    let mut e = engine(&db, &ch);
    assert_eq!(e.fire_due().await.expect("fire"), 3);
    let mut events = e.subscribe();
    assert_eq!(e.reconcile_fresh().expect("fresh"), 0, "none answered yet");
    assert_eq!(e.reconcile_shown().expect("none"), 0, "none answered yet");

    let mut other = Store::open(&db).expect("other");
    kairos_engine::actions::dismiss(&mut other, &k[0], t0()).expect("dismiss");
    kairos_engine::actions::snooze(&mut other, &k[1], chrono::Duration::minutes(5), t0())
        .expect("snooze");
    assert_eq!(e.reconcile_shown().expect("reconcile"), 2);
    assert_eq!(
        ch.keys(),
        [
            (k[0].clone(), WithdrawReason::Dismissed),
            (k[1].clone(), WithdrawReason::Snoozed)
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
    kairos_engine::actions::dismiss(&mut other, &k[2], t0()).expect("dismiss k2");
    assert_eq!(e.reconcile_shown().expect("k2"), 1);
}

#[tokio::test]
async fn dismissed_while_being_shown_is_withdrawn_after_the_round() {
    let dir = tempfile::tempdir().expect("tmp");
    let (db, k) = setup(dir.path(), &["e0", "e1"]);
    let ch = Screen::default();
    ch.answer.lock().expect("lock").push(k[1].clone());
    let mut e = engine(&db, &ch);
    assert_eq!(e.fire_due().await.expect("fire"), 2);
    assert_eq!(e.reconcile_fresh().expect("fresh"), 1);
    assert_eq!(ch.keys(), [(k[1].clone(), WithdrawReason::Dismissed)]);
    assert_eq!(e.reconcile_fresh().expect("nothing fresh"), 0);
    assert_eq!(e.reconcile_shown().expect("all"), 0, "taken back once");
}

#[tokio::test]
async fn a_reminder_whose_event_or_calendar_was_deleted_is_taken_back_as_deleted() {
    let dir = tempfile::tempdir().expect("tmp");
    let (db, k) = setup(dir.path(), &["gone", "kept"]);
    let ch = Screen::default();
    let mut e = engine(&db, &ch);
    assert_eq!(e.fire_due().await.expect("fire"), 2);

    // The series deleted in another connection (as `kairos delete` or a
    // synced delete does): its delivered instance stays in the store, its
    // notification must not.
    let mut other = Store::open(&db).expect("other");
    let h = chrono::Duration::hours(72);
    kairos_engine::import::replace_series(&mut other, "c", "gone", &[], t0(), h, chrono_tz::UTC)
        .expect("delete");
    assert_eq!(e.reconcile_shown().expect("reconcile"), 1);
    assert_eq!(ch.keys(), [(k[0].clone(), WithdrawReason::Deleted)]);
    assert_eq!(e.reconcile_shown().expect("once"), 0, "taken back once");

    // The calendar deleted: its instances go with it.
    let id = other.calendars().expect("calendars")[0].id;
    other
        .write(|tx| tx.delete_calendar(id))
        .expect("delete calendar");
    assert_eq!(e.reconcile_shown().expect("calendar"), 1);
    assert_eq!(ch.keys()[1], (k[1].clone(), WithdrawReason::Deleted));
}
