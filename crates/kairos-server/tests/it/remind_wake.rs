//! The reminder task's drain sleeps until the next delivery is due, not a
//! whole poll: a delivery due in a few seconds goes out at its time even
//! with a poll of minutes.

use std::time::Duration;

use chrono::Utc;
use kairos_server::remind::webhook::Poster;
use kairos_server::remind::{Channels, Options};
use tokio::sync::watch;

use crate::receiver;
use crate::remind::{NO_TASK, series, with_webhook};
use crate::support::{Maker, Server, WAIT};

#[tokio::test(flavor = "multi_thread")]
async fn the_drain_wakes_when_the_next_delivery_is_due_not_a_poll_later() {
    let mut hook = receiver::start(&[], Duration::ZERO).await;
    let server = Server::start(NO_TASK).await;
    let (id, token) = server.device("alice", "laptop").await;
    let mut dev = server.connect(&token).await;
    dev.hello(0).await;
    let mut m = Maker::new(&id);
    // The alarm fires 15 minutes before the start: in 3 s (whole seconds).
    let due = Utc::now() + chrono::Duration::seconds(3);
    let start = (due + chrono::Duration::minutes(15)).format("%Y%m%dT%H%M%SZ");
    dev.push(&[
        m.calendar("c1", "Work"),
        m.op(series("e1", &start.to_string())),
    ])
    .await;
    let rem = with_webhook(&server, "alice", &hook.url, Duration::ZERO).await;
    assert_eq!(rem.replicate(Utc::now()).await.unwrap().deliveries, 1);
    let next = rem.next_due().await.unwrap().expect("one pending delivery");
    assert!(next > Utc::now().timestamp_millis(), "not due yet");

    // A poll far longer than the wait: the task's first round finds
    // nothing due (and replication nothing new), then it sleeps.
    let mut opts = Options::new("test".into());
    opts.poll = Duration::from_secs(600);
    let channels = Channels {
        poster: Poster::new().unwrap(),
        mailer: None,
    };
    let (stop, stopped) = watch::channel(false);
    let task = tokio::spawn(rem.run(opts, channels, stopped));
    let post = tokio::time::timeout(WAIT, hook.posts.recv())
        .await
        .expect("the delivery waited for the poll, not for its time")
        .unwrap();
    let late = Utc::now().timestamp_millis() - next;
    assert!(late >= 0, "posted {}ms before its time", -late);
    assert!(late < 5_000, "posted {late} ms after its time");
    assert!(post.delivery.starts_with("alice/"), "{}", post.delivery);
    stop.send(true).unwrap();
    tokio::time::timeout(WAIT, task).await.unwrap().unwrap();
}
