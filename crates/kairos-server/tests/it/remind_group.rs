//! Recording a group of outcomes at once (`remind/finish.rs`): when two
//! instances send the same delivery (the first one's lease ran out while
//! its POST was still in flight), the group that records second holds
//! duplicates beside first successes; each is told apart, one success per
//! delivery is stored, and the trail says which was which. On both stores.

use std::time::Duration;

use kairos_server::remind::Reminders;

use crate::receiver;
use crate::remind::{NO_TASK, at, database, webhook};
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

/// PostgreSQL: a group in commit does not hold up the next one. Alice's
/// delivery is answered at once and its group's insert into `remind_sent`
/// waits on a row lock the test holds (an uncommitted insert of the same
/// key, as another instance's slow commit would); Bob's, answered a second
/// later, is a group of its own and must be committed meanwhile. With one
/// group in commit at a time it waits behind Alice's until the test lets
/// go. (SQLite has one writer: its groups commit one after another.)
#[tokio::test(flavor = "multi_thread")]
async fn a_group_commits_while_an_earlier_group_waits_in_its_commit() {
    let server = Server::start(NO_TASK).await;
    let Some(url) = server.database.clone() else {
        return;
    };
    let fast = receiver::start(&[], Duration::ZERO).await;
    let slow = receiver::start(&[], Duration::from_secs(1)).await;
    let s = "20300107T100000Z";
    let _a = account(&server, "alice", vec![item("c1", "e-a", s, None)]).await;
    let _b = account(&server, "bob", vec![item("c1", "e-b", s, None)]).await;
    let db = database(&server);
    let rem = Reminders::open(&db).await.unwrap();
    for (who, hook) in [("alice", &fast), ("bob", &slow)] {
        rem.configure(webhook(who, &hook.url, Duration::ZERO))
            .await
            .unwrap();
    }
    rem.replicate(at("2030-01-07T08:00:00Z")).await.unwrap();
    let key = |who: &'static str| {
        let rem = &rem;
        async move { rem.instances(who).await.unwrap()[0].key.clone() }
    };
    let (ka, kb) = (key("alice").await, key("bob").await);

    // The test's transaction inserts Alice's success, uncommitted.
    let (mut c, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    let conn = tokio::spawn(conn);
    let tx = c.transaction().await.unwrap();
    tx.execute(
        "INSERT INTO remind_sent (account, key, channel, at_ms, owner)
         VALUES ('alice', $1, 'webhook', 0, 'test')",
        &[&ka],
    )
    .await
    .unwrap();

    let mut o = serial(NO_LIMITS, 2);
    o.concurrency = 2;
    let t0 = at("2030-01-07T09:45:00Z");
    let drain = tokio::spawn(async move { rem.drain(t0, &o, &channels()).await });
    // Bob's success is committed (seen from another connection) while
    // Alice's group still waits on the test's lock.
    let (reader, conn2) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    let conn2 = tokio::spawn(conn2);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let n: i64 = reader
            .query_one(
                "SELECT count(*) FROM remind_sent WHERE account = 'bob' AND key = $1",
                &[&kb],
            )
            .await
            .unwrap()
            .get(0);
        if n == 1 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "Bob's success was not committed within 15 s while Alice's group waited"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!drain.is_finished());
    // Let go: Alice's group goes in, one success each.
    tx.rollback().await.unwrap();
    let d = drain.await.unwrap().unwrap();
    assert_eq!((d.claimed, d.sent, d.duplicates), (2, 2, 0), "{d:?}");
    drop((reader, c));
    let _ = (conn.await, conn2.await);
}
