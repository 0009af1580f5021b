//! RFC 9074 acknowledgements from the server (another client dismissed an
//! alarm): the Kairos reminder of the same occurrence is acknowledged
//! through the engine's path, once; an `ACKNOWLEDGED` from before the
//! trigger acknowledges nothing. Against Radicale and Xandikos.

use chrono::{Duration, TimeZone, Utc};
use kairos_store::State;

use crate::{Fx, event, t0};

/// `event`'s object with `ACKNOWLEDGED:<ack>` on its alarm.
fn acknowledged(uid: &str, start: &str, modified: &str, ack: &str) -> String {
    event(uid, start, "Stand-up", modified).replace(
        "TRIGGER:-PT15M\r\n",
        &format!("TRIGGER:-PT15M\r\nACKNOWLEDGED:{ack}\r\n"),
    )
}

fn states(fx: &Fx, uid: &str) -> Vec<State> {
    fx.instances(uid).into_iter().map(|i| i.state).collect()
}

fn acknowledged_on_the_server_stops_the_reminder_here(mut fx: Fx) {
    let p = fx.path;
    fx.rad.put(
        &format!("{p}a1.ics"),
        &event("a1", "20260301T100000Z", "Stand-up", "20260101T000000Z"),
    );
    fx.rad.put(
        &format!("{p}a2.ics"),
        &event("a2", "20260301T110000Z", "Later", "20260101T000000Z"),
    );
    fx.add();
    fx.sync(t0());
    assert_eq!(states(&fx, "a1"), [State::Pending]);
    // Another client dismissed a1's alarm at 09:46 (its trigger was
    // 09:45); a2's acknowledgement (09:00) predates its 10:45 trigger.
    fx.rad.put(
        &format!("{p}a1.ics"),
        &acknowledged(
            "a1",
            "20260301T100000Z",
            "20260301T094600Z",
            "20260301T094600Z",
        ),
    );
    fx.rad.put(
        &format!("{p}a2.ics"),
        &acknowledged(
            "a2",
            "20260301T110000Z",
            "20260301T090000Z",
            "20260301T090000Z",
        ),
    );
    let now = Utc.with_ymd_and_hms(2026, 3, 1, 9, 47, 0).unwrap();
    let r = fx.sync(now);
    assert_eq!(r.acknowledged_here, 1, "{r:?}");
    assert!(r.acked.keys[0].contains("/a1/"), "{r:?}");
    assert!(
        !states(&fx, "a1").contains(&State::Pending),
        "{:?}",
        states(&fx, "a1")
    );
    assert_eq!(states(&fx, "a2"), [State::Pending]);
    // The engine's path: `kairos why` shows who.
    let log = crate::log(&fx);
    assert!(
        log.lines()
            .any(|l| l.contains("/a1/") && l.contains("dismissed by CalDAV")),
        "{log}"
    );
    assert!(
        !log.lines()
            .any(|l| l.contains("/a2/") && l.contains("dismissed")),
        "{log}"
    );
    // Never twice: a second sync (even a full one) changes nothing.
    let again = fx.sync(now + Duration::minutes(1));
    assert_eq!(
        (again.acknowledged_here, again.changed_here),
        (0, 0),
        "{again:?}"
    );
    assert!(!states(&fx, "a1").contains(&State::Pending));
}

#[test]
fn radicale_acknowledged_from_the_server() {
    acknowledged_on_the_server_stops_the_reminder_here(Fx::new());
}

#[test]
fn xandikos_acknowledged_from_the_server() {
    acknowledged_on_the_server_stops_the_reminder_here(Fx::xandikos());
}

fn dismissed_here_reaches_the_server_as_acknowledged(mut fx: Fx) {
    let p = fx.path;
    fx.rad.put(
        &format!("{p}d1.ics"),
        &event("d1", "20260301T100000Z", "Stand-up", "20260101T000000Z"),
    );
    fx.add();
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
    let r = fx.sync(at + Duration::minutes(1));
    assert_eq!((r.acknowledged_there, r.written_there), (1, 1), "{r:?}");
    let got = fx.rad.get(&format!("{p}d1.ics"));
    let body = got.body.replace("\r\n ", "");
    let alarm = body
        .split("BEGIN:VALARM")
        .nth(1)
        .and_then(|a| a.split("END:VALARM").next())
        .unwrap_or_default()
        .to_owned();
    assert!(
        alarm.contains("ACKNOWLEDGED:20260301T095000Z"),
        "{}: {body}",
        fx.rad.kind
    );
    // Still acknowledged here; nothing written twice.
    assert!(!states(&fx, "d1").contains(&State::Pending));
    let again = fx.sync(at + Duration::minutes(2));
    assert_eq!(
        (
            again.acknowledged_there,
            again.written_there,
            again.acknowledged_here
        ),
        (0, 0, 0),
        "{again:?}"
    );
}

#[test]
fn radicale_dismissed_here_written_as_acknowledged() {
    dismissed_here_reaches_the_server_as_acknowledged(Fx::new());
}

#[test]
fn xandikos_dismissed_here_written_as_acknowledged() {
    dismissed_here_reaches_the_server_as_acknowledged(Fx::xandikos());
}
