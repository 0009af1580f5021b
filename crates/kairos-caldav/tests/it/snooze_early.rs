//! A reminder snoozed (or dismissed) **before** it rang, then written to
//! the server as RFC 9074 says: the snoozed alarm gets a `UID` and
//! `ACKNOWLEDGED`, a snooze alarm is added. None of that moves when an
//! alarm goes off, so no reminder key may change with it: a changed key
//! would plan the reminder again and ring it at its first time as well as
//! at its snooze (and a reminder dismissed ahead would ring after all).
//! Against Radicale.

use chrono::{DateTime, Duration, TimeZone, Utc};
use kairos_store::State;

use crate::{Fx, t0};

fn at(d: u32, h: u32, m: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, d, h, m, 0).unwrap()
}

/// A stand-up at 10:00 on 1 and 2 March, reminded 15 minutes before.
const DAILY: &str = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\n\
    UID:daily\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20260301T100000Z\r\nDURATION:PT15M\r\n\
    RRULE:FREQ=DAILY;COUNT=2\r\nSUMMARY:Stand-up\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\n\
    DESCRIPTION:r\r\nTRIGGER:-PT15M\r\nEND:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n";

#[test]
fn a_reminder_snoozed_before_it_rang_keeps_its_key_on_the_way_to_the_server_and_rings_once() {
    let mut fx = Fx::new();
    let path = format!("{}daily.ics", fx.path);
    fx.rad.put(&path, DAILY);
    fx.add();
    fx.sync(t0());
    let before = fx.instances("daily");
    let keys: Vec<String> = before.iter().map(|i| i.key.clone()).collect();
    assert_eq!(keys.len(), 2, "{before:?}");
    let (first, second) = (keys[0].clone(), keys[1].clone());
    assert!(first.contains("2026-03-01"), "{first}");

    // 09:40, five minutes before the first rings: snooze it for ten
    // minutes, and dismiss tomorrow's ahead.
    let (snooze_key, until) =
        kairos_engine::actions::snooze(&mut fx.store, &first, Duration::minutes(10), at(1, 9, 40))
            .unwrap();
    assert_eq!(until, at(1, 9, 50));
    kairos_engine::actions::dismiss(&mut fx.store, &second, at(1, 9, 40)).unwrap();

    // Written to the server as RFC 9074 says, then read back.
    let r = fx.sync(at(1, 9, 41));
    assert_eq!((r.snoozed_there, r.conflicts), (1, 0), "{r:?}");
    let body = fx.rad.get(&path).body.replace("\r\n ", "");
    assert!(
        body.contains("RELATED-TO;RELTYPE=SNOOZE:kairos-alarm-0.daily"),
        "{body}"
    );
    fx.sync(at(1, 9, 42));

    // The same reminders under the same keys: the first snoozed, its
    // snooze due at 09:50, tomorrow's dismissed; nothing else to ring.
    let after = fx.instances("daily");
    let got: Vec<(&str, State)> = after.iter().map(|i| (i.key.as_str(), i.state)).collect();
    assert_eq!(
        got,
        [
            (first.as_str(), State::Snoozed),
            (snooze_key.as_str(), State::Pending),
            (second.as_str(), State::Acknowledged),
        ],
        "{after:?}"
    );
    let due: Vec<_> = after
        .iter()
        .filter(|i| i.state == State::Pending)
        .map(|i| i.trigger_at)
        .collect();
    assert_eq!(due, [until], "only the snooze rings");
}
