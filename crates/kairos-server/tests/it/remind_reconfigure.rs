//! A changed fallback applies to what is already queued
//! (`src/remind/reconfigure.rs`): a new webhook URL and secret, and a new
//! delay, reach the deliveries planned before the change; a calendar with
//! a setting of its own keeps it.

use std::time::Duration;

use kairos_server::remind::webhook::signature;
use kairos_server::remind::{Channel, Fallback, Options, Reminders};

use crate::receiver;
use crate::remind::{NO_TASK, at, database, device_key, series};
use crate::remind_ops::{account, channels, item, trail};
use crate::support::Server;

fn hook(account: &str, calendar: &str, url: &str, secret: &str, mins: u64) -> Fallback {
    Fallback {
        account: account.into(),
        calendar: calendar.into(),
        channel: Channel::Webhook,
        target: url.into(),
        secret: Some(secret.into()),
        after: Duration::from_secs(mins * 60),
        always: false,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_new_url_secret_and_delay_reach_the_queued_deliveries_but_not_another_calendars() {
    let (mut old, mut new, mut own) = (
        receiver::start(&[], Duration::ZERO).await,
        receiver::start(&[], Duration::ZERO).await,
        receiver::start(&[], Duration::ZERO).await,
    );
    let server = Server::start(NO_TASK).await;
    let (e1, e2, e3) = (
        series("e1", "20261206T100000Z"),
        series("e2", "20261206T110000Z"),
        item("c2", "e3", "20261206T100000Z", None),
    );
    let items = vec![e1.clone(), e2.clone(), e3.clone()];
    let (mut dev, mut m) = account(&server, "alice", items).await;
    let rem = Reminders::open(&database(&server)).await.unwrap();
    rem.configure(hook("alice", "*", &old.url, "s1", 5))
        .await
        .unwrap();
    rem.configure(hook("alice", "c2", &own.url, "own", 5))
        .await
        .unwrap();
    assert_eq!(
        rem.replicate(at("2026-12-06T08:00:00Z"))
            .await
            .unwrap()
            .deliveries,
        3
    );
    // e2 snoozed until 11:00: its delay counts from there.
    dev.push(&[m.snooze(&device_key(&e2), at("2026-12-06T11:00:00Z"))])
        .await;
    rem.replicate(at("2026-12-06T09:00:00Z")).await.unwrap();

    // The operator moves the account's webhook and makes it 10 minutes.
    rem.configure(hook("alice", "*", &new.url, "s2", 10))
        .await
        .unwrap();
    let (ch, o) = (channels(), Options::new("test".into()));
    let d = rem
        .drain(at("2026-12-06T09:54:59Z"), &o, &ch)
        .await
        .unwrap();
    assert_eq!(
        (d.claimed, d.sent),
        (1, 1),
        "c2's own setting, still 5 minutes"
    );
    let post = own.next().await;
    assert_eq!(post.delivery, format!("alice/{}/webhook", device_key(&e3)));
    let d = rem
        .drain(at("2026-12-06T09:55:00Z"), &o, &ch)
        .await
        .unwrap();
    assert_eq!((d.claimed, d.sent), (1, 1), "e1: 09:45 + 10 min");
    let post = new.next().await;
    assert_eq!(post.delivery, format!("alice/{}/webhook", device_key(&e1)));
    let ts: i64 = post.timestamp.parse().unwrap();
    assert_eq!(
        post.signature,
        signature("s2", ts, &post.body),
        "the new secret"
    );
    let d = rem
        .drain(at("2026-12-06T11:09:59Z"), &o, &ch)
        .await
        .unwrap();
    assert_eq!(d.claimed, 0, "e2: the snooze's end + 10 min");
    let d = rem
        .drain(at("2026-12-06T11:10:00Z"), &o, &ch)
        .await
        .unwrap();
    assert_eq!((d.claimed, d.sent), (1, 1));
    assert_eq!(
        new.next().await.delivery,
        format!("alice/{}/webhook", device_key(&e2))
    );
    assert!(old.try_next().is_none(), "nothing went to the old URL");
    let trail = trail(&rem, "alice", "e1").await;
    assert!(
        trail.contains(
            &"webhook fallback changed by the operator: due 2026-12-06T09:55:00+00:00".to_owned()
        ),
        "{trail:?}"
    );
}
