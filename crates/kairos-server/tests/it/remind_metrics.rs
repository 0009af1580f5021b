//! The reminder metrics on `/metrics`: the real server's reminder task
//! delivers to receivers the test owns (one answering 200, one 503, one
//! 404) and the counters are read over HTTP.

use std::time::Duration;

use chrono::Utc;
use tokio::time::{Instant, interval};

use crate::endpoints::{get, sample};
use crate::receiver;
use crate::remind::device_key;
use crate::remind_ops::item;
use crate::remind_send::fallback;
use crate::support::{Maker, Server, WAIT};

/// `YYYYMMDDTHHMMSSZ`, `d` from now.
fn from_now(d: chrono::Duration) -> String {
    (Utc::now() + d).format("%Y%m%dT%H%M%SZ").to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn metrics_count_outcomes_lateness_the_queue_and_open_circuits() {
    let mut ok = receiver::start(&[], Duration::ZERO).await;
    let mut down = receiver::start(&[503; 50], Duration::ZERO).await;
    let mut gone = receiver::start(&[404], Duration::ZERO).await;
    let server = Server::start(&[
        "--remind-poll-ms",
        "100",
        "--circuit-failures",
        "1",
        "--circuit-cooloff-secs",
        "600",
    ])
    .await;
    // Alarms 15 minutes before the start: fired a minute ago (due, and
    // late by then), or in two and three hours.
    let past = from_now(chrono::Duration::minutes(14));
    let (f1, f2) = (
        item("c1", "f1", &from_now(chrono::Duration::hours(2)), None),
        item("c1", "f2", &from_now(chrono::Duration::hours(3)), None),
    );
    let mut alice = None;
    for (account, url, uids) in [
        ("alice", &ok.url, vec!["a", "b", "c"]),
        ("bob", &down.url, vec!["d"]),
        ("carol", &gone.url, vec!["e"]),
    ] {
        let (id, token) = server.device(account, "laptop").await;
        let mut dev = server.connect(&token).await;
        dev.hello(0).await;
        let mut m = Maker::new(&id);
        let mut ops = vec![m.calendar("c1", "Work")];
        ops.extend(uids.iter().map(|u| m.op(item("c1", u, &past, None))));
        if account == "alice" {
            ops.extend([m.op(f1.clone()), m.op(f2.clone())]);
        }
        dev.push(&ops).await;
        fallback(
            &server,
            &[
                account,
                "--webhook",
                url,
                "--secret",
                "k",
                "--after-mins",
                "0",
            ],
        )
        .await;
        if account == "alice" {
            alice = Some((dev, m));
        }
    }
    for _ in 0..3 {
        ok.next().await;
    }
    down.next().await;
    gone.next().await;
    // Alice's round planned f1 with a, b and c: a device dismisses it now.
    let (mut dev, mut m) = alice.unwrap();
    dev.push(&[m.dismiss(&device_key(&f1))]).await;

    let down_dest = down
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/hook")
        .to_owned();
    let expect = [
        (
            "kairos_remind_deliveries_total{channel=\"webhook\",outcome=\"delivered\"}",
            3.0,
        ),
        (
            "kairos_remind_deliveries_total{channel=\"webhook\",outcome=\"retried\"}",
            1.0,
        ),
        (
            "kairos_remind_deliveries_total{channel=\"webhook\",outcome=\"abandoned\"}",
            1.0,
        ),
        (
            "kairos_remind_deliveries_total{channel=\"webhook\",outcome=\"cancelled_ack\"}",
            1.0,
        ),
        (
            "kairos_remind_deliveries_total{channel=\"email\",outcome=\"delivered\"}",
            0.0,
        ),
        ("kairos_remind_missed_total", 1.0),
        ("kairos_remind_duplicates_total", 0.0),
        ("kairos_remind_on_time_total", 0.0),
        ("kairos_remind_late_total", 3.0),
        ("kairos_remind_latency_seconds_count", 3.0),
        ("kairos_remind_latency_seconds_bucket{le=\"30\"}", 0.0),
        ("kairos_remind_latency_seconds_bucket{le=\"120\"}", 3.0),
        // f2, and bob's retry (deferred while his destination is open).
        ("kairos_remind_queue_depth{when=\"future\"}", 2.0),
        ("kairos_remind_queue_depth{when=\"due\"}", 0.0),
        ("kairos_remind_circuits_open", 1.0),
        (
            &format!("kairos_remind_circuit_open{{destination=\"{down_dest}\"}}") as &str,
            1.0,
        ),
    ]
    .map(|(k, v)| (k.to_owned(), v));
    // The gauges follow the task's rounds: read until they settle.
    let deadline = Instant::now() + WAIT;
    let mut tick = interval(Duration::from_millis(100));
    let text = loop {
        tick.tick().await;
        let (status, text) = get(server.addr(), "/metrics").await;
        assert_eq!(status, 200);
        let settled = expect.iter().all(|(k, v)| {
            text.lines().any(|l| {
                l.strip_prefix(k.as_str())
                    .and_then(|r| r.strip_prefix(' '))
                    .and_then(|n| n.parse::<f64>().ok())
                    == Some(*v)
            })
        });
        if settled || Instant::now() > deadline {
            break text;
        }
    };
    for (k, v) in &expect {
        assert_eq!(sample(&text, k), *v, "{k} in\n{text}");
    }
    assert!(ok.try_next().is_none() && gone.try_next().is_none());
}
