//! The engine's side of sync on two real databases, ops carried by hand (no
//! network): what one records, the other applies to the same rows; acks
//! only move forward; an ack that arrives before its event still wins.

use crate::support::{cal, now};
use chrono::{DateTime, Duration, Utc};
use kairos_engine::actions::{dismiss, snooze};
use kairos_engine::import::import;
use kairos_engine::sync::apply::apply_remote;
use kairos_engine::sync::{Identity, join};
use kairos_proto::Op;
use kairos_store::{State, Store};

const H: i64 = 48;

const EVENT: &str = "BEGIN:VEVENT\nUID:m\nSUMMARY:Meeting\nDTSTART:20260601T100000Z\n\
                     BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT15M\nEND:VALARM\nEND:VEVENT";

pub(crate) fn device(dir: &std::path::Path, name: &str) -> Store {
    let mut s = Store::open(dir.join(format!("{name}.db"))).expect("open");
    let id = Identity {
        server: "ws://127.0.0.1:1".into(),
        account: "alice".into(),
        device: format!("d_{name:0>16}"),
        token: "0".repeat(64),
    };
    join(&mut s, &id, now()).expect("join");
    s
}

/// Takes everything from `from`'s outbox.
pub(crate) fn drain(from: &mut Store) -> Vec<Op> {
    let rows = from.read(|r| r.outbox_peek(100_000)).expect("peek");
    let ids: Vec<String> = rows.iter().map(|r| r.op_id.clone()).collect();
    from.write(|tx| tx.outbox_remove(&ids)).expect("remove");
    rows.iter()
        .map(|r| serde_json::from_str(&r.op).expect("op"))
        .collect()
}

fn apply(to: &mut Store, ops: &[Op], at: DateTime<Utc>) -> kairos_engine::sync::apply::Applied {
    apply_remote(to, ops, None, at, Duration::hours(H), chrono_tz::UTC).expect("apply")
}

/// Devices A and B that both hold EVENT (imported on A, synced to B).
fn shared_event(dir: &std::path::Path) -> (Store, Store) {
    let (mut a, mut b) = (device(dir, "a"), device(dir, "b"));
    let h = Duration::hours(H);
    import(&mut a, "work", &cal(EVENT), now(), h, chrono_tz::UTC).expect("import");
    apply(&mut b, &drain(&mut a), now());
    (a, b)
}

fn pending(s: &Store) -> Vec<(String, DateTime<Utc>)> {
    s.due(DateTime::<Utc>::MAX_UTC, 100)
        .expect("due")
        .into_iter()
        .map(|i| (i.key, i.trigger_at))
        .collect()
}

#[test]
fn an_import_recorded_on_one_device_schedules_the_same_keys_on_the_other() {
    let dir = tempfile::tempdir().expect("tmp");
    let (mut a, mut b) = (device(dir.path(), "a"), device(dir.path(), "b"));
    import(
        &mut a,
        "work",
        &cal(EVENT),
        now(),
        Duration::hours(H),
        chrono_tz::UTC,
    )
    .expect("import");
    let ops = drain(&mut a);
    assert_eq!(ops.len(), 2, "calendar.put and series.put: {ops:?}");
    let r = apply(&mut b, &ops, now());
    assert_eq!((r.applied, r.ignored), (2, 0));
    assert_eq!(pending(&a), pending(&b));
    assert_eq!(pending(&b).len(), 1);
    // Replaying is harmless.
    let r = apply(&mut b, &ops, now());
    assert_eq!((r.applied, r.ignored), (0, 2));
    assert_eq!(pending(&a), pending(&b));
    // Nothing is recorded for sync by applying: B's outbox holds no echo.
    assert!(drain(&mut b).is_empty());
}

#[test]
fn a_dismissal_that_arrives_before_the_event_still_keeps_it_quiet() {
    let dir = tempfile::tempdir().expect("tmp");
    let (mut a, mut b) = (device(dir.path(), "a"), device(dir.path(), "b"));
    import(
        &mut a,
        "work",
        &cal(EVENT),
        now(),
        Duration::hours(H),
        chrono_tz::UTC,
    )
    .expect("import");
    let puts = drain(&mut a);
    let key = pending(&a)[0].0.clone();
    dismiss(&mut a, &key, now()).expect("dismiss");
    let acks = drain(&mut a);
    assert_eq!(acks.len(), 1);
    // B gets the dismissal first, then the event.
    apply(&mut b, &acks, now());
    apply(&mut b, &puts, now());
    assert!(pending(&b).is_empty(), "{:?}", pending(&b));
    assert_eq!(
        b.get(&key).expect("get").expect("row").state,
        State::Acknowledged
    );
}

#[test]
fn a_reminder_shown_here_and_dismissed_elsewhere_is_withdrawn_and_a_dismissal_is_final() {
    let dir = tempfile::tempdir().expect("tmp");
    let (mut a, mut b) = shared_event(dir.path());
    let key = pending(&b)[0].0.clone();
    // B showed it.
    b.transition(
        &key,
        &[State::Pending],
        State::Delivered,
        "test: shown",
        now(),
    )
    .expect("shown");
    // A snoozes (older stamp) and later dismisses; B gets them in reverse.
    let later = now() + Duration::minutes(1);
    snooze(&mut a, &key, Duration::minutes(10), now()).expect("snooze");
    let snoozed = drain(&mut a);
    dismiss(&mut a, &format!("{key}~snooze@20260601T081000Z"), later).expect("dismiss");
    let dismissed = drain(&mut a);
    let r = apply(&mut b, &dismissed, later);
    assert_eq!(r.withdrawals.len(), 1, "{:?}", r.withdrawals);
    assert_eq!(r.withdrawals[0].key, key);
    assert_eq!(r.withdrawals[0].by, "d_000000000000000a");
    let r = apply(&mut b, &snoozed, later);
    assert!(r.withdrawals.is_empty());
    assert!(
        pending(&b).is_empty(),
        "the older snooze does not revive it: {:?}",
        pending(&b)
    );
    assert!(pending(&a).is_empty());
}

#[test]
fn two_devices_snoozing_at_once_end_with_one_snooze_on_both() {
    let dir = tempfile::tempdir().expect("tmp");
    let (mut a, mut b) = shared_event(dir.path());
    let key = pending(&a)[0].0.clone();
    let (ka, _) = snooze(&mut a, &key, Duration::minutes(5), now()).expect("a");
    let (kb, _) = snooze(
        &mut b,
        &key,
        Duration::minutes(10),
        now() + Duration::seconds(1),
    )
    .expect("b");
    let (from_a, from_b) = (drain(&mut a), drain(&mut b));
    apply(&mut a, &from_b, now());
    apply(&mut b, &from_a, now());
    assert_eq!(pending(&a), pending(&b), "converged");
    let left = pending(&a);
    assert_eq!(left.len(), 1, "one snooze, not two: {left:?}");
    assert_eq!(left[0].0, kb, "the later stamp wins");
    assert_ne!(ka, kb);
}

#[test]
fn concurrent_edits_converge_the_loser_is_logged_and_a_based_edit_is_no_conflict() {
    let dir = tempfile::tempdir().expect("tmp");
    let (mut a, mut b) = (device(dir.path(), "a"), device(dir.path(), "b"));
    let h = Duration::hours(H);
    import(&mut a, "work", &cal(EVENT), now(), h, chrono_tz::UTC).expect("import");
    apply(&mut b, &drain(&mut a), now());
    // Concurrent: both edit the version they share.
    let at = |t: &str| cal(&EVENT.replace("T100000Z", t));
    import(
        &mut a,
        "work",
        &at("T110000Z"),
        now() + Duration::seconds(1),
        h,
        chrono_tz::UTC,
    )
    .expect("a edits");
    import(
        &mut b,
        "work",
        &at("T120000Z"),
        now() + Duration::seconds(2),
        h,
        chrono_tz::UTC,
    )
    .expect("b edits");
    let (from_a, from_b) = (drain(&mut a), drain(&mut b));
    apply(&mut a, &from_b, now());
    apply(&mut b, &from_a, now());
    assert_eq!(pending(&a), pending(&b));
    assert_eq!(
        pending(&a)[0].1,
        now() + Duration::minutes(225),
        "B's (later) edit won"
    );
    for s in [&a, &b] {
        let notes: Vec<String> = s
            .audit_since(DateTime::<Utc>::MIN_UTC, 1000)
            .expect("audit")
            .into_iter()
            .filter(|r| r.reason.contains("lost to"))
            .map(|r| r.reason)
            .collect();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].starts_with("edit from d_000000000000000a lost to d_000000000000000b"));
    }
    // A edits on top of B's version: an ordinary edit, no new note.
    import(
        &mut a,
        "work",
        &at("T130000Z"),
        now() + Duration::seconds(3),
        h,
        chrono_tz::UTC,
    )
    .expect("a again");
    apply(&mut b, &drain(&mut a), now());
    assert_eq!(pending(&a), pending(&b));
    let notes = b
        .audit_since(DateTime::<Utc>::MIN_UTC, 1000)
        .expect("audit")
        .into_iter()
        .filter(|r| r.reason.contains("lost to"))
        .count();
    assert_eq!(notes, 1);
}

#[test]
fn dismissing_a_snooze_acknowledges_the_snooze_and_leaves_the_original_snoozed() {
    let dir = tempfile::tempdir().expect("tmp");
    let (mut a, _b) = shared_event(dir.path());
    let key = pending(&a)[0].0.clone();
    let (snoozed, _) = snooze(&mut a, &key, Duration::minutes(5), now()).expect("snooze");
    dismiss(&mut a, &snoozed, now()).expect("dismiss");
    let state = |k: &str| a.get(k).expect("get").expect("row").state;
    assert_eq!(state(&key), State::Snoozed);
    assert_eq!(state(&snoozed), State::Acknowledged);
}
