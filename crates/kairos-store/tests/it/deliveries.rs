//! At most one successful delivery per instance and channel.

use kairos_store::{ErrorKind, Outcome, Recorded, State};

use crate::support::{inst, raw, store_with_calendar, t, temp_db};

#[test]
fn a_second_successful_delivery_is_refused_with_a_typed_result() {
    let (_dir, path) = temp_db();
    let (mut store, cal) = store_with_calendar(&path);
    let i = inst(cal, "e", "o1", t(10));
    store
        .insert_instances(std::slice::from_ref(&i), t(0))
        .unwrap();
    let k = &i.key;

    let failed = store
        .record_delivery(
            k,
            "notify",
            Outcome::Retryable,
            Some("D-Bus timeout"),
            None,
            t(10),
        )
        .unwrap();
    assert_eq!(failed, Recorded::Recorded);
    let ok = store.record_delivery(k, "notify", Outcome::Delivered, None, Some(40), t(10));
    assert_eq!(ok.unwrap(), Recorded::Recorded);
    let dup = store.record_delivery(k, "notify", Outcome::Delivered, None, Some(5), t(11));
    assert_eq!(dup.unwrap(), Recorded::AlreadyDelivered);
    // Another channel is another delivery; failures may repeat.
    let other = store.record_delivery(k, "stdout", Outcome::Delivered, None, None, t(11));
    assert_eq!(other.unwrap(), Recorded::Recorded);
    let again = store.record_delivery(k, "notify", Outcome::Unknown, Some("?"), None, t(12));
    assert_eq!(again.unwrap(), Recorded::Recorded);

    let outcomes: Vec<_> = store
        .deliveries_of(k)
        .unwrap()
        .into_iter()
        .map(|d| (d.channel, d.outcome))
        .collect();
    assert_eq!(
        outcomes,
        [
            ("notify".to_owned(), Outcome::Retryable),
            ("notify".to_owned(), Outcome::Delivered),
            ("stdout".to_owned(), Outcome::Delivered),
            ("notify".to_owned(), Outcome::Unknown),
        ]
    );
    let trail = store.audit_of(k).unwrap();
    let reasons: Vec<&str> = trail.iter().map(|a| a.reason.as_str()).collect();
    assert_eq!(
        reasons,
        [
            "scheduled (rule version 1)",
            "delivery via notify failed (retryable): D-Bus timeout",
            "delivered via notify",
            "duplicate delivery via notify refused: already delivered there",
            "delivered via stdout",
            "delivery via notify failed (unknown): ?",
        ]
    );
    let d = &trail[2];
    assert_eq!((d.from, d.to), (Some(State::Pending), Some(State::Pending)));
    assert_eq!(
        (d.channel.as_deref(), d.latency_ms),
        (Some("notify"), Some(40))
    );
}

#[test]
fn the_database_itself_refuses_a_second_successful_delivery() {
    let (_dir, path) = temp_db();
    let (mut store, cal) = store_with_calendar(&path);
    store
        .insert_instances(&[inst(cal, "e", "o1", t(10))], t(0))
        .unwrap();
    drop(store);

    // Bypass the store: the unique index, not our Rust code, is the guard.
    let conn = raw(&path);
    let insert = "INSERT INTO deliveries (instance_id, channel, outcome, at)
                  SELECT id, 'notify', 'delivered', 0 FROM instances";
    conn.execute(insert, []).unwrap();
    let err = conn.execute(insert, []).unwrap_err();
    assert_eq!(
        err.sqlite_error().map(|e| e.extended_code),
        Some(rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("deliveries.instance_id, deliveries.channel"),
        "{err}"
    );
}

#[test]
fn recording_a_delivery_of_an_unknown_instance_is_not_found() {
    let (_dir, path) = temp_db();
    let (mut store, _) = store_with_calendar(&path);
    let err = store
        .record_delivery(
            "no/such/key",
            "notify",
            Outcome::Delivered,
            None,
            None,
            t(0),
        )
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
    assert!(err.to_string().contains("no/such/key"), "{err}");
}
