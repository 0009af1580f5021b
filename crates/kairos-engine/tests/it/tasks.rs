//! Tasks (`VTODO`) through the engine over a real SQLite file, time moved
//! by hand: a task's reminders (counted from its `DUE`) fire once each like
//! an event's; marking it done drops what is pending and takes back what is
//! showing; a recurring task is done one occurrence at a time.

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use kairos_engine::channel::WithdrawReason;
use kairos_engine::clock::{Clock, ManualClock};
use kairos_engine::engine::{Config, Engine};
use kairos_engine::import::import;
use kairos_engine::tasks::{TaskError, done, open_tasks};
use kairos_store::{State, Store};

use crate::engine::Recorder;
use crate::support::{at, cal};

const H: Duration = Duration::hours(72);

/// A task due 2026-06-02 12:00 UTC, reminded 3 h and 1 h before.
const CONTRACT: &str = "BEGIN:VTODO\nUID:contract\nSUMMARY:Renew the contract\n\
    DUE:20260602T120000Z\nPRIORITY:1\n\
    BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER;RELATED=END:-PT3H\nEND:VALARM\n\
    BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER;RELATED=END:-PT1H\nEND:VALARM\nEND:VTODO";

fn engine(store: Store, clock: &Arc<ManualClock>, ch: &Recorder) -> Engine {
    let config = Config {
        floating: chrono_tz::UTC,
        ..Config::default()
    };
    Engine::new(store, clock.clone(), vec![Box::new(ch.clone())], config)
}

fn state(store: &Store, key: &str) -> State {
    store.get(key).expect("get").expect("stored").state
}

#[tokio::test]
async fn a_task_reminder_fires_once_and_done_takes_it_back_and_stops_the_next() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("k.db");
    let t = at("2026-06-02T08:00:00Z");
    let mut store = Store::open(&db).expect("open");
    let r = import(&mut store, "work", &cal(CONTRACT), t, H, chrono_tz::UTC).expect("import");
    assert_eq!(r.scheduled, 2, "two reminders, counted from DUE");
    drop(store);

    let clock = Arc::new(ManualClock::new(at("2026-06-02T09:00:00Z")));
    let ch = Recorder::new();
    let mut e = engine(Store::open(&db).expect("open"), &clock, &ch);
    e.materialise().expect("materialise");
    assert_eq!(e.fire_due().await.expect("fire"), 1, "the 09:00 one");
    assert_eq!(e.fire_due().await.expect("again"), 0);
    drop(e);
    // A restart at the same moment sends nothing again.
    let mut e = engine(Store::open(&db).expect("open"), &clock, &ch);
    e.recover().expect("recover");
    e.materialise().expect("materialise");
    assert_eq!(e.fire_due().await.expect("after restart"), 0);
    let first = ch.keys()[0].clone();
    assert!(first.contains("/contract/"), "{first}");
    assert_eq!(
        ch.got.lock().expect("lock")[0].summary.as_deref(),
        Some("Renew the contract")
    );

    // Done at 09:30 while the 09:00 reminder is showing.
    let mut store = Store::open(&db).expect("open");
    let d = done(
        &mut store,
        "contract",
        None,
        at("2026-06-02T09:30:00Z"),
        H,
        chrono_tz::UTC,
    )
    .expect("done");
    assert_eq!((d.calendar.as_str(), d.dropped), ("work", 1));
    assert_eq!(d.occurrence, None);
    assert_eq!(d.withdrawals.len(), 1, "{:?}", d.withdrawals);
    assert_eq!(d.withdrawals[0].key, first);
    assert_eq!(d.withdrawals[0].reason, WithdrawReason::Done);
    assert_eq!(state(&store, &first), State::Acknowledged);
    assert!(
        open_tasks(&store, clock.now(), chrono_tz::UTC)
            .expect("tasks")
            .is_empty()
    );
    assert!(matches!(
        done(&mut store, "contract", None, clock.now(), H, chrono_tz::UTC),
        Err(TaskError::AlreadyDone(_))
    ));
    assert!(matches!(
        done(&mut store, "nope", None, clock.now(), H, chrono_tz::UTC),
        Err(TaskError::NotFound(_))
    ));
    drop(store);

    // 11:00 comes: the second reminder does not fire.
    clock.set(at("2026-06-02T11:00:00Z"));
    let mut e = engine(Store::open(&db).expect("open"), &clock, &ch);
    e.materialise().expect("materialise");
    assert_eq!(e.fire_due().await.expect("fire"), 0);
    assert_eq!(ch.keys(), [first]);
}

const DAILY: &str = "BEGIN:VTODO\nUID:pill\nSUMMARY:Take the pill\n\
    DTSTART:20260601T090000Z\nDUE:20260601T170000Z\nRRULE:FREQ=DAILY;COUNT=5\n\
    BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER;RELATED=END:-PT1H\nEND:VALARM\nEND:VTODO";

#[tokio::test]
async fn a_recurring_task_is_done_one_occurrence_at_a_time() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("k.db");
    let now = at("2026-06-02T08:00:00Z");
    let mut store = Store::open(&db).expect("open");
    import(&mut store, "home", &cal(DAILY), now, H, chrono_tz::UTC).expect("import");
    let utc = chrono_tz::UTC;
    // Nothing was ticked off: the oldest open day is current, and overdue.
    let t = open_tasks(&store, now, utc).expect("tasks");
    assert_eq!(t.len(), 1);
    assert_eq!(t[0].occurrence.as_deref(), Some("2026-06-01T09:00:00Z"));
    assert_eq!(t[0].due, Some(at("2026-06-01T17:00:00Z")));
    assert!(t[0].overdue);

    let d = done(&mut store, "pill", None, now, H, utc).expect("done 1");
    assert_eq!(d.occurrence.as_deref(), Some("2026-06-01T09:00:00Z"));
    assert_eq!(d.dropped, 0, "yesterday's reminder was before the horizon");
    let t = open_tasks(&store, now, utc).expect("tasks");
    assert_eq!(t[0].occurrence.as_deref(), Some("2026-06-02T09:00:00Z"));
    assert!(!t[0].overdue);

    let d = done(&mut store, "pill", None, now, H, utc).expect("done 2");
    assert_eq!(d.occurrence.as_deref(), Some("2026-06-02T09:00:00Z"));
    assert_eq!(d.dropped, 1, "today's pending reminder went");
    let stored: String = store
        .events_of(store.calendars().expect("cals")[0].id)
        .expect("events")
        .iter()
        .map(|e| kairos_engine::series::component_text(e, "tasks").expect("text"))
        .collect();
    assert_eq!(stored.matches("STATUS:COMPLETED").count(), 2, "{stored}");
    assert_eq!(stored.matches("RECURRENCE-ID").count(), 2, "{stored}");
    let t = open_tasks(&store, now, utc).expect("tasks");
    assert_eq!(t[0].occurrence.as_deref(), Some("2026-06-03T09:00:00Z"));
    drop(store);

    // The engine fires the 3rd day's reminder, not the 2nd's.
    let clock = Arc::new(ManualClock::new(at("2026-06-03T16:00:00Z")));
    let ch = Recorder::new();
    let mut e = engine(Store::open(&db).expect("open"), &clock, &ch);
    e.materialise().expect("materialise");
    assert_eq!(e.fire_due().await.expect("fire"), 1);
    assert!(
        ch.keys()[0].contains("/2026-06-03T09:00:00Z/"),
        "{:?}",
        ch.keys()
    );
}

#[test]
fn a_task_completed_in_a_new_version_of_the_file_stops_its_reminders() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut store = Store::open(dir.path().join("k.db")).expect("open");
    let t = at("2026-06-02T08:00:00Z");
    let utc = chrono_tz::UTC;
    let r = import(&mut store, "work", &cal(CONTRACT), t, H, utc).expect("import");
    assert_eq!(r.scheduled, 2);
    let keys: Vec<String> = store
        .due(DateTime::<Utc>::MAX_UTC, 10)
        .expect("due")
        .into_iter()
        .map(|i| i.key)
        .collect();
    // The first one is showing when the file says the task is done.
    assert!(
        store
            .transition(&keys[0], &[State::Pending], State::Firing, "due", t)
            .expect("t")
    );
    assert!(
        store
            .transition(&keys[0], &[State::Firing], State::Delivered, "shown", t)
            .expect("t")
    );
    // The second is being delivered (claimed, not yet recorded) right then.
    assert!(
        store
            .transition(&keys[1], &[State::Pending], State::Firing, "due", t)
            .expect("t")
    );
    let completed = CONTRACT.replace(
        "PRIORITY:1",
        "PRIORITY:1\nSTATUS:COMPLETED\nCOMPLETED:20260602T083000Z",
    );
    let r = import(&mut store, "work", &cal(&completed), t, H, utc).expect("again");
    assert_eq!((r.changed, r.scheduled), (1, 0));
    assert!(
        store
            .due(DateTime::<Utc>::MAX_UTC, 10)
            .expect("due")
            .is_empty()
    );
    assert_eq!(state(&store, &keys[0]), State::Acknowledged);
    assert_eq!(
        state(&store, &keys[1]),
        State::Acknowledged,
        "a delivery in flight is not recorded as delivered afterwards"
    );
    assert!(
        !store
            .transition(&keys[1], &[State::Firing], State::Delivered, "delivered", t)
            .expect("t"),
        "the engine's guarded transition finds it acknowledged"
    );
    // Reopened: what was acknowledged stays so (nothing rings twice).
    let r = import(&mut store, "work", &cal(CONTRACT), t, H, utc).expect("reopen");
    assert_eq!(r.changed, 1);
    assert!(
        store
            .due(DateTime::<Utc>::MAX_UTC, 10)
            .expect("due")
            .is_empty(),
        "both were acknowledged: reopening does not ring them again"
    );
}
