//! Editing an event after its instances exist: pending instances follow the
//! new schedule in the same transaction; delivered ones are never re-sent
//! when only text changed; deleting the alarm removes what was pending.

use crate::support::{cal, now};
use chrono::{DateTime, Duration, Utc};
use kairos_engine::import::import;
use kairos_store::{State, Store};

const EVENT: &str = "BEGIN:VEVENT\nUID:m\nSUMMARY:Meeting\nDTSTART:20260601T100000Z\nRRULE:FREQ=DAILY;COUNT=3\n\
                     BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT15M\nEND:VALARM\nEND:VEVENT";

fn pending(store: &Store) -> Vec<(String, DateTime<Utc>)> {
    store
        .due(DateTime::<Utc>::MAX_UTC, 100)
        .expect("due")
        .into_iter()
        .map(|i| (i.key, i.trigger_at))
        .collect()
}

#[test]
fn moving_an_event_replaces_its_pending_instances() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut store = Store::open(dir.path().join("k.db")).expect("open");
    let h = Duration::hours(72);
    let r = import(&mut store, "work", &cal(EVENT), now(), h, chrono_tz::UTC).expect("import");
    assert_eq!((r.changed, r.scheduled), (1, 3));
    let before = pending(&store);
    assert_eq!(before[0].1, now() + Duration::minutes(105));

    // Same file again: nothing changes.
    let r = import(&mut store, "work", &cal(EVENT), now(), h, chrono_tz::UTC).expect("again");
    assert_eq!((r.changed, r.dropped, r.scheduled), (0, 0, 0));
    assert_eq!(pending(&store), before);

    // Moved an hour later: three dropped, three new at the new times.
    let moved = EVENT.replace("T100000Z", "T110000Z");
    let r = import(&mut store, "work", &cal(&moved), now(), h, chrono_tz::UTC).expect("moved");
    assert_eq!((r.changed, r.dropped, r.scheduled), (1, 3, 3));
    let after = pending(&store);
    assert_eq!(after[0].1, now() + Duration::minutes(165));
    assert!(
        after
            .iter()
            .all(|(k, _)| !before.iter().any(|(b, _)| b == k)),
        "new keys"
    );
}

#[test]
fn a_text_edit_keeps_keys_so_delivered_reminders_are_not_sent_again() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut store = Store::open(dir.path().join("k.db")).expect("open");
    let h = Duration::hours(72);
    import(&mut store, "work", &cal(EVENT), now(), h, chrono_tz::UTC).expect("import");
    let first = pending(&store)[0].0.clone();
    // Deliver the first one by hand, as the engine would.
    assert!(
        store
            .transition(&first, &[State::Pending], State::Firing, "due", now())
            .expect("t")
    );
    assert!(
        store
            .transition(
                &first,
                &[State::Firing],
                State::Delivered,
                "delivered",
                now()
            )
            .expect("t")
    );
    let renamed = EVENT.replace("SUMMARY:Meeting", "SUMMARY:Planning meeting");
    let r = import(&mut store, "work", &cal(&renamed), now(), h, chrono_tz::UTC).expect("renamed");
    assert_eq!(r.changed, 1);
    assert_eq!(
        store.get(&first).expect("get").expect("kept").state,
        State::Delivered,
        "not pending again"
    );
    let keys: Vec<String> = pending(&store).into_iter().map(|(k, _)| k).collect();
    assert_eq!(
        keys.len(),
        2,
        "the two not yet delivered, recomputed: {keys:?}"
    );
    assert!(!keys.contains(&first));
}

#[test]
fn removing_the_alarm_removes_its_pending_instances() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut store = Store::open(dir.path().join("k.db")).expect("open");
    let h = Duration::hours(72);
    import(&mut store, "work", &cal(EVENT), now(), h, chrono_tz::UTC).expect("import");
    let silent = EVENT.replace(
        "BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT15M\nEND:VALARM\n",
        "",
    );
    let r = import(&mut store, "work", &cal(&silent), now(), h, chrono_tz::UTC).expect("silent");
    assert_eq!((r.dropped, r.scheduled), (3, 0));
    assert!(pending(&store).is_empty());
}

/// A database in `dir` whose zone is `zone` (`FLOATING_ZONE`), holding a
/// floating event at `start` with a reminder at its start, imported with
/// `horizon` and `--tz UTC`.
fn floating_pill(dir: &tempfile::TempDir, start: &str, zone: &str, horizon: Duration) -> Store {
    let mut store = Store::open(dir.path().join("k.db")).expect("open");
    store
        .meta_set(kairos_engine::engine::FLOATING_ZONE, zone)
        .expect("meta");
    let ev = format!(
        "BEGIN:VEVENT\nUID:pill\nSUMMARY:Pill\nDTSTART:{start}\n\
         BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:PT0S\nEND:VALARM\nEND:VEVENT"
    );
    import(
        &mut store,
        "home",
        &cal(&ev),
        now(),
        horizon,
        chrono_tz::UTC,
    )
    .expect("import");
    store
}

/// Floating times are planned in the zone the database names
/// (`FLOATING_ZONE`, set by the desktop app), not the engine's default.
#[test]
fn floating_times_follow_the_zone_the_database_names() {
    use std::sync::Arc;

    use kairos_engine::clock::ManualClock;
    use kairos_engine::engine::{Config, Engine};

    let dir = tempfile::tempdir().expect("tmp");
    // Stored, but beyond the import's one-hour horizon: the engine plans it.
    let store = floating_pill(&dir, "20260603T090000", "Europe/Berlin", Duration::hours(1));
    assert!(pending(&store).is_empty());
    let config = Config {
        floating: chrono_tz::UTC,
        horizon: Duration::hours(72),
        ..Config::default()
    };
    let mut engine = Engine::new(store, Arc::new(ManualClock::new(now())), Vec::new(), config);
    assert_eq!(engine.materialise().expect("materialise"), 1);
    let at = pending(engine.store());
    assert_eq!(
        at[0].1,
        DateTime::parse_from_rfc3339("2026-06-03T07:00:00Z").expect("t"),
        "09:00 in Berlin (summer time), not 09:00 UTC"
    );
}

/// An import (e.g. `kairos import --tz UTC`) into a database whose zone is
/// set plans floating times in that zone, like the engine: one alarm never
/// gets two keys from two zones.
#[test]
fn an_import_plans_floating_times_in_the_databases_zone() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = floating_pill(&dir, "20260601T200000", "Asia/Tokyo", Duration::hours(72));
    let at = pending(&store);
    assert_eq!(
        at[0].1,
        DateTime::parse_from_rfc3339("2026-06-01T11:00:00Z").expect("t"),
        "20:00 in Tokyo, not 20:00 UTC"
    );
}
