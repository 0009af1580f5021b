//! 304s cost nothing; a changed feed replaces the calendar's content with
//! keys kept, reminders moved, removed events deleted (and synced); gzip.

use std::io::Write;
use std::sync::Arc;

use chrono::Duration;
use kairos_engine::sync::{Identity, join};
use kairos_feeds::{Limits, Outcome};
use kairos_store::State;

use crate::server::{Reply, Request, Server};
use crate::{db, event, feed, now, pending, refresher, stored, subscription, with_etag};

#[tokio::test]
async fn a_304_parses_nothing_and_writes_only_the_refresh_time() {
    let body = feed(&[event("a@t", "Stand-up", "20261201T120000Z")]);
    let server = Server::start(with_etag(body, "\"v1\"")).await;
    let (_dir, mut store) = db();
    let r = refresher(Limits::default());
    let url = server.url("/team.ics");
    let first = r
        .subscribe(&mut store, &url, None, Duration::hours(1), now())
        .await
        .expect("subscribe");
    assert_eq!(first.calendar, "Team", "named after X-WR-CALNAME");
    let before = (stored(&store, "Team"), pending(&store));
    let audit_before = store
        .audit_since(now() - Duration::days(1), 10_000)
        .expect("audit")
        .len();

    let later = now() + Duration::hours(1);
    let sub = subscription(&store, "Team");
    let done = r
        .refresh(&mut store, &sub, later, 0.5)
        .await
        .expect("refresh");
    assert!(
        matches!(done.outcome, Outcome::NotModified),
        "{:?}",
        done.outcome
    );
    assert_eq!(
        server
            .last_request()
            .headers
            .get("if-none-match")
            .map(String::as_str),
        Some("\"v1\"")
    );
    assert_eq!((stored(&store, "Team"), pending(&store)), before);
    let audit_after = store
        .audit_since(now() - Duration::days(1), 10_000)
        .expect("audit")
        .len();
    assert_eq!(audit_after, audit_before, "no reminder was touched");
    let sub = subscription(&store, "Team");
    assert_eq!(sub.last_refresh, Some(later));
    assert_eq!(sub.last_error, None);
    assert_eq!(sub.next_at, later + Duration::hours(1), "jitter 0.5 = none");
}

#[tokio::test]
async fn a_changed_feed_keeps_keys_moves_reminders_deletes_what_left_and_records_no_series_op() {
    let v1 = feed(&[
        event("keep@t", "Stand-up", "20261201T120000Z"),
        event("move@t", "Review", "20261201T150000Z"),
        event("gone@t", "Lunch", "20261201T130000Z"),
    ]);
    let server = Server::start(with_etag(v1, "\"v1\"")).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut store = kairos_store::Store::open(dir.path().join("k.db")).expect("open");
    let id = Identity {
        server: "ws://127.0.0.1:1".into(),
        account: "alice".into(),
        device: "d_0000000000000001".into(),
        token: "0".repeat(64),
    };
    join(&mut store, &id, now()).expect("join");
    let r = refresher(Limits::default());
    r.subscribe(
        &mut store,
        &server.url("/f"),
        Some("Work"),
        Duration::hours(1),
        now(),
    )
    .await
    .expect("subscribe");
    let first = pending(&store);
    assert_eq!(first.len(), 3, "{first:?}");
    let key_of = |p: &[(String, chrono::DateTime<chrono::Utc>)], uid: &str| {
        p.iter().find(|(k, _)| k.contains(uid)).cloned()
    };
    let keep = key_of(&first, "keep@t").expect("keep");
    let moved = key_of(&first, "move@t").expect("move");
    // A paired database records the subscription, not the feed's events:
    // every device of the account fetches the feed itself.
    let kinds = |ops: &[String]| -> Vec<String> {
        ops.iter()
            .map(|o| {
                let v: serde_json::Value = serde_json::from_str(o).expect("op json");
                v["body"]["k"].as_str().expect("kind").to_owned()
            })
            .collect()
    };
    let subscribed: Vec<String> = store
        .read(|x| x.outbox_peek(1000))
        .expect("outbox")
        .into_iter()
        .map(|o| o.op)
        .collect();
    assert_eq!(kinds(&subscribed), ["calendar.put", "calendar.feed"]);
    assert!(subscribed[1].contains(&server.url("/f")), "{subscribed:?}");
    // Dismissed before the change: it must stay dismissed, and the
    // dismissal travels as for any event.
    kairos_engine::actions::dismiss(&mut store, &keep.0, now()).expect("dismiss");
    let outbox = store.read(|x| x.outbox_peek(1000)).expect("outbox").len();
    assert_eq!(outbox, 3, "the dismissal is recorded");

    let v2 = feed(&[
        event("keep@t", "Stand-up (room 4)", "20261201T120000Z"),
        event("move@t", "Review", "20261201T170000Z"),
    ]);
    server.set(with_etag(v2, "\"v2\""));
    let sub = subscription(&store, "Work");
    let done = r
        .refresh(&mut store, &sub, now(), 0.5)
        .await
        .expect("refresh");
    let Outcome::Updated { report, .. } = done.outcome else {
        panic!("{:?}", done.outcome);
    };
    assert_eq!((report.changed, report.deleted), (2, 1));

    let after = pending(&store);
    assert!(
        key_of(&after, "gone@t").is_none(),
        "removed event's reminder dropped"
    );
    let new_move = key_of(&after, "move@t").expect("moved reminder");
    assert_ne!(new_move.0, moved.0);
    assert_eq!(
        new_move.1,
        moved.1 + Duration::hours(2),
        "the reminder moved"
    );
    assert_eq!(
        store.get(&keep.0).expect("get").map(|i| i.state),
        Some(State::Acknowledged),
        "same key, still dismissed"
    );
    let uids: Vec<String> = stored(&store, "Work").into_iter().map(|(u, _)| u).collect();
    assert_eq!(uids, ["keep@t", "move@t"]);
    let ops: Vec<String> = store
        .read(|x| x.outbox_peek(1000))
        .expect("outbox")
        .into_iter()
        .skip(outbox)
        .map(|o| o.op)
        .collect();
    assert!(ops.is_empty(), "no series op for a feed's events: {ops:?}");
}

#[tokio::test]
async fn a_gzip_feed_is_decoded() {
    let body = feed(&[event("z@t", "Zipped", "20261201T120000Z")]);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&body).expect("gzip");
    let zipped = gz.finish().expect("gzip");
    let len = zipped.len() as u64;
    let server = Server::start(Arc::new(move |r: &Request| {
        assert!(
            r.headers
                .get("accept-encoding")
                .is_some_and(|e| e.contains("gzip"))
        );
        Reply::Full(
            200,
            vec![
                ("Content-Type".into(), "text/calendar".into()),
                ("Content-Encoding".into(), "gzip".into()),
            ],
            zipped.clone(),
        )
    }))
    .await;
    let (_dir, mut store) = db();
    refresher(Limits::default())
        .subscribe(
            &mut store,
            &server.url("/z"),
            Some("Z"),
            Duration::hours(1),
            now(),
        )
        .await
        .expect("subscribe");
    assert!(stored(&store, "Z")[0].1.contains("SUMMARY:Zipped"));
    assert_eq!(server.sent.load(std::sync::atomic::Ordering::SeqCst), len);
}
