//! Builders and proptest strategies shared by the tests.

use chrono::{DateTime, TimeZone, Utc};
use kairos_proto::{Body, Hlc, Op};
use proptest::prelude::*;

pub const A: &str = "d_aaaa000000000001";
pub const B: &str = "d_bbbb000000000002";
pub const C: &str = "d_cccc000000000003";

pub fn hlc(ms: u64, counter: u32, device: &str) -> Hlc {
    Hlc {
        ms,
        counter,
        device: device.into(),
    }
}

pub fn at(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_764_864_000 + secs, 0).unwrap()
}

pub fn op(n: u64, stamp: Hlc, body: Body) -> Op {
    Op::new(n, stamp, body)
}

pub fn dismiss(key: &str) -> Body {
    Body::ReminderDismiss { key: key.into() }
}

pub fn snooze(key: &str, secs: i64) -> Body {
    Body::ReminderSnooze {
        key: key.into(),
        until: at(secs),
    }
}

pub fn device() -> impl Strategy<Value = String> {
    prop_oneof![Just(A.to_owned()), Just(B.to_owned()), Just(C.to_owned())]
}

/// Bodies over a small set of entities, so ops collide often.
pub fn body() -> impl Strategy<Value = Body> {
    let cal = prop_oneof![Just("c1".to_owned()), Just("c2".to_owned())];
    let uid = prop_oneof![Just("u1".to_owned()), Just("u2".to_owned())];
    let key = prop_oneof![Just("k1".to_owned()), Just("k2".to_owned())];
    prop_oneof![
        (
            cal.clone(),
            "[a-z ]{0,8}",
            proptest::option::of("#[0-9a-f]{6}")
        )
            .prop_map(|(calendar, name, color)| Body::CalendarPut {
                calendar,
                name,
                color
            }),
        cal.clone()
            .prop_map(|calendar| Body::CalendarDelete { calendar }),
        (cal.clone(), uid.clone(), "[A-Z:\r\n]{0,20}")
            .prop_map(|(calendar, uid, ics)| Body::SeriesPut { calendar, uid, ics }),
        (cal.clone(), 1u8..=127, any::<bool>()).prop_map(|(calendar, week, holidays)| {
            Body::CalendarWork {
                calendar,
                week,
                holidays,
            }
        }),
        (cal.clone(), 300u32..=604_800, any::<bool>()).prop_map(|(calendar, every, removed)| {
            Body::CalendarFeed {
                calendar,
                url: "https://feeds.test/private-abc.ics".to_owned(),
                every,
                removed,
            }
        }),
        (cal, uid, any::<bool>()).prop_map(|(calendar, uid, caldav)| Body::SeriesDelete {
            calendar,
            uid,
            caldav,
        }),
        key.clone().prop_map(|key| Body::ReminderDismiss { key }),
        (key, 0i64..100_000).prop_map(|(key, s)| Body::ReminderSnooze { key, until: at(s) }),
    ]
}

/// Ops as three devices would issue them: each device's stamps strictly
/// increasing, wall clocks that disagree, numbers counting from 1.
pub fn history() -> impl Strategy<Value = Vec<Op>> {
    proptest::collection::vec((device(), 0u64..50, body()), 1..40).prop_map(|steps| {
        let mut clocks = std::collections::BTreeMap::new();
        steps
            .into_iter()
            .map(|(dev, wall, body)| {
                let (clock, n) = clocks
                    .entry(dev.clone())
                    .or_insert_with(|| (kairos_proto::HlcClock::new(dev.clone(), None), 0u64));
                *n += 1;
                Op::new(*n, clock.issue(1_764_864_000_000 + wall), body)
            })
            .collect()
    })
}
