//! The gate shared by every instance on one PostgreSQL (`src/remind/
//! shared.rs`): an account's rate is the same whatever the number of
//! instances, a destination one instance found down is down for the
//! others, a probe held by an instance that died stops holding after its
//! time; and replication runs beside the drain, so a stuck round holds
//! back no due delivery. PostgreSQL in either run (several instances);
//! `now` is the test's, except in the last test, which runs the real task.

use std::time::Duration;

use chrono::{DateTime, Utc};
use kairos_server::remind::gate::Limits;
use kairos_server::remind::{Drained, Options, Reminders};
use kairos_server::store::Database;

use crate::receiver;
use crate::remind::{NO_TASK, at, series, webhook};
use crate::remind_ops::{NO_LIMITS, account, channels, item, serial};
use crate::remind_send::fallback;
use crate::support::{Client, Maker, Server, WAIT};

/// A server (for the accounts) and two instances' reminder sides on one
/// fresh PostgreSQL database.
async fn two_instances(dir: &std::path::Path) -> (Server, String, Reminders, Reminders) {
    let url = crate::pg::database().await;
    let server = Server::start_pg(&dir.join("server"), &url, NO_TASK).await;
    let db = Database::Postgres(url.clone());
    let one = Reminders::open(&db).await.unwrap();
    let two = Reminders::open(&db).await.unwrap();
    (server, url, one, two)
}

/// Two instances (see [`two_instances`]) and account alice with one event
/// per uid in `c1` at 10:00 on 2030-01-07, a webhook to `hook` for her
/// reminders (15 min before), replicated by instance one. The server and
/// alice's device are returned to be kept alive.
async fn alice_on_two(
    dir: &std::path::Path,
    hook: &str,
    uids: &[String],
) -> (Server, (Client, Maker), Reminders, Reminders) {
    let (server, _url, one, two) = two_instances(dir).await;
    let s = "20300107T100000Z";
    let items = uids.iter().map(|u| item("c1", u, s, None)).collect();
    let alice = account(&server, "alice", items).await;
    one.configure(webhook("alice", hook, Duration::ZERO))
        .await
        .unwrap();
    one.replicate(at("2030-01-07T08:00:00Z")).await.unwrap();
    (server, alice, one, two)
}

fn named(owner: &str, limits: Limits, batch: usize) -> Options {
    let mut o = serial(limits, batch);
    o.owner = owner.into();
    o
}

/// Drains until a claim comes back empty.
async fn drain_all(rem: &Reminders, now: DateTime<Utc>, o: &Options) -> Drained {
    let ch = channels();
    let mut all = Drained::default();
    loop {
        let d = rem.drain(now, o, &ch).await.unwrap();
        if d.claimed == 0 {
            return all;
        }
        all.claimed += d.claimed;
        all.sent += d.sent;
        all.deferred += d.deferred;
        all.retried += d.retried;
    }
}

fn dest_of(url: &str) -> String {
    url.trim_start_matches("http://")
        .trim_end_matches("/hook")
        .to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn two_instances_give_an_account_its_rate_once_not_once_each() {
    const N: usize = 4;
    let mut hook = receiver::start(&[], Duration::ZERO).await;
    let dir = tempfile::tempdir().unwrap();
    let uids: Vec<String> = (0..3 * N).map(|i| format!("e{i:02}")).collect();
    let (_server, _alice, one, two) = alice_on_two(dir.path(), &hook.url, &uids).await;
    let limits = Limits {
        per_minute: u32::try_from(N).unwrap(),
        ..NO_LIMITS
    };
    // Small batches, so both instances claim part of each step.
    let (o1, o2) = (named("one", limits, 3), named("two", limits, 3));
    let t0 = at("2030-01-07T09:45:00Z");
    // N at once, then a token every 60/N = 15 s: for both together what
    // one instance alone would give (each with a bucket of its own: 2N at
    // once).
    let mut sent = 0;
    for step in 0..=2 * N {
        let now = t0 + chrono::Duration::seconds(15 * i64::try_from(step).unwrap());
        let (a, b) = tokio::join!(drain_all(&one, now, &o1), drain_all(&two, now, &o2));
        sent += a.sent + b.sent;
        assert_eq!(sent, N + step, "at step {step}: {a:?} {b:?}");
        if step == 0 {
            assert_eq!(
                a.deferred + b.deferred,
                2 * N,
                "the rest deferred, once each"
            );
        }
    }
    // None lost, none twice.
    let mut got = Vec::new();
    while let Some(p) = hook.try_next() {
        got.push(p.delivery);
    }
    got.sort();
    got.dedup();
    assert_eq!(got.len(), 3 * N);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_destination_one_instance_found_down_is_deferred_by_the_other_without_a_send() {
    // Two 503s, then the destination is back.
    let mut hook = receiver::start(&[503, 503], Duration::ZERO).await;
    let dir = tempfile::tempdir().unwrap();
    let uids = ["a", "b", "c", "d"].map(String::from);
    let (_server, _alice, one, two) = alice_on_two(dir.path(), &hook.url, &uids).await;
    let limits = Limits {
        failures: 2,
        ..NO_LIMITS
    };
    let (o1, o2) = (named("one", limits, 2), named("two", limits, 10));
    let t0 = at("2030-01-07T09:45:00Z");
    let ch = channels();

    let d = one.drain(t0, &o1, &ch).await.unwrap();
    assert_eq!(d.retried, 2, "{d:?}");
    hook.next().await;
    hook.next().await;
    let dest = dest_of(&hook.url);
    assert_eq!(one.open_circuits(), [dest.as_str()]);

    // Instance two has sent nothing there; it learns from the store.
    let d = two
        .drain(t0 + chrono::Duration::seconds(1), &o2, &ch)
        .await
        .unwrap();
    assert_eq!((d.claimed, d.deferred, d.sent), (2, 2, 0), "{d:?}");
    assert!(
        hook.try_next().is_none(),
        "two sent to a destination found down"
    );
    assert_eq!(two.open_circuits(), [dest.as_str()]);

    // After the cool-off: two probes, the destination answers, all go.
    let d = two
        .drain(t0 + chrono::Duration::seconds(31), &o2, &ch)
        .await
        .unwrap();
    assert_eq!((d.claimed, d.sent), (4, 4), "{d:?}");
    assert!(two.open_circuits().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_probe_held_by_an_instance_that_died_expires_and_another_probes() {
    // Two 503s open it; the probe's POST is never answered (its sender
    // dies with it); then the destination answers.
    let mut hook = receiver::start(&[503, 503, 0], Duration::ZERO).await;
    let dir = tempfile::tempdir().unwrap();
    let uids = ["a", "b", "c"].map(String::from);
    let (_server, _alice, one, two) = alice_on_two(dir.path(), &hook.url, &uids).await;
    let limits = Limits {
        failures: 2,
        ..NO_LIMITS
    };
    let t0 = at("2030-01-07T09:45:00Z");
    let secs = |s: i64| t0 + chrono::Duration::seconds(s);
    let ch = channels();
    let d = one.drain(t0, &named("one", limits, 2), &ch).await.unwrap();
    assert_eq!(d.retried, 2, "{d:?}");
    hook.next().await;
    hook.next().await;

    // Half-open 30 s after the second failure: one takes the probe and
    // dies while it is out.
    let o1 = named("one", limits, 1);
    let probing = one.drain(secs(31), &o1, &ch);
    tokio::select! {
        d = probing => panic!("the probe was answered: {d:?}"),
        _ = hook.next() => {}
    }
    drop(one);

    // Two waits while the probe is held (no send)...
    let o2 = named("two", limits, 10);
    let d = two.drain(secs(32), &o2, &ch).await.unwrap();
    assert_eq!((d.claimed, d.deferred, d.sent), (2, 2, 0), "{d:?}");
    assert!(hook.try_next().is_none());
    // ...and probes itself once the hold has run out (60 s; one's claim
    // has run out too and is taken over).
    let d = two.drain(secs(91), &o2, &ch).await.unwrap();
    assert_eq!((d.claimed, d.sent), (3, 3), "{d:?}");
    assert!(two.open_circuits().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stuck_replication_round_does_not_hold_back_a_due_delivery() {
    let mut hook = receiver::start(&[], Duration::ZERO).await;
    let dir = tempfile::tempdir().unwrap();
    let url = crate::pg::database().await;
    let one = Server::start_pg(&dir.path().join("one"), &url, NO_TASK).await;
    let (id, token) = one.device("alice", "laptop").await;
    let args = [
        "alice",
        "--webhook",
        &hook.url,
        "--secret",
        "k",
        "--after-mins",
        "0",
    ];
    fallback(&one, &args).await;
    let mut dev = one.connect(&token).await;
    dev.hello(0).await;
    let mut m = Maker::new(&id);
    // Its alarm fired a minute ago: due now.
    let start = (Utc::now() + chrono::Duration::minutes(14))
        .format("%Y%m%dT%H%M%SZ")
        .to_string();
    dev.push(&[m.calendar("c1", "Work"), m.op(series("e1", &start))])
        .await;
    let rem = Reminders::open(&Database::Postgres(url.clone()))
        .await
        .unwrap();
    assert_eq!(rem.replicate(Utc::now()).await.unwrap().deliveries, 1);

    // Every replication round now waits on this lock (it reads the
    // cursors first); the drain never touches the table.
    let mut client = crate::pg::client(&url).await;
    let lock = client.transaction().await.unwrap();
    lock.execute("LOCK TABLE remind_cursor IN ACCESS EXCLUSIVE MODE", &[])
        .await
        .unwrap();
    let args = ["--remind-poll-ms", "100"];
    let two = Server::start_pg(&dir.path().join("two"), &url, &args).await;
    let Ok(Some(post)) = tokio::time::timeout(WAIT, hook.posts.recv()).await else {
        panic!(
            "the due delivery waited for the stuck replication round; log:\n{}",
            two.log()
        );
    };
    assert!(!post.delivery.is_empty());
    // No replication round can have ended meanwhile (each reads the
    // cursors first, and the lock was held before `two` started); with
    // the drain behind the replication round in one loop, no POST comes.
    lock.rollback().await.unwrap();
    client.close().await;
    drop(two);
}
