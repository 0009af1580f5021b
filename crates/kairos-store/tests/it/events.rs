//! Calendars, events and meta: upserts that report change.

use kairos_store::{Form, Store, StoreError};

use crate::support::{store_with_calendar, t, temp_db};

#[test]
fn ensure_calendar_is_idempotent() {
    let (_dir, path) = temp_db();
    let (mut store, work) = store_with_calendar(&path);
    assert_eq!(store.ensure_calendar("work", t(5)).unwrap(), work);
    let home = store.ensure_calendar("home", t(5)).unwrap();
    assert_ne!(home, work);
    let cals: Vec<_> = store
        .calendars()
        .unwrap()
        .into_iter()
        .map(|c| (c.name, c.created_at))
        .collect();
    assert_eq!(cals, [("home".to_owned(), t(5)), ("work".to_owned(), t(0))]);
}

#[test]
fn put_event_reports_whether_anything_changed() {
    let (_dir, path) = temp_db();
    let (mut store, cal) = store_with_calendar(&path);
    assert!(store.put_event(cal, "e", "", "V1", 1, t(0)).unwrap());
    assert!(
        !store.put_event(cal, "e", "", "V1", 1, t(1)).unwrap(),
        "same text and version"
    );
    assert_eq!(
        store.get_event(cal, "e", "").unwrap().unwrap().updated_at,
        t(0)
    );
    assert!(
        store
            .put_event(cal, "e", "", "V1 + summary", 1, t(2))
            .unwrap()
    );
    assert!(
        store
            .put_event(cal, "e", "", "V1 + summary", 2, t(3))
            .unwrap()
    );
    let e = store.get_event(cal, "e", "").unwrap().unwrap();
    assert_eq!(
        (e.body.as_str(), e.rule_version, e.updated_at),
        ("V1 + summary", 2, t(3))
    );

    // An override is its own row; the series is deleted as a whole.
    assert!(
        store
            .put_event(cal, "e", "20260324T090000Z", "OV", 2, t(4))
            .unwrap()
    );
    let home = store.ensure_calendar("home", t(0)).unwrap();
    assert!(store.put_event(home, "e", "", "HOME", 1, t(4)).unwrap());
    let rids: Vec<_> = store
        .events_of(cal)
        .unwrap()
        .into_iter()
        .map(|e| e.recurrence_id)
        .collect();
    assert_eq!(rids, ["", "20260324T090000Z"]);
    assert_eq!(store.all_events().unwrap().len(), 3);

    assert_eq!(
        store
            .delete_event(cal, "e", Some("20260324T090000Z"))
            .unwrap(),
        1
    );
    assert_eq!(
        store
            .delete_event(cal, "e", Some("20260324T090000Z"))
            .unwrap(),
        0
    );
    assert!(
        store
            .put_event(cal, "e", "20260325T090000Z", "OV2", 2, t(5))
            .unwrap()
    );
    assert_eq!(store.delete_event(cal, "e", None).unwrap(), 2);
    assert!(store.events_of(cal).unwrap().is_empty());
    assert_eq!(
        store.events_of(home).unwrap().len(),
        1,
        "other calendar untouched"
    );
}

#[test]
fn meta_values_round_trip_and_persist() {
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    assert_eq!(store.meta_get("device.id").unwrap(), None);
    store.meta_set("device.id", "laptop").unwrap();
    store.meta_set("device.id", "desktop").unwrap();
    drop(store);
    let store = Store::open(&path).unwrap();
    assert_eq!(
        store.meta_get("device.id").unwrap().as_deref(),
        Some("desktop")
    );
}

#[test]
fn read_sees_one_snapshot_and_check_passes_on_a_healthy_file() {
    let (_dir, path) = temp_db();
    let (mut store, cal) = store_with_calendar(&path);
    store.put_event(cal, "e", "", "V1", 1, t(0)).unwrap();
    let (cals, events) = store
        .read(|r| Ok::<_, StoreError>((r.calendars()?, r.events_of(cal)?)))
        .unwrap();
    assert_eq!((cals.len(), events.len()), (1, 1));
    store.check().unwrap();
}

#[test]
fn an_unsynced_write_commits_and_rolls_back_like_any_other() {
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).expect("open");
    store
        .write_unsynced(|tx| tx.meta_set("k", "v"))
        .expect("committed");
    let other = Store::open(&path).expect("second connection");
    assert_eq!(
        other.meta_get("k").expect("read").as_deref(),
        Some("v"),
        "visible to others"
    );
    let err = store.write_unsynced(|tx| -> Result<(), StoreError> {
        tx.meta_set("k", "changed")?;
        Err(StoreError::Unsupported {
            path: "test".into(),
            detail: "test".into(),
        })
    });
    assert!(err.is_err());
    assert_eq!(
        other.meta_get("k").expect("read").as_deref(),
        Some("v"),
        "rolled back"
    );
    // And the next ordinary write still works (synchronous restored).
    store
        .write(|tx| tx.meta_set("k", "w"))
        .expect("durable write");
    assert_eq!(other.meta_get("k").expect("read").as_deref(), Some("w"));
}

#[test]
fn migration_0009_keeps_old_event_text_as_ics_rows_until_converted() {
    let (_dir, path) = temp_db();
    {
        // A version-8 database with one event, as Kairos wrote it before.
        let c = crate::support::raw(&path);
        for sql in [
            include_str!("../../../../migrations/0001_init.sql"),
            include_str!("../../../../migrations/0002_calendar_settings.sql"),
            include_str!("../../../../migrations/0003_lean_transitions.sql"),
            include_str!("../../../../migrations/0004_calendar_uid.sql"),
            include_str!("../../../../migrations/0005_sync.sql"),
            include_str!("../../../../migrations/0006_worktime.sql"),
            include_str!("../../../../migrations/0007_subscriptions.sql"),
            include_str!("../../../../migrations/0008_caldav.sql"),
        ] {
            c.execute_batch(sql).unwrap();
        }
        c.execute_batch(
            "PRAGMA user_version = 8;
             INSERT INTO calendars (id, uid, name, created_at) VALUES (1, 'cu', 'work', 0);
             INSERT INTO events (calendar_id, uid, recurrence_id, ics, rule_version, updated_at)
             VALUES (1, 'e', '', 'BEGIN:VEVENT\r\nUID:e\r\nEND:VEVENT', 7, 5);",
        )
        .unwrap();
    }
    let mut store = Store::open(&path).unwrap();
    let cal = kairos_store::CalendarId(1);
    let old = store.read(|r| r.legacy_events()).unwrap();
    assert_eq!(old.len(), 1);
    assert_eq!(
        (old[0].form, old[0].body.as_str(), old[0].rule_version),
        (Form::Ics, "BEGIN:VEVENT\r\nUID:e\r\nEND:VEVENT", 7)
    );
    assert!(
        store
            .write(|tx| tx.convert_event(cal, "e", "", "T"))
            .unwrap()
    );
    assert!(
        !store
            .write(|tx| tx.convert_event(cal, "e", "", "T2"))
            .unwrap(),
        "only an ics row is converted"
    );
    let e = store.get_event(cal, "e", "").unwrap().unwrap();
    assert_eq!(
        (e.form, e.body.as_str(), e.rule_version, e.updated_at),
        (Form::Typed, "T", 7, old[0].updated_at),
        "conversion keeps the version and the time of the last change"
    );
    assert!(store.read(|r| r.legacy_events()).unwrap().is_empty());
    assert!(
        !store.put_event(cal, "e", "", "T", 7, t(9)).unwrap(),
        "the converted row is what a write of the same form would store"
    );
}

/// `events_of_in_runs` hands over exactly `events_of`'s rows, in order, cut
/// at the first UID boundary once a run holds `size` rows (never inside a
/// series), only this calendar's; an error from the callback stops the read.
#[test]
fn events_of_in_runs_streams_whole_series_in_order() {
    let (_dir, path) = temp_db();
    let (mut store, cal) = store_with_calendar(&path);
    let other = store.ensure_calendar("other", t(0)).unwrap();
    // Series of 1 to 4 components (master + overrides), so cuts fall
    // both on and inside series.
    for i in 0..12 {
        let uid = format!("u{i:02}");
        store
            .put_event(cal, &uid, "", &format!("M{i}"), 1, t(1))
            .unwrap();
        for o in 0..i % 4 {
            let rid = format!("2026032{o}T090000Z");
            store
                .put_event(cal, &uid, &rid, &format!("O{i}.{o}"), 1, t(1))
                .unwrap();
        }
        store
            .put_event(other, &uid, "", "elsewhere", 1, t(1))
            .unwrap();
    }
    let key =
        |e: &kairos_store::StoredEvent| (e.uid.clone(), e.recurrence_id.clone(), e.body.clone());
    let all: Vec<_> = store.events_of(cal).unwrap().iter().map(key).collect();
    assert_eq!(all.len(), 12 + (0..12).map(|i| i % 4).sum::<usize>());
    for size in 0..=all.len() + 1 {
        let mut runs: Vec<Vec<(String, String, String)>> = Vec::new();
        store
            .events_of_in_runs(cal, size, |run| {
                runs.push(run.iter().map(key).collect());
                Ok::<_, StoreError>(())
            })
            .unwrap();
        assert_eq!(runs.concat(), all, "size {size}: not the same rows");
        for (n, run) in runs.iter().enumerate() {
            assert!(!run.is_empty(), "size {size}: an empty run");
            let last_uid = &run.last().unwrap().0;
            let before_last_series = run.iter().take_while(|r| &r.0 != last_uid).count();
            assert!(
                before_last_series < size.max(1),
                "size {size}: run {n} ({} rows) was not cut at the first boundary",
                run.len()
            );
            if n + 1 < runs.len() {
                assert!(run.len() >= size.max(1), "size {size}: run {n} cut short");
                assert_ne!(&runs[n + 1][0].0, last_uid, "size {size}: a series split");
            }
        }
    }
    // The callback's error comes back, and no run is read after it.
    enum Stop {
        Here,
        Store(StoreError),
    }
    impl From<StoreError> for Stop {
        fn from(e: StoreError) -> Self {
            Stop::Store(e)
        }
    }
    let mut calls = 0;
    let err = store
        .events_of_in_runs(cal, 2, |_| {
            calls += 1;
            Err(Stop::Here)
        })
        .unwrap_err();
    assert_eq!(calls, 1);
    match err {
        Stop::Here => {}
        Stop::Store(e) => panic!("a store error instead of the callback's: {e}"),
    }
}
