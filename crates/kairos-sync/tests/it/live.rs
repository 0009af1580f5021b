//! The daemon's live connection (`live::spawn`): ops from other devices
//! are applied as they arrive and `on_applied` hears of them; local
//! changes go when the outbox is notified; `stop` ends the thread; a
//! restarted server is reconnected to and caught up from the cursor.

use std::time::{Duration, Instant};

use kairos_engine::channel::{WithdrawReason, Withdrawal};
use kairos_engine::engine::EngineEvent;
use kairos_engine::sync::keys;
use kairos_store::State;

use crate::support::{Device, EVENT, LiveClient, Server, WAIT, pair_of, shared_event};

/// How long a stop may take: the close handshake is given at most 2 s.
const STOP_BOUND: Duration = Duration::from_secs(5);

#[tokio::test]
async fn the_live_client_is_told_of_another_devices_dismissal_with_the_withdrawal() {
    let server = Server::start();
    let (mut a, mut b, key) = shared_event(&server).await;
    b.shown(&key);
    let mut live = LiveClient::spawn(&b);
    a.dismiss(&key);
    assert_eq!(a.push().await.unwrap(), 1);
    let got = live.next_applied();
    let by = a.identity().unwrap().device;
    assert_eq!((got.applied, got.ignored), (1, 0));
    assert_eq!(
        got.withdrawals,
        [Withdrawal {
            key: key.clone(),
            by: by.clone(),
            reason: WithdrawReason::Dismissed,
        }]
    );
    assert!(
        got.acknowledged
            .iter()
            .any(|e| matches!(e, EngineEvent::Acknowledged { .. })),
        "{:?}",
        got.acknowledged
    );
    assert_eq!(b.state(&key), State::Acknowledged);
    live.stop_within(STOP_BOUND);
    assert_eq!(b.status()["last_sequence"], 3, "{}", b.status());
}

#[tokio::test]
async fn a_local_dismissal_is_pushed_by_the_live_client_when_the_outbox_is_notified() {
    let server = Server::start();
    let (mut a, mut b, key) = shared_event(&server).await;
    let on_a = LiveClient::spawn(&a);
    let on_b = LiveClient::spawn(&b);
    b.dismiss(&key);
    on_b.outbox.notify_one();
    let got = on_a.next_applied();
    assert_eq!(got.applied, 1);
    assert_eq!(a.state(&key), State::Acknowledged);
    drop((on_a, on_b));
    // B may have been stopped before the server's `pushed` came back: what
    // is left goes again, and A gets nothing new from it.
    b.sync_now().await.unwrap();
    assert_eq!(b.outbox_len(), 0);
    assert_eq!(a.sync_now().await.unwrap(), (0, 0));
}

#[tokio::test]
async fn stopping_the_live_client_ends_its_thread_promptly_connected_or_not() {
    let mut server = Server::start();
    let (mut a, b) = pair_of(&server).await;
    a.import(EVENT);
    a.push().await.unwrap();
    // Connected: its catch-up brought A's ops.
    let mut live = LiveClient::spawn(&b);
    assert_eq!(live.next_applied().applied, 2);
    let took = live.stop_within(STOP_BOUND);
    assert!(took < STOP_BOUND, "{took:?}");
    // Not connected: the server is down and the client is between tries.
    server.stop();
    let mut live = LiveClient::spawn(&b);
    let took = live.stop_within(STOP_BOUND);
    assert!(took < STOP_BOUND, "{took:?}");
}

#[tokio::test]
async fn stop_ends_the_live_client_while_it_waits_for_a_silent_server() {
    let server = Server::start();
    let (_a, mut b) = pair_of(&server).await;
    // A server that takes a connection and never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("ws://{}", silent.local_addr().unwrap());
    b.store.meta_set(keys::SERVER, &url).unwrap();
    let (tx, accepted) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        // Holds the connection open, unanswered, until the test ends.
        let _ = tx.send(silent.accept().map(|(tcp, _)| tcp));
    });
    let mut live = LiveClient::spawn(&b);
    let _held = accepted.recv_timeout(WAIT).unwrap().unwrap();
    // The client waits for the upgrade's answer: stop must not wait for
    // its connection timeout (10 s) or the welcome's (15 s).
    let took = live.stop_within(STOP_BOUND);
    assert!(took < STOP_BOUND, "{took:?}");
}

#[tokio::test]
async fn a_live_client_on_a_database_that_never_joined_ends_by_itself() {
    let d = Device::new();
    let mut live = LiveClient::spawn(&d);
    live.ended_within(WAIT);
}

#[tokio::test]
async fn after_a_server_restart_the_live_client_reconnects_and_catches_up_from_its_cursor() {
    let mut server = Server::start();
    let (mut a, mut b) = pair_of(&server).await;
    a.import(EVENT);
    a.push().await.unwrap();
    let key = a.pending().pop().unwrap();
    let live = LiveClient::spawn(&b);
    assert_eq!(live.next_applied().applied, 2);
    b.shown(&key);
    // The server goes away (its sessions are closed with 1001) and comes
    // back on the same port and data; A dismisses meanwhile.
    server.restart();
    a.dismiss(&key);
    assert_eq!(a.push().await.unwrap(), 1);
    // B gets the dismissal, and only it: what it had before its cursor is
    // not sent again.
    let deadline = Instant::now() + WAIT;
    let mut ignored = 0;
    let got = loop {
        let batch = live.next_batch(deadline);
        ignored += batch.ignored;
        if batch.applied > 0 {
            break batch;
        }
    };
    assert_eq!((got.applied, got.ignored + ignored), (1, 0));
    assert_eq!(got.withdrawals.len(), 1, "{:?}", got.withdrawals);
    assert_eq!(b.state(&key), State::Acknowledged);
    assert_eq!(b.status()["last_sequence"], 3, "{}", b.status());
}
