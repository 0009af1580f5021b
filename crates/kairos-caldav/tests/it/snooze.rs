//! RFC 9074 snoozes both ways against Radicale and Xandikos: a snooze in Kairos becomes
//! a snooze alarm on the server's copy (the snoozed alarm named and
//! acknowledged, reminder keys unchanged); another client's snooze alarm
//! snoozes the Kairos reminder.

use chrono::{DateTime, Duration, TimeZone, Utc};
use kairos_store::State;

use crate::{Fx, event, log, t0};

fn at(h: u32, m: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, h, m, 0).unwrap()
}

/// The `VALARM` blocks of the server's copy of `path`, unfolded.
fn alarms(fx: &Fx, path: &str) -> Vec<String> {
    let body = fx.rad.get(path).body.replace("\r\n ", "");
    body.split("BEGIN:VALARM")
        .skip(1)
        .map(|a| a.split("END:VALARM").next().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn radicale_snooze_out() {
    a_snooze_in_kairos_becomes_an_rfc9074_snooze_alarm_and_keys_stay(Fx::new());
}

#[test]
fn xandikos_snooze_out() {
    a_snooze_in_kairos_becomes_an_rfc9074_snooze_alarm_and_keys_stay(Fx::xandikos());
}

#[test]
fn radicale_snooze_in() {
    another_clients_snooze_alarm_snoozes_the_kairos_reminder(Fx::new());
}

#[test]
fn xandikos_snooze_in() {
    another_clients_snooze_alarm_snoozes_the_kairos_reminder(Fx::xandikos());
}

fn a_snooze_in_kairos_becomes_an_rfc9074_snooze_alarm_and_keys_stay(mut fx: Fx) {
    let path = format!("{}s1.ics", fx.path);
    fx.rad.put(
        &path,
        &event("s1", "20260301T100000Z", "Stand-up", "20260101T000000Z"),
    );
    fx.add();
    fx.sync(t0());
    let before = fx.instances("s1");
    assert_eq!(before.len(), 1);
    let key = before[0].key.clone();
    let (snooze_key, until) =
        kairos_engine::actions::snooze(&mut fx.store, &key, Duration::minutes(10), at(9, 46))
            .unwrap();
    assert_eq!(until, at(9, 56));
    let r = fx.sync(at(9, 47));
    assert_eq!(
        (r.snoozed_there, r.written_there, r.conflicts),
        (1, 1, 0),
        "{r:?}"
    );
    let a = alarms(&fx, &path);
    assert_eq!(a.len(), 2, "{a:?}");
    assert!(
        a[0].contains("UID:kairos-alarm-0.s1"),
        "the snoozed alarm named: {a:?}"
    );
    assert!(a[0].contains("ACKNOWLEDGED:20260301T094600Z"), "{a:?}");
    assert!(
        a[1].contains("RELATED-TO;RELTYPE=SNOOZE:kairos-alarm-0.s1"),
        "{a:?}"
    );
    assert!(
        a[1].contains("TRIGGER;VALUE=DATE-TIME:20260301T095600Z"),
        "{a:?}"
    );
    assert!(!a[1].contains("ACKNOWLEDGED"), "{a:?}");
    // The same reminders, under the same keys: the snoozed one and its
    // snooze; none for the snooze alarm.
    let after = fx.instances("s1");
    let keys: Vec<&str> = after.iter().map(|i| i.key.as_str()).collect();
    assert_eq!(keys, [key.as_str(), snooze_key.as_str()], "{after:?}");
    assert_eq!(after[0].state, State::Snoozed);
    assert_eq!(
        (after[1].state, after[1].trigger_at),
        (State::Pending, until)
    );
    let quiet = fx.sync(at(9, 48));
    assert_eq!(
        (
            quiet.snoozed_there,
            quiet.written_there,
            quiet.snoozed_here,
            quiet.changed_here
        ),
        (0, 0, 0, 0),
        "{quiet:?}"
    );
    // Dismissed when the snooze rings: the snooze alarm is done too.
    kairos_engine::actions::dismiss(&mut fx.store, &snooze_key, at(9, 57)).unwrap();
    let r = fx.sync(at(9, 58));
    assert_eq!((r.acknowledged_there, r.written_there), (1, 1), "{r:?}");
    let a = alarms(&fx, &path);
    assert_eq!(a.len(), 2, "{a:?}");
    assert!(a[0].contains("ACKNOWLEDGED:20260301T095700Z"), "{a:?}");
    assert!(a[1].contains("ACKNOWLEDGED:20260301T095700Z"), "{a:?}");
    let keys: Vec<String> = fx.instances("s1").into_iter().map(|i| i.key).collect();
    assert_eq!(keys, [key, snooze_key]);
}

fn another_clients_snooze_alarm_snoozes_the_kairos_reminder(mut fx: Fx) {
    let path = format!("{}i1.ics", fx.path);
    let with_uid = |extra: &str, modified: &str| {
        event("i1", "20260301T100000Z", "Review", modified).replace(
            "TRIGGER:-PT15M\r\n",
            &format!("TRIGGER:-PT15M\r\nUID:al-1\r\n{extra}"),
        )
    };
    fx.rad.put(&path, &with_uid("", "20260101T000000Z"));
    fx.add();
    fx.sync(t0());
    let base = fx.instances("i1")[0].key.clone();
    // Another client snoozed it at 09:46 until 09:56 (RFC 9074 §6).
    let snoozed = with_uid("ACKNOWLEDGED:20260301T094600Z\r\n", "20260301T094600Z").replace(
        "END:VALARM\r\n",
        "END:VALARM\r\nBEGIN:VALARM\r\nUID:their-snooze\r\nACTION:DISPLAY\r\nDESCRIPTION:r\r\n\
         TRIGGER;VALUE=DATE-TIME:20260301T095600Z\r\nRELATED-TO;RELTYPE=SNOOZE:al-1\r\n\
         END:VALARM\r\n",
    );
    fx.rad.put(&path, &snoozed);
    let r = fx.sync(at(9, 47));
    assert_eq!(
        (r.snoozed_here, r.acknowledged_here, r.written_there),
        (1, 0, 0),
        "snoozed, not dismissed, nothing written back: {r:?}"
    );
    assert_eq!(r.acked.snoozed, [(base.clone(), at(9, 56))]);
    let insts = fx.instances("i1");
    assert_eq!(insts.len(), 2, "{insts:?}");
    assert_eq!(
        (insts[0].key.as_str(), insts[0].state),
        (base.as_str(), State::Snoozed)
    );
    assert_eq!(
        (insts[1].state, insts[1].trigger_at),
        (State::Pending, at(9, 56))
    );
    assert_eq!(insts[1].snooze_of.as_deref(), Some(base.as_str()));
    assert!(
        log(&fx)
            .lines()
            .any(|l| l.contains("snoozed until") && l.contains("by CalDAV")),
        "{}",
        log(&fx)
    );
    let quiet = fx.sync(at(9, 48));
    assert_eq!(
        (
            quiet.snoozed_here,
            quiet.acknowledged_here,
            quiet.written_there,
            quiet.snoozed_there
        ),
        (0, 0, 0, 0),
        "{quiet:?}"
    );
    // The other client dismisses it when it rings: done here too.
    fx.rad.put(
        &path,
        &snoozed.replace(
            "RELATED-TO;RELTYPE=SNOOZE:al-1\r\n",
            "RELATED-TO;RELTYPE=SNOOZE:al-1\r\nACKNOWLEDGED:20260301T095700Z\r\n",
        ),
    );
    let r = fx.sync(at(9, 58));
    assert_eq!(r.acknowledged_here, 1, "{r:?}");
    let states: Vec<State> = fx.instances("i1").iter().map(|i| i.state).collect();
    assert!(!states.contains(&State::Pending), "{states:?}");
}
