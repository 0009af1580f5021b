//! Fallback deliveries: a webhook POST, signed, when no device acknowledged
//! a reminder N minutes after it fired; retries 10 s / 30 s / 2 min, then
//! abandoned with the reason; exactly once per instance and channel, also
//! across two instances on one PostgreSQL with one killed mid-drain.

// Elsewhere the kill test (Unix only) is the only user of some helpers.
#![cfg_attr(not(unix), allow(dead_code, unused_imports))]

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::Utc;
use kairos_server::remind::webhook::{Poster, signature};
use kairos_server::remind::{Channels, Options, Reminders};
use tokio::process::Command;

use crate::receiver;
use crate::remind::{NO_TASK, at, database, device_key, series, webhook, with_webhook};
use crate::support::{BIN, Maker, Server};

fn channels() -> Channels {
    Channels {
        poster: Poster::new().unwrap(),
        mailer: None,
    }
}

fn opts() -> Options {
    Options::new("test".into())
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unacknowledged_reminder_is_posted_signed_after_n_minutes_and_an_acknowledged_one_is_not()
 {
    let mut hook = receiver::start(&[], Duration::ZERO).await;
    let server = Server::start(NO_TASK).await;
    let (id, token) = server.device("alice", "laptop").await;
    let mut dev = server.connect(&token).await;
    dev.hello(0).await;
    let mut m = Maker::new(&id);
    let (e1, e2) = (
        series("e1", "20261206T100000Z"),
        series("e2", "20261206T110000Z"),
    );
    dev.push(&[m.calendar("c1", "Work"), m.op(e1.clone()), m.op(e2.clone())])
        .await;
    let rem = with_webhook(&server, "alice", &hook.url, Duration::from_secs(300)).await;
    let round = rem.replicate(at("2026-12-06T08:00:00Z")).await.unwrap();
    assert_eq!(round.deliveries, 2);

    // e2 is dismissed on a device before its time: never posted.
    dev.push(&[m.dismiss(&device_key(&e2))]).await;
    assert_eq!(
        rem.replicate(at("2026-12-06T08:00:01Z"))
            .await
            .unwrap()
            .acked,
        1
    );

    let (ch, o) = (channels(), opts());
    let early = rem
        .drain(at("2026-12-06T09:49:59Z"), &o, &ch)
        .await
        .unwrap();
    assert_eq!(early.claimed, 0, "N minutes after it fired, not before");
    let d = rem
        .drain(at("2026-12-06T09:50:00Z"), &o, &ch)
        .await
        .unwrap();
    assert_eq!((d.claimed, d.sent), (1, 1), "{d:?}");
    let post = hook.next().await;
    let key = device_key(&e1);
    assert_eq!(post.delivery, format!("alice/{key}/webhook"));
    let ts: i64 = post.timestamp.parse().unwrap();
    assert_eq!(
        post.signature,
        signature("s3cret", ts, &post.body),
        "signed"
    );
    let body: serde_json::Value = serde_json::from_slice(&post.body).unwrap();
    assert_eq!(body["key"], key.as_str());
    assert_eq!(body["reminder"]["summary"], "Talk e1");
    assert_eq!(body["due"], "2026-12-06T09:45:00Z");

    let d = rem
        .drain(at("2026-12-06T12:00:00Z"), &o, &ch)
        .await
        .unwrap();
    assert_eq!((d.claimed, d.sent), (0, 0), "e1 once; e2 was cancelled");
    assert!(hook.try_next().is_none());
    let trail: Vec<_> = rem
        .why(&key)
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.2)
        .collect();
    assert!(trail[0].starts_with("planned"), "{trail:?}");
    assert!(
        trail
            .last()
            .unwrap()
            .starts_with("delivered by webhook (attempt 1"),
        "{trail:?}"
    );
    let trail: Vec<_> = rem
        .why(&device_key(&e2))
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.2)
        .collect();
    assert_eq!(trail.last().unwrap(), "acknowledged by a device");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_webhook_is_retried_at_10s_30s_2min_then_abandoned_with_the_reason() {
    let mut flaky = receiver::start(&[503, 503, 503, 503], Duration::ZERO).await;
    let mut gone = receiver::start(&[404], Duration::ZERO).await;
    let server = Server::start(NO_TASK).await;
    let rem = Reminders::open(&database(&server)).await.unwrap();
    for (account, url) in [("alice", &flaky.url), ("bob", &gone.url)] {
        let (id, token) = server.device(account, "laptop").await;
        let mut dev = server.connect(&token).await;
        dev.hello(0).await;
        let mut m = Maker::new(&id);
        dev.push(&[
            m.calendar("c1", "Work"),
            m.op(series("e1", "20261206T100000Z")),
        ])
        .await;
        rem.configure(webhook(account, url, Duration::ZERO))
            .await
            .unwrap();
    }
    assert_eq!(
        rem.replicate(at("2026-12-06T08:00:00Z"))
            .await
            .unwrap()
            .deliveries,
        2
    );
    let (ch, o) = (channels(), opts());
    let t0 = at("2026-12-06T09:45:00Z");
    let d = rem.drain(t0, &o, &ch).await.unwrap();
    assert_eq!(
        (d.retried, d.abandoned),
        (1, 1),
        "503 retryable, 404 permanent"
    );
    flaky.next().await;
    gone.next().await;
    let secs = |s: i64| t0 + chrono::Duration::seconds(s);
    // Each retry is due its wait after the failure (plus the few ms the
    // attempt took): one second early finds nothing, one second late finds it.
    for (early, late) in [(9, 11), (40, 42), (161, 163)] {
        assert_eq!(
            rem.drain(secs(early), &o, &ch).await.unwrap().claimed,
            0,
            "{early}"
        );
        let d = rem.drain(secs(late), &o, &ch).await.unwrap();
        assert_eq!(d.claimed, 1, "{late}");
        flaky.next().await;
        if late == 163 {
            assert_eq!(d.abandoned, 1, "the fourth failure gives up");
        } else {
            assert_eq!(d.retried, 1);
        }
    }
    assert_eq!(rem.drain(secs(3600), &o, &ch).await.unwrap().claimed, 0);
    let key = rem.instances("alice").await.unwrap()[0].key.clone();
    let trail = rem.why(&key).await.unwrap();
    let last = |account: &str| {
        trail
            .iter()
            .rev()
            .find(|t| t.0 == account)
            .map(|t| t.2.clone())
            .unwrap()
    };
    assert_eq!(
        last("alice"),
        "webhook abandoned after attempt 4: gave up after 4 attempts: HTTP 503"
    );
    assert_eq!(
        last("bob"),
        "webhook abandoned after attempt 1: permanent: HTTP 404"
    );
}

/// `kairos-server fallback` on `server`'s store.
pub async fn fallback(server: &Server, args: &[&str]) {
    let out = Command::new(BIN)
        .arg("--data")
        .arg(&server.data)
        .args(server.database.iter().flat_map(|url| ["--database", url]))
        .arg("fallback")
        .args(args)
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

// SIGKILL and SIGTERM (nix): Unix only.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn two_instances_deliver_each_reminder_once_and_take_over_a_killed_ones_claims() {
    const N: usize = 300;
    // A slow receiver (25 ms an answer), so the drain is still running
    // when one instance is killed.
    let mut hook = receiver::start(&[], Duration::from_millis(25)).await;
    let dir = tempfile::tempdir().unwrap();
    let url = crate::pg::database().await;
    // No rate limit: 300 reminders of one account at once is the point.
    let args = [
        "--remind-lease-ms",
        "2000",
        "--remind-poll-ms",
        "100",
        "--remind-per-minute",
        "0",
    ];
    let mut one = Server::start_pg(&dir.path().join("one"), &url, &args).await;
    let two = Server::start_pg(&dir.path().join("two"), &url, &args).await;
    let (id, token) = two.device("alice", "laptop").await;
    fallback(
        &two,
        &[
            "alice",
            "--webhook",
            &hook.url,
            "--secret",
            "k",
            "--after-mins",
            "0",
        ],
    )
    .await;
    let mut dev = two.connect(&token).await;
    dev.hello(0).await;
    let mut m = Maker::new(&id);
    // Every alarm fired a minute ago: all due at once.
    let start = (Utc::now() + chrono::Duration::minutes(14))
        .format("%Y%m%dT%H%M%SZ")
        .to_string();
    let mut ops = vec![m.calendar("c1", "Work")];
    ops.extend((0..N).map(|i| m.op(series(&format!("e{i}"), &start))));
    for chunk in ops.chunks(100) {
        dev.push(chunk).await;
    }

    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut two = two;
    let mut killed = None;
    while seen.len() < N {
        let post = hook.next().await;
        *seen.entry(post.delivery).or_default() += 1;
        if killed.is_none() && seen.len() >= N / 5 {
            one.signal(nix::sys::signal::Signal::SIGKILL);
            one.exit().await;
            killed = Some(std::time::Instant::now());
        }
    }
    // The killed instance's claims were taken over once its 2 s lease ran
    // out (plus a poll and the sends).
    let takeover = killed.unwrap().elapsed();
    assert!(takeover < Duration::from_secs(6), "{takeover:?}");
    // The survivor stops after recording what it sent (its task finishes
    // its round on SIGTERM).
    two.signal(nix::sys::signal::Signal::SIGTERM);
    assert!(two.exit().await.success());
    // Exactly once in the store: one success per instance and channel.
    let client = crate::pg::client(&url).await;
    let row = client
        .query_one(
            "SELECT count(*), count(DISTINCT key), (SELECT count(*) FROM remind_delivery WHERE state <> 'delivered') FROM remind_sent",
            &[],
        )
        .await
        .unwrap();
    let (sent, distinct, other): (i64, i64, i64) = (row.get(0), row.get(1), row.get(2));
    assert_eq!(
        (sent, distinct, other),
        (N as i64, N as i64, 0),
        "0 lost, 0 stored twice"
    );
    client.close().await;
    // A POST the killed instance had in flight may reach the receiver and
    // be sent again by the instance that took its claim over: at most one
    // batch in flight, never more, and each carries the same delivery id.
    let repeated = seen.values().filter(|&&n| n > 1).count();
    assert!(
        repeated <= Options::new(String::new()).concurrency,
        "{repeated} repeated"
    );
    eprintln!(
        "two instances, {N} reminders: all delivered {takeover:?} after the kill, {repeated} POSTs repeated"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_fallback_settings_and_unknown_keys_are_refused_by_name() {
    let server = Server::start(&[]).await;
    server.device("alice", "laptop").await;
    let run = |args: Vec<&'static str>| {
        let mut c = Command::new(BIN);
        c.arg("--data").arg(&server.data);
        c.args(server.database.iter().flat_map(|url| ["--database", url]));
        c.args(args);
        async move { c.output().await.unwrap() }
    };
    for (args, says) in [
        (
            vec!["fallback", "nobody", "--email", "a@b.c"],
            "does the account exist?",
        ),
        (
            vec!["fallback", "alice", "--webhook", "ftp://x", "--secret", "s"],
            "must be an http:// or https:// URL",
        ),
        (
            vec!["fallback", "alice", "--email", "not-an-address"],
            "is not an e-mail address",
        ),
        (
            vec![
                "fallback",
                "alice",
                "--email",
                "a@b.c",
                "--zone",
                "Mars/Olympus",
            ],
            "\"Mars/Olympus\" is not an IANA time zone name",
        ),
        (
            vec!["why", "c1/e1/2026-12-06T10:00:00Z/#0@1"],
            "no reminder",
        ),
    ] {
        let out = run(args.clone()).await;
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let out = run(vec!["fallback", "alice", "--email", "a@b.c", "--always"]).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["channel"].as_str(), v["always"].as_bool()),
        (Some("email"), Some(true))
    );
}
