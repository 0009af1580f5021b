//! Recording a group of outcomes at once (`remind/finish.rs`): when two
//! instances send the same delivery (the first one's lease ran out while
//! its POST was still in flight), the group that records second holds
//! duplicates beside first successes; each is told apart, one success per
//! delivery is stored, and the trail says which was which. On both stores.

use std::time::Duration;

use kairos_server::remind::Reminders;

use crate::receiver;
use crate::remind::{NO_TASK, at, database, device_key, webhook, with_webhook};
use crate::remind_ops::{NO_LIMITS, account, channels, item, serial, trail};
use crate::support::Server;

#[tokio::test(flavor = "multi_thread")]
async fn a_group_with_duplicates_beside_first_successes_stores_one_success_each() {
    // Every POST is answered 1 s after it arrived, so both instances'
    // POSTs are in flight together.
    let mut hook = receiver::start(&[], Duration::from_secs(1)).await;
    let server = Server::start(NO_TASK).await;
    let s = "20300107T100000Z";
    let uids = ["e-a", "e-b", "e-c"];
    let items = uids.iter().map(|u| item("c1", u, s, None)).collect();
    let (_dev, _m) = account(&server, "alice", items).await;
    let db = database(&server);
    let rem = Reminders::open(&db).await.unwrap();
    rem.configure(webhook("alice", &hook.url, Duration::ZERO))
        .await
        .unwrap();
    rem.replicate(at("2030-01-07T08:00:00Z")).await.unwrap();
    let t0 = at("2030-01-07T09:45:00Z");

    // Instance "one" claims two (lease 5 s) and POSTs both.
    let one = Reminders::open(&db).await.unwrap();
    let mut o1 = serial(NO_LIMITS, 2);
    o1.owner = "one".into();
    o1.concurrency = 2;
    o1.lease = Duration::from_secs(5);
    let first = tokio::spawn(async move { one.drain(t0, &o1, &channels()).await });
    hook.next().await;
    hook.next().await;

    // Its lease over (the test's clock), instance "two" claims all three
    // (the two expired first) while "one"'s POSTs are still unanswered.
    let mut o2 = serial(NO_LIMITS, 3);
    o2.owner = "two".into();
    o2.concurrency = 3;
    let after = t0 + chrono::Duration::seconds(6);
    let d2 = rem.drain(after, &o2, &channels()).await.unwrap();
    let d1 = first.await.unwrap().unwrap();
    assert_eq!((d1.claimed, d2.claimed), (2, 3), "{d1:?} {d2:?}");
    // Two deliveries were sent twice: one success each is recorded
    // (whichever instance recorded first), the other counted a duplicate.
    assert_eq!(d1.sent + d2.sent, 3, "{d1:?} {d2:?}");
    assert_eq!(d1.duplicates + d2.duplicates, 2, "{d1:?} {d2:?}");
    for _ in 0..3 {
        hook.next().await;
    }
    assert!(hook.try_next().is_none());
    assert_eq!(rem.drain(after, &o2, &channels()).await.unwrap().claimed, 0);
    for (u, twice) in [("e-a", true), ("e-b", true), ("e-c", false)] {
        let why = trail(&rem, "alice", u).await;
        let delivered = why
            .iter()
            .filter(|e| e.starts_with("delivered by webhook"))
            .count();
        let dup = why
            .iter()
            .filter(|e| e.starts_with("duplicate: webhook"))
            .count();
        assert_eq!((delivered, dup), (1, usize::from(twice)), "{u}: {why:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_delivery_acknowledged_while_its_post_is_in_flight_shows_its_attempt_in_the_trail() {
    // The POST is answered 3 s after it arrived: the acknowledgement is
    // replicated meanwhile and cancels the delivery still pending, so the
    // success is recorded (`remind_sent`) on a row no longer pending (on
    // PostgreSQL the trail's line comes from there: the attempt is the
    // row's `attempts`, which the finish did not count).
    let mut hook = receiver::start(&[], Duration::from_secs(3)).await;
    let server = Server::start(NO_TASK).await;
    let e = item("c1", "e-a", "20300107T100000Z", None);
    let (mut dev, mut m) = account(&server, "alice", vec![e.clone()]).await;
    let db = database(&server);
    let rem = Reminders::open(&db).await.unwrap();
    rem.configure(webhook("alice", &hook.url, Duration::ZERO))
        .await
        .unwrap();
    rem.replicate(at("2030-01-07T08:00:00Z")).await.unwrap();
    let t0 = at("2030-01-07T09:45:00Z");

    let one = Reminders::open(&db).await.unwrap();
    let mut o = serial(NO_LIMITS, 1);
    o.owner = "one".into();
    let sending = tokio::spawn(async move { one.drain(t0, &o, &channels()).await });
    hook.next().await;
    dev.push(&[m.dismiss(&device_key(&e))]).await;
    let round = rem.replicate(t0).await.unwrap();
    assert_eq!(round.acked, 1, "{round:?}");
    assert!(
        !sending.is_finished(),
        "the POST was answered before the acknowledgement was replicated: nothing tested"
    );
    let d = sending.await.unwrap().unwrap();
    assert_eq!((d.claimed, d.sent), (1, 1), "{d:?}");
    let why = trail(&rem, "alice", "e-a").await;
    assert!(
        why.iter().any(|e| e == "acknowledged by a device"),
        "{why:?}"
    );
    let delivered: Vec<&String> = why
        .iter()
        .filter(|e| e.starts_with("delivered by webhook"))
        .collect();
    assert_eq!(
        delivered,
        ["delivered by webhook (attempt 1, one)"],
        "{why:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_success_with_an_audit_line_of_its_own_shows_once_in_the_trail() {
    // On PostgreSQL a group of first successes writes no audit line (the
    // trail reads them from `remind_sent`); a success recorded with one
    // (by a server before that, or in a group holding a duplicate or
    // another outcome) shows once, not twice. PostgreSQL in either run.
    let mut hook = receiver::start(&[], Duration::ZERO).await;
    let dir = tempfile::tempdir().unwrap();
    let url = crate::pg::database().await;
    let server = Server::start_pg(&dir.path().join("one"), &url, NO_TASK).await;
    let e = item("c1", "e-a", "20300107T100000Z", None);
    let (_dev, _m) = account(&server, "alice", vec![e]).await;
    let rem = with_webhook(&server, "alice", &hook.url, Duration::ZERO).await;
    rem.replicate(at("2030-01-07T08:00:00Z")).await.unwrap();
    let mut o = serial(NO_LIMITS, 1);
    o.owner = "one".into();
    let d = rem
        .drain(at("2030-01-07T09:45:00Z"), &o, &channels())
        .await
        .unwrap();
    assert_eq!(d.sent, 1, "{d:?}");
    hook.next().await;
    let line = "delivered by webhook (attempt 1, one)";
    let delivered = |why: Vec<String>| {
        why.into_iter()
            .filter(|e| e.starts_with("delivered by"))
            .collect::<Vec<_>>()
    };
    assert_eq!(delivered(trail(&rem, "alice", "e-a").await), [line]);
    // The line a server writing one per success would have written.
    let client = crate::pg::client(&url).await;
    client
        .execute(
            "INSERT INTO remind_audit (account, key, at_ms, event) SELECT account, key, at_ms, $1 FROM remind_sent",
            &[&line],
        )
        .await
        .unwrap();
    client.close().await;
    assert_eq!(delivered(trail(&rem, "alice", "e-a").await), [line]);
}
