//! Snoozes followed by the server (`src/remind/snooze.rs`): a reminder
//! snoozed on a device is not acknowledged for good; its fallback waits
//! until N after the snooze's end, and goes out then unless a device
//! dismisses the return (or snoozes again).

use std::time::Duration;

use kairos_server::remind::{Options, Reminders};

use crate::receiver;
use crate::remind::{NO_TASK, at, database, device_key, series, webhook, with_webhook};
use crate::remind_ops::{account, channels, trail};
use crate::support::Server;

#[tokio::test(flavor = "multi_thread")]
async fn a_snoozed_reminder_is_sent_n_minutes_after_the_snooze_ends_unless_its_return_is_dismissed()
{
    let mut hook = receiver::start(&[], Duration::ZERO).await;
    let server = Server::start(NO_TASK).await;
    // e1: alarm 09:45, snoozed, never acknowledged again; e2: alarm 10:45,
    // snoozed, its return dismissed; e3: alarm 11:45, snoozed twice.
    let (e1, e2, e3) = (
        series("e1", "20261206T100000Z"),
        series("e2", "20261206T110000Z"),
        series("e3", "20261206T120000Z"),
    );
    let (k1, k2, k3) = (device_key(&e1), device_key(&e2), device_key(&e3));
    let (mut dev, mut m) = account(&server, "alice", vec![e1, e2, e3]).await;
    let rem = with_webhook(&server, "alice", &hook.url, Duration::from_secs(300)).await;
    assert_eq!(
        rem.replicate(at("2026-12-06T08:00:00Z"))
            .await
            .unwrap()
            .deliveries,
        3
    );

    dev.push(&[
        m.snooze(&k1, at("2026-12-06T10:00:00Z")),
        m.snooze(&k2, at("2026-12-06T11:00:00Z")),
        m.snooze(&k3, at("2026-12-06T12:00:00Z")),
    ])
    .await;
    let round = rem.replicate(at("2026-12-06T09:46:00Z")).await.unwrap();
    assert_eq!((round.snoozed, round.acked), (3, 0), "{round:?}");
    dev.push(&[m.dismiss(&k2), m.snooze(&k3, at("2026-12-06T12:30:00Z"))])
        .await;
    let round = rem.replicate(at("2026-12-06T09:47:00Z")).await.unwrap();
    assert_eq!((round.snoozed, round.acked), (1, 1), "{round:?}");

    let (ch, o) = (channels(), Options::new("test".into()));
    let drained = |t: &'static str| {
        let (rem, o, ch) = (&rem, &o, &ch);
        async move {
            let d = rem.drain(at(t), o, ch).await.unwrap();
            (d.claimed, d.sent)
        }
    };
    assert_eq!(
        drained("2026-12-06T09:50:00Z").await,
        (0, 0),
        "moved, not due"
    );
    assert_eq!(drained("2026-12-06T10:04:59Z").await, (0, 0));
    assert_eq!(
        drained("2026-12-06T10:05:00Z").await,
        (1, 1),
        "snooze end + 5 min"
    );
    let body: serde_json::Value = serde_json::from_slice(&hook.next().await.body).unwrap();
    assert_eq!(body["key"], k1.as_str());
    assert_eq!(
        drained("2026-12-06T12:34:59Z").await,
        (0, 0),
        "e2 dismissed; e3 moved twice"
    );
    assert_eq!(drained("2026-12-06T12:35:00Z").await, (1, 1));
    let body: serde_json::Value = serde_json::from_slice(&hook.next().await.body).unwrap();
    assert_eq!(body["key"], k3.as_str());
    assert!(hook.try_next().is_none());

    let t1 = trail(&rem, "alice", "e1").await;
    assert_eq!(
        t1[1..3],
        [
            "snoozed on a device until 2026-12-06T10:00:00+00:00",
            "webhook fallback waits for the snooze: due 2026-12-06T10:05:00+00:00"
        ],
        "{t1:?}"
    );
    assert_eq!(
        trail(&rem, "alice", "e2").await.last().unwrap(),
        "acknowledged by a device"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_snooze_that_arrives_before_the_plan_sets_the_due_time_and_a_dismissal_still_wins() {
    let server = Server::start(NO_TASK).await;
    let (e1, e2) = (
        series("e1", "20261206T100000Z"),
        series("e2", "20261206T110000Z"),
    );
    let (k1, k2) = (device_key(&e1), device_key(&e2));
    // Pushed before the account opts in: the round reads them all at once.
    // e2's dismissal comes first and its later snooze changes nothing.
    let (mut dev, mut m) = account(&server, "bob", vec![e1, e2]).await;
    dev.push(&[
        m.snooze(&k1, at("2026-12-06T10:10:00Z")),
        m.dismiss(&k2),
        m.snooze(&k2, at("2026-12-06T11:10:00Z")),
    ])
    .await;
    let rem = Reminders::open(&database(&server)).await.unwrap();
    rem.configure(webhook(
        "bob",
        "http://127.0.0.1:9/",
        Duration::from_secs(60),
    ))
    .await
    .unwrap();
    let round = rem.replicate(at("2026-12-06T08:00:00Z")).await.unwrap();
    assert_eq!((round.planned, round.deliveries), (2, 1), "{round:?}");
    let rows = rem.instances("bob").await.unwrap();
    let states: Vec<_> = rows
        .iter()
        .map(|r| (r.key.clone(), r.state.clone()))
        .collect();
    assert_eq!(
        states,
        [(k1.clone(), "pending".to_owned()), (k2, "acked".to_owned())]
    );
    let (ch, o) = (channels(), Options::new("test".into()));
    let early = rem
        .drain(at("2026-12-06T10:10:59Z"), &o, &ch)
        .await
        .unwrap();
    assert_eq!(
        early.claimed, 0,
        "due at the snooze's end + 1 min, not 09:46"
    );
    let next = rem.next_due().await.unwrap();
    assert_eq!(next, Some(at("2026-12-06T10:11:00Z").timestamp_millis()));
}
