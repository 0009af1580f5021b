//! A subscription syncs as a subscription (`calendar.feed`, issue #19 §1):
//! a real server, two device databases driven by real `kairos` processes,
//! and an HTTP feed server this test owns. The feed's events never travel
//! as series ops: each device fetches the feed itself and computes the
//! same reminder keys; acknowledgements travel as for any event.

use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{Device, Server, calendar, in_secs, lines, pair_of, run, wait_connected};
use crate::subscriptions::serve;

/// The pending reminders of the feed's events (uids `f1`…`f3`).
fn feed_keys(d: &Device) -> Vec<String> {
    let mut keys: Vec<String> = d
        .upcoming()
        .into_iter()
        .map(|(k, _)| k)
        .filter(|k| ["/f1/", "/f2/", "/f3/"].iter().any(|u| k.contains(u)))
        .collect();
    keys.sort();
    keys
}

fn sync_now(d: &Device) -> (u64, u64) {
    let v = &lines(&d.run(&["sync", "now", "--tz", "UTC"]))[0];
    (
        v["pushed"].as_u64().expect("pushed"),
        v["pulled"].as_u64().expect("pulled"),
    )
}

fn subscriptions(d: &Device) -> Vec<serde_json::Value> {
    lines(&d.run(&["subscriptions"]))
}

/// Waits for the feed server's next request (its path).
fn fetched(log: &Receiver<String>) -> String {
    log.recv_timeout(Duration::from_secs(20))
        .expect("the feed was fetched")
}

#[test]
fn a_subscription_reaches_a_device_paired_later_as_a_subscription_not_as_events() {
    let dir = tempfile::tempdir().expect("tempdir");
    let body = calendar(&[
        ("f1", &in_secs(3_600)),
        ("f2", &in_secs(2 * 3_600)),
        ("f3", &in_secs(3 * 3_600)),
    ]);
    let (base, log) = serve(Arc::new(Mutex::new((200, body))));
    // A token in the URL, as private feeds have: account data, synced.
    let url = format!("{base}/private-abc123.ics");

    // A subscribes before it ever joined an account…
    let a_db = dir.path().join("a.db");
    run(
        &a_db,
        0,
        &[
            "subscribe",
            &url,
            "--calendar",
            "Team",
            "--every",
            "1h",
            "--tz",
            "UTC",
        ],
    );
    assert_eq!(fetched(&log), "/private-abc123.ics");
    let server = Server::start(&dir.path().join("server"), "127.0.0.1:0");
    let a = Device::join(dir.path(), "a", &server, &server.invite("alice"));
    // …so joining tells the account the calendar and its subscription:
    // two ops, not one per event of the feed.
    assert_eq!(sync_now(&a), (2, 0), "calendar.put and calendar.feed only");
    let a_keys = feed_keys(&a);
    assert_eq!(a_keys.len(), 3, "{a_keys:?}");

    // B, paired later, gets the subscription and no events…
    let b = Device::join(dir.path(), "b", &server, &a.pair());
    let (_, pulled) = sync_now(&b);
    assert_eq!(pulled, 2, "B pulled the calendar and its subscription only");
    let subs = subscriptions(&b);
    assert_eq!(subs.len(), 1, "{subs:?}");
    assert_eq!(subs[0]["calendar"], "Team");
    assert_eq!(subs[0]["url"], url.as_str());
    assert_eq!(subs[0]["every_secs"], 3600);
    assert!(subs[0]["last_refresh"].is_null(), "not fetched yet");
    assert!(feed_keys(&b).is_empty());

    // …fetches the feed itself and computes the same reminder keys.
    let done = lines(&b.run(&["subscriptions", "refresh"]));
    assert_eq!(done[0]["status"], "updated", "{done:?}");
    assert_eq!(fetched(&log), "/private-abc123.ics");
    assert_eq!(feed_keys(&b), a_keys, "the same keys on both devices");
    // B's own fetch is nothing to push: its outbox holds no series op.
    assert_eq!(b.status()["outbox"], 0);
    assert_eq!(sync_now(&b).0, 0, "B pushed nothing for the feed's events");

    // A dismissal on B reaches A as for any event.
    let key = a_keys[0].clone();
    b.run(&["dismiss", &key]);
    sync_now(&a);
    assert!(
        !feed_keys(&a).contains(&key),
        "A's reminder is acknowledged"
    );
    let why = String::from_utf8_lossy(&a.run(&["why", &key]).stdout).into_owned();
    assert!(why.contains(&format!("dismissed by {}", b.id)), "{why}");

    // Removed on A: gone on B, subscription and fetched events.
    a.run(&["subscriptions", "remove", "Team"]);
    assert_eq!(a.status()["outbox"], 0, "remove pushed by itself");
    sync_now(&b);
    assert!(subscriptions(&b).is_empty(), "{:?}", subscriptions(&b));
    assert!(feed_keys(&b).is_empty(), "{:?}", feed_keys(&b));
    assert_eq!(feed_keys(&a).len(), 2, "A keeps its copy (one dismissed)");
    // The feed was fetched twice in all: once by each device.
    assert!(log.try_recv().is_err());
}

#[test]
fn a_running_daemon_fetches_a_subscription_made_on_another_device_by_itself() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_server, a, b) = pair_of(dir.path());
    let _bd = b.daemon();
    wait_connected(&b);
    let body = calendar(&[("f1", &in_secs(3_600)), ("f2", &in_secs(2 * 3_600))]);
    let (base, log) = serve(Arc::new(Mutex::new((200, body))));
    let url = format!("{base}/team.ics");
    // Subscribed on A (no daemon there: the command pushes by itself).
    a.run(&["subscribe", &url, "--calendar", "Team", "--tz", "UTC"]);
    assert_eq!(fetched(&log), "/team.ics");
    let a_keys = feed_keys(&a);
    assert_eq!(a_keys.len(), 2, "{a_keys:?}");
    // B's daemon applies the subscription and fetches the feed itself.
    assert_eq!(fetched(&log), "/team.ics", "B fetched the feed");
    b.wait_upcoming("B holds the feed's reminders", |u| {
        a_keys.iter().all(|k| u.iter().any(|(bk, _)| bk == k))
    });
    let subs = subscriptions(&b);
    assert_eq!(subs[0]["url"], url.as_str());
    assert_eq!(b.status()["outbox"], 0, "nothing of the feed to push");
}
