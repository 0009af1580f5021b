//! The live client's published state (`LinkState` on a `watch`): what the
//! desktop's status bar and tray show. Every wait is on the channel, with
//! a bound.

use std::time::Duration;

use kairos_sync::{Phase, Tls};

use crate::support::{Device, EVENT, LiveClient, Server, WAIT, now, pair_of};

/// Reconnecting after the server returns: the backoff may have reached
/// 8–16 s while it was away.
const BACK: Duration = Duration::from_secs(40);

#[tokio::test]
async fn the_state_goes_offline_when_the_server_stops_counts_what_waits_and_is_connected_again() {
    let mut server = Server::start();
    let (mut a, _b) = pair_of(&server).await;
    let mut live = LiveClient::spawn(&a);
    let up = live
        .state_within(WAIT, "connected", |s| s.phase == Phase::Connected)
        .await;
    assert_eq!((up.last_sync_at, up.outbox), (Some(now()), 0));

    server.stop();
    let down = live
        .state_within(WAIT, "offline", |s| {
            matches!(s.phase, Phase::Offline { .. })
        })
        .await;
    let Phase::Offline { since, reason } = &down.phase else {
        unreachable!("matched above")
    };
    assert_eq!(*since, now());
    assert!(!reason.is_empty());

    // A change made offline waits in the outbox, and the state says so.
    a.import(EVENT);
    live.outbox.notify_one();
    let waiting = live
        .state_within(WAIT, "2 waiting", |s| s.outbox == 2)
        .await;
    assert!(
        matches!(waiting.phase, Phase::Offline { .. }),
        "{waiting:?}"
    );

    server.resume();
    let back = live
        .state_within(BACK, "connected with nothing waiting", |s| {
            s.phase == Phase::Connected && s.outbox == 0
        })
        .await;
    assert_eq!(back.last_sync_at, Some(now()));
    assert_eq!(a.outbox_len(), 0);
}

#[tokio::test]
async fn a_revoked_device_shows_an_error_with_the_servers_reason() {
    let server = Server::start();
    let (a, b) = pair_of(&server).await;
    let mut live = LiveClient::spawn(&b);
    live.state_within(WAIT, "connected", |s| s.phase == Phase::Connected)
        .await;
    let victim = b.identity().unwrap().device;
    kairos_sync::revoke(&a.store, &victim, &Tls::default())
        .await
        .unwrap();
    let refused = live
        .state_within(WAIT, "an error", |s| matches!(s.phase, Phase::Error { .. }))
        .await;
    let Phase::Error { reason, .. } = &refused.phase else {
        unreachable!("matched above")
    };
    assert!(reason.contains("device revoked"), "{reason}");
}

#[tokio::test]
async fn a_database_that_never_joined_is_not_paired() {
    let d = Device::new();
    let mut live = LiveClient::spawn(&d);
    live.ended_within(WAIT);
    assert_eq!(live.state.borrow().phase, Phase::NotPaired);
}
