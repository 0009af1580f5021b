//! The engine's set-based calls keep the guarantees of the one-at-a-time
//! ones: guarded, audited in the same transaction, one successful delivery
//! per instance and channel; and migration 0003 keeps every row.

use kairos_store::{Delivered, ErrorKind, Outcome, Recorded, State, Store};

use crate::support::{inst, raw, store_with_calendar, t, temp_db};

fn delivered<'a>(key: &'a str, channel: &'a str) -> Delivered<'a> {
    Delivered {
        key,
        channel,
        latency_ms: 7,
        at: t(11),
        from: State::Firing,
        to: State::Delivered,
        reason: "delivered on_time",
    }
}

#[test]
fn transition_many_moves_only_what_the_guard_allows_and_audits_each() {
    let (_dir, path) = temp_db();
    let (mut store, cal) = store_with_calendar(&path);
    let new: Vec<_> = (0..4)
        .map(|i| inst(cal, &format!("e{i}"), "o", t(10)))
        .collect();
    store.insert_instances(&new, t(0)).unwrap();
    let keys: Vec<&str> = new.iter().map(|i| i.key.as_str()).collect();
    // One is already delivered: the guard must leave it alone.
    store
        .transition(keys[3], &[State::Pending], State::Delivered, "x", t(1))
        .unwrap();
    let mut all = keys.clone();
    all.push("no/such/key");
    let moved = store
        .write(|tx| tx.transition_many(&all, &[State::Pending], State::Firing, "due", t(10)))
        .unwrap();
    let mut moved = moved;
    moved.sort();
    assert_eq!(moved, keys[..3]);
    for k in &keys[..3] {
        let i = store.get(k).unwrap().unwrap();
        assert_eq!((i.state, i.attempts), (State::Firing, 1));
        let last = store.audit_of(k).unwrap().pop().unwrap();
        assert_eq!(
            (last.from, last.to, last.reason.as_str()),
            (Some(State::Pending), Some(State::Firing), "due")
        );
    }
    assert_eq!(store.get(keys[3]).unwrap().unwrap().state, State::Delivered);
    assert_eq!(
        store.audit_of(keys[3]).unwrap().len(),
        2,
        "no row for a refused move"
    );
    // A second engine's claim of the same keys wins nothing.
    let again = store
        .write(|tx| tx.transition_many(&keys, &[State::Pending], State::Firing, "due", t(10)))
        .unwrap();
    assert!(again.is_empty());
}

#[test]
fn record_delivered_records_settles_and_audits_once_per_reminder() {
    let (_dir, path) = temp_db();
    let (mut store, cal) = store_with_calendar(&path);
    let new: Vec<_> = (0..3)
        .map(|i| inst(cal, &format!("e{i}"), "o", t(10)))
        .collect();
    store.insert_instances(&new, t(0)).unwrap();
    let keys: Vec<&str> = new.iter().map(|i| i.key.as_str()).collect();
    store
        .write(|tx| tx.transition_many(&keys, &[State::Pending], State::Firing, "due", t(10)))
        .unwrap();
    let items: Vec<_> = keys.iter().map(|k| delivered(k, "stdout")).collect();
    let got = store.write(|tx| tx.record_delivered(&items)).unwrap();
    assert_eq!(got, [Recorded::Recorded; 3]);
    for k in &keys {
        assert_eq!(store.get(k).unwrap().unwrap().state, State::Delivered);
        let d = store.deliveries_of(k).unwrap();
        assert_eq!(d.len(), 1);
        assert_eq!(
            (d[0].outcome, d[0].latency_ms),
            (Outcome::Delivered, Some(7))
        );
        let trail = store.audit_of(k).unwrap();
        let reasons: Vec<_> = trail.iter().map(|a| a.reason.as_str()).collect();
        assert_eq!(
            reasons,
            ["scheduled (rule version 1)", "due", "delivered on_time"]
        );
        let last = trail.last().unwrap();
        assert_eq!(
            (last.from, last.to, last.channel.as_deref(), last.latency_ms),
            (
                Some(State::Firing),
                Some(State::Delivered),
                Some("stdout"),
                Some(7)
            )
        );
    }
}

#[test]
fn record_delivered_falls_back_exactly_when_a_duplicate_is_refused() {
    let (_dir, path) = temp_db();
    let (mut store, cal) = store_with_calendar(&path);
    let new: Vec<_> = (0..2)
        .map(|i| inst(cal, &format!("e{i}"), "o", t(10)))
        .collect();
    store.insert_instances(&new, t(0)).unwrap();
    let keys: Vec<&str> = new.iter().map(|i| i.key.as_str()).collect();
    store
        .write(|tx| tx.transition_many(&keys, &[State::Pending], State::Firing, "due", t(10)))
        .unwrap();
    // keys[0] was already shown on this channel (e.g. by another engine).
    let first = store
        .record_delivery(keys[0], "stdout", Outcome::Delivered, None, None, t(10))
        .unwrap();
    assert_eq!(first, Recorded::Recorded);
    let items: Vec<_> = keys.iter().map(|k| delivered(k, "stdout")).collect();
    let got = store.write(|tx| tx.record_delivered(&items)).unwrap();
    assert_eq!(got, [Recorded::AlreadyDelivered, Recorded::Recorded]);
    assert_eq!(store.deliveries_of(keys[0]).unwrap().len(), 1, "not twice");
    assert!(store.audit_of(keys[0]).unwrap().iter().any(|a| {
        a.reason
            .starts_with("duplicate delivery via stdout refused")
    }));
    for k in &keys {
        assert_eq!(store.get(k).unwrap().unwrap().state, State::Delivered);
    }
    // An unknown key is an error, and nothing of the batch is kept.
    let err = store
        .write(|tx| tx.record_delivered(&[delivered("nope", "stdout")]))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
}

#[test]
fn migration_0003_keeps_rows_ids_and_the_once_only_index() {
    let (_dir, path) = temp_db();
    {
        // A version-1 database, as the first release wrote it.
        let c = raw(&path);
        c.execute_batch(include_str!("../../../../migrations/0001_init.sql"))
            .unwrap();
        c.execute_batch(
            "PRAGMA user_version = 1;
             INSERT INTO calendars VALUES (1, 'work', NULL, 0);
             INSERT INTO instances (id, key, calendar_id, event_uid, occurrence, alarm,
                 repetition, rule_version, trigger_at, state, attempts, payload, updated_at)
             VALUES (41, 'k', 1, 'e', 'o', '#0', 0, 1, 5, 'delivered', 1, '{}', 6);
             INSERT INTO deliveries (id, instance_id, channel, outcome, latency_ms, at)
             VALUES (9, 41, 'stdout', 'delivered', 3, 6);",
        )
        .unwrap();
    }
    let mut store = Store::open(&path).unwrap();
    let i = store.get("k").unwrap().unwrap();
    assert_eq!((i.state, i.attempts), (State::Delivered, 1));
    assert_eq!(store.deliveries_of("k").unwrap().len(), 1);
    let dup = store
        .record_delivery("k", "stdout", Outcome::Delivered, None, None, t(1))
        .unwrap();
    assert_eq!(dup, Recorded::AlreadyDelivered, "the unique index survived");
    let id: i64 = raw(&path)
        .query_row("SELECT instance_id FROM deliveries WHERE id = 9", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(id, 41);
    // The CHECKs still refuse what they refused.
    let bad = raw(&path).execute("UPDATE instances SET state = 'bogus'", []);
    assert!(bad.is_err());
}

#[test]
fn a_wal_sync_exists_for_files_only() {
    let (_dir, path) = temp_db();
    let (store, _) = store_with_calendar(&path);
    let sync = store.wal_sync().unwrap().expect("a file has a log");
    sync.sync().unwrap();
    sync.checkpoint().unwrap();
    assert!(
        Store::open_in_memory()
            .unwrap()
            .wal_sync()
            .unwrap()
            .is_none()
    );
}
