//! A subscribed calendar on two real databases, ops carried by hand:
//! the subscription travels (`calendar.feed`), the feed's events do not;
//! each device's own copy of the same content gives the same keys; a
//! removal takes the fetched events away on the other device.

use chrono::Duration;
use kairos_engine::import::{Mode, calendar_named, import_with};
use kairos_engine::sync::apply::apply_remote;
use kairos_engine::sync::feed::record_feed;
use kairos_proto::{Body, Op};
use kairos_store::Store;

use crate::support::{cal, now};
use crate::sync::{device, drain};

const FEED: &str = "BEGIN:VEVENT\nUID:f1\nSUMMARY:Stand-up\nDTSTART:20260601T100000Z\n\
                    BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT15M\nEND:VALARM\nEND:VEVENT\n\
                    BEGIN:VEVENT\nUID:f2\nSUMMARY:Review\nDTSTART:20260601T150000Z\n\
                    BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT15M\nEND:VALARM\nEND:VEVENT";
const URL: &str = "https://feeds.test/private-abc123.ics";

/// What a fetch of the feed does to calendar "Team" (kairos-feeds'
/// refresh: the import path in `Mode::Replace`).
fn fetch(s: &mut Store) {
    import_with(
        s,
        "Team",
        &cal(FEED),
        Mode::Replace,
        now(),
        Duration::hours(48),
        chrono_tz::UTC,
    )
    .expect("import");
}

fn apply(to: &mut Store, ops: &[Op]) {
    apply_remote(to, ops, None, now(), Duration::hours(48), chrono_tz::UTC).expect("apply");
}

fn keys(s: &Store) -> Vec<String> {
    let mut k: Vec<String> = s
        .due(chrono::DateTime::<chrono::Utc>::MAX_UTC, 100)
        .expect("due")
        .into_iter()
        .map(|i| i.key)
        .collect();
    k.sort();
    k
}

#[test]
fn a_subscription_travels_and_its_events_do_not() {
    let dir = tempfile::tempdir().expect("tmp");
    let (mut a, mut b) = (device(dir.path(), "a"), device(dir.path(), "b"));
    // Subscribing on A, as kairos-feeds does: subscription first, then
    // the first copy.
    let (cal_id, cal_uid) = calendar_named(&mut a, "Team", now()).expect("calendar");
    a.write(|tx| {
        tx.subscription_put(cal_id, URL, 3600, now(), now())?;
        record_feed(tx, &cal_uid, URL, 3600, false, now())
    })
    .expect("subscribe");
    fetch(&mut a);
    assert_eq!(keys(&a).len(), 2);
    let ops = drain(&mut a);
    let kinds: Vec<&str> = ops.iter().map(|o| o.body.kind()).collect();
    assert_eq!(kinds, ["calendar.put", "calendar.feed"], "no series op");

    apply(&mut b, &ops);
    let subs = b.read(|r| r.subscriptions()).expect("subs");
    assert_eq!(subs.len(), 1);
    assert_eq!((subs[0].name.as_str(), subs[0].url.as_str()), ("Team", URL));
    assert_eq!(
        (subs[0].every_secs, subs[0].next_at),
        (3600, now()),
        "due at once"
    );
    assert!(keys(&b).is_empty(), "B fetches the feed itself");
    fetch(&mut b);
    assert_eq!(keys(&b), keys(&a), "same content, same keys");
    assert!(drain(&mut b).is_empty(), "B's fetch records nothing");

    // Unsubscribed on A: A keeps its copy, B's fetched events go.
    a.write(|tx| {
        tx.subscription_remove(cal_id)?;
        record_feed(tx, &cal_uid, URL, 3600, true, now())
    })
    .expect("remove");
    let ops = drain(&mut a);
    assert!(
        matches!(
            ops[..],
            [Op {
                body: Body::CalendarFeed { removed: true, .. },
                ..
            }]
        ),
        "{ops:?}"
    );
    apply(&mut b, &ops);
    assert!(b.read(|r| r.subscriptions()).expect("subs").is_empty());
    assert!(keys(&b).is_empty(), "{:?}", keys(&b));
    let team = b
        .calendars()
        .expect("calendars")
        .into_iter()
        .find(|c| c.uid == cal_uid)
        .expect("the calendar stays");
    assert!(b.events_of(team.id).expect("events").is_empty());
    assert_eq!(keys(&a).len(), 2, "A keeps its copy");
}
