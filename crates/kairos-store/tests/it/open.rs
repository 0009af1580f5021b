//! Opening: the schema appears once, survives reopening, and concurrent
//! first opens do not trip over each other.

use std::sync::{Arc, Barrier};

use kairos_store::{APPLICATION_ID, ErrorKind, SCHEMA_VERSION, Store};

use crate::support::{inst, raw, store_with_calendar, t, temp_db};

fn schema_sql(path: &std::path::Path) -> Vec<String> {
    let conn = raw(path);
    let mut stmt = conn
        .prepare("SELECT name || ': ' || ifnull(sql, '') FROM sqlite_schema ORDER BY name")
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn a_fresh_file_gets_the_schema_in_wal_mode() {
    let (_dir, path) = temp_db();
    drop(Store::open(&path).unwrap());

    let conn = raw(&path);
    let version: u32 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
    let app: i32 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .unwrap();
    assert_eq!(app, APPLICATION_ID);
    // WAL is a property of the file: it persists after the store closed.
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let tables = schema_sql(&path).join("\n");
    for table in [
        "calendars",
        "events",
        "instances",
        "deliveries",
        "audit",
        "meta",
    ] {
        assert!(
            tables.contains(&format!("{table}: CREATE TABLE")),
            "{table}"
        );
    }
    assert!(tables.contains("deliveries_once: CREATE UNIQUE INDEX"));
}

#[test]
fn foreign_keys_are_enforced() {
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    let err = store
        .put_event(
            kairos_store::CalendarId(999),
            "x",
            "",
            "BEGIN:VEVENT",
            1,
            t(0),
        )
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
    assert!(err.to_string().contains("calendar 999"), "{err}");
}

#[test]
fn reopening_applies_nothing_and_keeps_data() {
    let (_dir, path) = temp_db();
    let (mut store, cal) = store_with_calendar(&path);
    store
        .put_event(
            cal,
            "standup",
            "",
            "BEGIN:VEVENT\r\nEND:VEVENT\r\n",
            1,
            t(0),
        )
        .unwrap();
    store
        .insert_instances(&[inst(cal, "standup", "o1", t(15))], t(0))
        .unwrap();
    drop(store);
    let schema = schema_sql(&path);

    for _ in 0..3 {
        let store = Store::open(&path).unwrap();
        assert_eq!(store.events_of(cal).unwrap().len(), 1);
        assert_eq!(store.due(t(15), 10).unwrap().len(), 1);
        assert_eq!(store.calendars().unwrap()[0].name, "work");
    }
    assert_eq!(
        schema_sql(&path),
        schema,
        "a reopen must not change the schema"
    );
}

/// Regression: openers racing on a fresh file used to fail with "not a
/// Kairos database" (schema read between two statements) or an immediate
/// SQLITE_BUSY from the switch to WAL.
#[test]
fn concurrent_first_opens_of_one_file_all_succeed() {
    let (dir, _) = temp_db();
    let n = 6;
    for round in 0..20 {
        let path = dir.path().join(format!("race{round}.db"));
        let barrier = Arc::new(Barrier::new(n));
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let (path, barrier) = (path.clone(), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    barrier.wait();
                    let mut store = Store::open(&path).unwrap();
                    store.ensure_calendar(&format!("cal{i}"), t(0)).unwrap();
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let store = Store::open(&path).unwrap();
        assert_eq!(store.calendars().unwrap().len(), n);
    }
}

#[test]
fn a_missing_directory_says_so() {
    let (dir, _) = temp_db();
    let err = Store::open(dir.path().join("no/such/dir/kairos.db")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Other);
    assert!(err.to_string().contains("directory exists"), "{err}");
}
