//! Working time per calendar (schema 0006): defaults, settings, an in-place
//! upgrade of a version-5 database, and moving a pending instance.

use kairos_store::{ErrorKind, State, Store};

use super::support::{inst, raw, store_with_calendar, t, temp_db};

#[test]
fn calendars_start_monday_to_friday_and_not_holidays_and_keep_what_is_set() {
    let (_dir, path) = temp_db();
    let (mut store, cal) = store_with_calendar(&path);
    let w = &store.work_settings().unwrap()[0];
    assert_eq!(
        (w.id, w.name.as_str(), w.week, w.holidays),
        (cal, "work", 31, false)
    );
    assert!(
        store
            .write(|tx| tx.set_work_settings(cal, 0b100_1111, true))
            .unwrap()
    );
    let w = &Store::open(&path).unwrap().work_settings().unwrap()[0];
    assert_eq!((w.week, w.holidays), (0b100_1111, true));
    // An empty week is refused by the schema, and nothing changes.
    let err = store
        .write(|tx| tx.set_work_settings(cal, 0, false))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Other, "{err}");
    assert_eq!(store.work_settings().unwrap()[0].week, 0b100_1111);
}

#[test]
fn a_version_5_database_upgrades_in_place_with_the_defaults() {
    let (_dir, path) = temp_db();
    {
        let c = raw(&path);
        for m in [
            include_str!("../../../../migrations/0001_init.sql"),
            include_str!("../../../../migrations/0002_calendar_settings.sql"),
            include_str!("../../../../migrations/0003_lean_transitions.sql"),
            include_str!("../../../../migrations/0004_calendar_uid.sql"),
            include_str!("../../../../migrations/0005_sync.sql"),
        ] {
            c.execute_batch(m).unwrap();
        }
        c.execute_batch(
            "PRAGMA user_version = 5;
             INSERT INTO calendars (id, name, color, created_at, uid)
             VALUES (1, 'feiertage', NULL, 0, '00112233445566778899aabbccddeeff');",
        )
        .unwrap();
    }
    let store = Store::open(&path).unwrap();
    let w = &store.work_settings().unwrap()[0];
    assert_eq!(
        (w.name.as_str(), w.uid.as_str(), w.week, w.holidays),
        ("feiertage", "00112233445566778899aabbccddeeff", 31, false)
    );
}

#[test]
fn moving_a_pending_instance_keeps_its_key_and_leaves_delivered_ones_alone() {
    let (_dir, path) = temp_db();
    let (mut store, cal) = store_with_calendar(&path);
    let a = inst(cal, "a", "o", t(60));
    let b = inst(cal, "b", "o", t(60));
    store
        .insert_instances(&[a.clone(), b.clone()], t(0))
        .unwrap();
    store
        .transition(&b.key, &[State::Pending], State::Delivered, "test", t(1))
        .unwrap();
    let moved = store
        .write(|tx| {
            Ok::<_, kairos_store::StoreError>((
                tx.move_pending(&a.key, t(30), "holidays changed", t(2))?,
                tx.move_pending(&a.key, t(30), "holidays changed", t(2))?,
                tx.move_pending(&b.key, t(30), "holidays changed", t(2))?,
            ))
        })
        .unwrap();
    assert_eq!(moved, (true, false, false));
    assert_eq!(store.get(&a.key).unwrap().unwrap().trigger_at, t(30));
    assert_eq!(store.get(&b.key).unwrap().unwrap().trigger_at, t(60));
    let audit = store.audit_of(&a.key).unwrap();
    assert!(
        audit
            .iter()
            .any(|r| r.reason.starts_with("holidays changed: now due"))
    );
    assert!(
        store
            .write(|tx| tx.delete_pending(&a.key, "gone", t(3)))
            .unwrap()
    );
    assert!(
        !store
            .write(|tx| tx.delete_pending(&b.key, "gone", t(3)))
            .unwrap()
    );
    assert!(store.get(&a.key).unwrap().is_none());
}
