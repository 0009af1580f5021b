//! On PostgreSQL a delivered queue row is deleted when its success is
//! recorded (`remind/finish.rs`: one small WAL record instead of a second
//! row version and its index entry): the success is known from
//! `remind_sent` alone. The attempt stays in the trail, and the delivery
//! is not queued (nor sent) again when its event is planned again.
//! PostgreSQL in either run.

use std::time::Duration;

use kairos_proto::Body;

use crate::receiver;
use crate::remind::{NO_TASK, at, with_webhook};
use crate::remind_ops::{NO_LIMITS, account, channels, item, serial, trail};
use crate::support::Server;

#[tokio::test(flavor = "multi_thread")]
async fn a_delivered_row_leaves_the_queue_and_is_not_planned_again() {
    let mut hook = receiver::start(&[], Duration::ZERO).await;
    let dir = tempfile::tempdir().unwrap();
    let url = crate::pg::database().await;
    let server = Server::start_pg(&dir.path().join("one"), &url, NO_TASK).await;
    let (mut dev, mut m) = account(
        &server,
        "alice",
        vec![item("c1", "e-a", "20300107T100000Z", None)],
    )
    .await;
    let rem = with_webhook(&server, "alice", &hook.url, Duration::ZERO).await;
    let planned = at("2030-01-07T08:00:00Z");
    assert_eq!(rem.replicate(planned).await.unwrap().deliveries, 1);
    let mut o = serial(NO_LIMITS, 10);
    o.owner = "one".into();
    let t0 = at("2030-01-07T09:45:00Z");
    let d = rem.drain(t0, &o, &channels()).await.unwrap();
    assert_eq!((d.claimed, d.sent), (1, 1), "{d:?}");
    hook.next().await;

    // The queue row is gone; `remind_sent` holds the success and its attempt.
    let client = crate::pg::client(&url).await;
    let count = |sql: &'static str| {
        let client = &client;
        async move { client.query_one(sql, &[]).await.unwrap().get::<_, i64>(0) }
    };
    assert_eq!(count("SELECT count(*) FROM remind_delivery").await, 0);
    assert_eq!(
        count("SELECT coalesce(max(attempt), -1) FROM remind_sent").await,
        1
    );
    let why = trail(&rem, "alice", "e-a").await;
    assert!(
        why.iter()
            .any(|e| e == "delivered by webhook (attempt 1, one)"),
        "{why:?}"
    );

    // The event edited (same time, same reminder): planned again, its
    // delivery is not queued again, and nothing more is sent.
    let ics = "BEGIN:VEVENT\r\nUID:e-a\r\nSUMMARY:renamed\r\nDTSTART:20300107T100000Z\r\n\
               BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT15M\r\nDESCRIPTION:x\r\nEND:VALARM\r\n\
               END:VEVENT";
    dev.push(&[m.op(Body::SeriesPut {
        calendar: "c1".into(),
        uid: "e-a".into(),
        ics: ics.into(),
    })])
    .await;
    for now in [planned, t0] {
        let round = rem.replicate(now).await.unwrap();
        assert_eq!(round.deliveries, 0, "{round:?}");
    }
    assert_eq!(count("SELECT count(*) FROM remind_delivery").await, 0);
    let d = rem.drain(t0, &o, &channels()).await.unwrap();
    assert_eq!(d.claimed, 0, "{d:?}");
    assert!(hook.try_next().is_none());
    client.close().await;
}
