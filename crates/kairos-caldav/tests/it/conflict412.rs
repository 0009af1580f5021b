//! `412 Precondition Failed` on Kairos's conditional writes: another client
//! changes the object on the server between Kairos's read and its `PUT`
//! (a relay the test owns makes that edit just before it forwards the
//! `PUT`). An edit here is then a conflict, resolved by last writer wins
//! with the loser in `kairos log`; an acknowledgement is re-applied on the
//! server's fresh copy, with no conflict.

use chrono::{Duration, TimeZone, Utc};
use kairos_store::State;

use crate::relay::relay;
use crate::{Fx, edit_here, event, log, t0};

#[test]
fn a_412_on_an_edit_refetches_and_the_later_version_wins_with_the_loser_logged() {
    let mut fx = Fx::new();
    let p = fx.path;
    for (uid, start) in [("a", "20260301T100000Z"), ("b", "20260301T120000Z")] {
        fx.rad.put(
            &format!("{p}{uid}.ics"),
            &event(uid, start, &uid.to_uppercase(), "20260101T000000Z"),
        );
    }
    // Another client's edits, made while Kairos syncs: `a` at 09:00 (later
    // than Kairos's 08:01 edit), `b` at 07:00 (earlier).
    let r = relay(
        fx.rad.port,
        &[
            (
                format!("{p}a.ics"),
                event(
                    "a",
                    "20260301T100000Z",
                    "A edited there",
                    "20260301T090000Z",
                ),
            ),
            (
                format!("{p}b.ics"),
                event(
                    "b",
                    "20260301T120000Z",
                    "B edited there",
                    "20260301T070000Z",
                ),
            ),
        ],
    );
    fx.add_at(&r.url);
    fx.sync(t0());
    let here = t0() + Duration::minutes(1);
    edit_here(
        &mut fx,
        &event("a", "20260301T100000Z", "A edited here", "20260101T000000Z"),
        here,
    );
    edit_here(
        &mut fx,
        &event("b", "20260301T123000Z", "B edited here", "20260101T000000Z"),
        here,
    );
    let rep = fx.sync(t0() + Duration::minutes(2));
    assert_eq!(
        r.fired.lock().unwrap().len(),
        2,
        "both edits landed between the listing and the PUTs"
    );
    assert_eq!(rep.conflicts, 2, "{rep:?}");
    assert_eq!(rep.fetched, 2, "each 412 re-fetched its object: {rep:?}");
    let local = fx.local("Work");
    assert!(
        local["a"].text.contains("A edited there"),
        "{}",
        local["a"].text
    );
    assert!(
        local["b"].text.contains("B edited here"),
        "{}",
        local["b"].text
    );
    let at = |h, m| Utc.with_ymd_and_hms(2026, 3, 1, h, m, 0).unwrap();
    assert_eq!(fx.pending("b"), [at(12, 15)], "the winner's reminder");
    let a = fx.rad.get(&format!("{p}a.ics")).body;
    let b = fx.rad.get(&format!("{p}b.ics")).body;
    assert!(
        a.contains("A edited there") && !a.contains("A edited here"),
        "{a}"
    );
    assert!(b.contains("B edited here"), "{b}");
    let log = log(&fx);
    assert!(
        log.contains("caldav/Work/a edit here lost to the server's"),
        "{log}"
    );
    assert!(
        log.contains("SUMMARY:A edited here"),
        "the loser is kept: {log}"
    );
    assert!(
        log.contains("caldav/Work/b the server's edit lost to the edit here"),
        "{log}"
    );
    assert!(
        log.contains("SUMMARY:B edited there"),
        "the loser is kept: {log}"
    );
    let again = fx.sync(t0() + Duration::minutes(3));
    assert_eq!(
        (again.conflicts, again.written_there, again.changed_here),
        (0, 0, 0),
        "settled: {again:?}"
    );
}

#[test]
fn radicale_a_412_on_an_acknowledgement() {
    a_412_on_an_acknowledgement_reapplies_it_on_the_servers_fresh_copy(Fx::new());
}

#[test]
fn xandikos_a_412_on_an_acknowledgement() {
    a_412_on_an_acknowledgement_reapplies_it_on_the_servers_fresh_copy(Fx::xandikos());
}

fn a_412_on_an_acknowledgement_reapplies_it_on_the_servers_fresh_copy(mut fx: Fx) {
    let p = fx.path;
    fx.rad.put(
        &format!("{p}d1.ics"),
        &event("d1", "20260301T100000Z", "Stand-up", "20260101T000000Z"),
    );
    let r = relay(
        fx.rad.port,
        &[(
            format!("{p}d1.ics"),
            event(
                "d1",
                "20260301T100000Z",
                "Stand-up (room 4)",
                "20260301T094900Z",
            ),
        )],
    );
    fx.add_at(&r.url);
    fx.sync(t0());
    let cal = fx
        .store
        .read(|r| r.calendars())
        .unwrap()
        .into_iter()
        .find(|c| c.name == fx.name)
        .unwrap();
    let key = fx
        .store
        .read(|r| r.instances_of_event(cal.id, "d1"))
        .unwrap()[0]
        .key
        .clone();
    let at = Utc.with_ymd_and_hms(2026, 3, 1, 9, 50, 0).unwrap();
    kairos_engine::actions::dismiss(&mut fx.store, &key, at).unwrap();
    let rep = fx.sync(at + Duration::minutes(1));
    assert_eq!(
        r.fired.lock().unwrap().len(),
        1,
        "the edit landed before the PUT"
    );
    assert_eq!(
        (rep.conflicts, rep.acknowledged_there, rep.written_there),
        (0, 1, 1),
        "{rep:?}"
    );
    let body = fx.rad.get(&format!("{p}d1.ics")).body.replace("\r\n ", "");
    assert!(
        body.contains("Stand-up (room 4)"),
        "the other client's edit kept: {body}"
    );
    assert!(
        body.contains("ACKNOWLEDGED:20260301T095000Z"),
        "the acknowledgement re-applied: {body}"
    );
    assert!(fx.local(fx.name)["d1"].text.contains("Stand-up (room 4)"));
    let st: Vec<State> = fx
        .store
        .read(|r| r.instances_of_event(cal.id, "d1"))
        .unwrap()
        .into_iter()
        .map(|i| i.state)
        .collect();
    assert!(!st.contains(&State::Pending), "{st:?}");
    assert!(!log(&fx).contains("CalDAV conflict"), "{}", log(&fx));
    let again = fx.sync(at + Duration::minutes(2));
    assert_eq!(
        (
            again.written_there,
            again.acknowledged_there,
            again.changed_here
        ),
        (0, 0, 0),
        "settled: {again:?}"
    );
}
