//! The host's loop refreshes a due subscription by itself and tells the
//! host the calendar changed.

use std::sync::Arc;
use std::time::Duration as StdDuration;

use chrono::Duration;
use kairos_engine::clock::ManualClock;
use kairos_feeds::Limits;
use kairos_feeds::runner::{Runner, spawn};
use tokio::sync::{Notify, watch};

use crate::server::{Reply, Request, Server};
use crate::{event, feed, now, refresher, stored, subscription, with_etag};

#[tokio::test]
async fn a_due_subscription_is_refreshed_by_the_loop() {
    let v1 = feed(&[event("a@t", "One", "20261201T120000Z")]);
    let server = Server::start(with_etag(v1, "\"v1\"")).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("kairos.db");
    let mut store = kairos_store::Store::open(&path).expect("open");
    refresher(Limits::default())
        .subscribe(
            &mut store,
            &server.url("/f"),
            Some("Team"),
            Duration::hours(1),
            now(),
        )
        .await
        .expect("subscribe");
    let v2 = feed(&[event("b@t", "Two", "20261201T130000Z")]);
    server.set(with_etag(v2, "\"v2\""));

    // An hour and a bit later (past any jitter), the loop refreshes alone.
    let clock = Arc::new(ManualClock::new(now() + Duration::minutes(67)));
    let (stop, stopped) = watch::channel(false);
    let (changed_tx, mut changed) = tokio::sync::mpsc::unbounded_channel();
    let thread = spawn(Runner {
        db: path.clone(),
        clock,
        floating: chrono_tz::UTC,
        horizon: Duration::hours(48),
        limits: Limits::default(),
        wake: Arc::new(Notify::new()),
        stop: stopped,
        on_changed: Box::new(move || {
            let _ = changed_tx.send(());
        }),
    })
    .expect("spawn");
    tokio::time::timeout(StdDuration::from_secs(30), changed.recv())
        .await
        .expect("refreshed within 30 s")
        .expect("changed");
    let uids: Vec<String> = stored(&store, "Team").into_iter().map(|(u, _)| u).collect();
    assert_eq!(uids, ["b@t"]);
    assert_eq!(
        subscription(&store, "Team").last_refresh,
        Some(now() + Duration::minutes(67))
    );
    stop.send(true).expect("stop");
    thread.join().expect("join");
}

#[tokio::test]
async fn stopping_cancels_a_fetch_in_flight() {
    let v1 = feed(&[event("a@t", "One", "20261201T120000Z")]);
    let server = Server::start(with_etag(v1, "\"v1\"")).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("kairos.db");
    let mut store = kairos_store::Store::open(&path).expect("open");
    refresher(Limits::default())
        .subscribe(
            &mut store,
            &server.url("/f"),
            Some("Team"),
            Duration::hours(1),
            now(),
        )
        .await
        .expect("subscribe");
    // The server now never answers; the fetch's own timeout is 60 s.
    server.set(Arc::new(|_: &Request| Reply::Stall));
    let hit = server.hit.notified();
    let (stop, stopped) = watch::channel(false);
    let thread = spawn(Runner {
        db: path.clone(),
        clock: Arc::new(ManualClock::new(now() + Duration::minutes(67))),
        floating: chrono_tz::UTC,
        horizon: Duration::hours(48),
        limits: Limits::default(),
        wake: Arc::new(Notify::new()),
        stop: stopped,
        on_changed: Box::new(|| {}),
    })
    .expect("spawn");
    tokio::time::timeout(StdDuration::from_secs(30), hit)
        .await
        .expect("the loop fetched");
    let asked = std::time::Instant::now();
    stop.send(true).expect("stop");
    tokio::task::spawn_blocking(move || thread.join().expect("join"))
        .await
        .expect("joined");
    assert!(
        asked.elapsed() < StdDuration::from_secs(5),
        "{:?}",
        asked.elapsed()
    );
    let sub = subscription(&store, "Team");
    assert_eq!(
        sub.last_refresh,
        Some(now()),
        "nothing recorded for the cancelled fetch"
    );
    assert_eq!(stored(&store, "Team").len(), 1);
}
