//! `push_outbox` and `now`: a change made on one device reaches the other;
//! replays change nothing; a server that cannot be reached keeps the op in
//! the outbox.

use kairos_engine::clock::Clock;
use kairos_store::State;

use crate::support::{Device, Server, shared_event};

#[tokio::test]
async fn a_dismissal_pushed_from_one_device_acknowledges_the_reminder_on_the_other() {
    let server = Server::start();
    let (mut a, mut b, key) = shared_event(&server).await;
    a.dismiss(&key);
    assert_eq!(a.outbox_len(), 1);
    assert_eq!(a.push().await.unwrap(), 1);
    assert_eq!(a.outbox_len(), 0);
    assert_eq!(b.state(&key), State::Pending, "not before B pulls");
    assert_eq!(b.sync_now().await.unwrap(), (0, 1));
    assert_eq!(b.state(&key), State::Acknowledged);
    assert!(b.pending().is_empty());
    let by = a.identity().unwrap().device;
    let audit = b.store.audit_of(&key).unwrap();
    assert!(
        audit.iter().any(|r| r.reason.contains(&by)),
        "the audit names the device that dismissed: {audit:?}"
    );
    // B's status: at the server's head, no error.
    let status = b.status();
    assert_eq!(status["last_sequence"], 3, "{status}");
    assert_eq!(status["last_error"], serde_json::Value::Null, "{status}");
}

#[tokio::test]
async fn pushing_the_same_ops_twice_applies_them_once() {
    let server = Server::start();
    let (mut a, mut b, key) = shared_event(&server).await;
    a.dismiss(&key);
    let rows = a.store.read(|r| r.outbox_peek(100)).unwrap();
    assert_eq!(a.push().await.unwrap(), 1);
    assert_eq!(b.sync_now().await.unwrap(), (0, 1));
    let audit = b.store.audit_of(&key).unwrap().len();
    // The server's `pushed` was lost (a connection cut after the commit):
    // the op is still in A's outbox and goes again.
    let t = a.clock.now();
    a.store
        .write(|tx| {
            for r in &rows {
                tx.outbox_push(&r.op_id, &r.op, t)?;
            }
            Ok::<_, kairos_store::StoreError>(())
        })
        .unwrap();
    assert_eq!(a.push().await.unwrap(), 1, "the server answers a replay");
    assert_eq!(a.outbox_len(), 0);
    assert_eq!(
        b.sync_now().await.unwrap(),
        (0, 0),
        "stored once: nothing new"
    );
    // B replays the whole log from the start: nothing changes.
    b.store.meta_set("sync.cursor", "0").unwrap();
    assert_eq!(b.sync_now().await.unwrap(), (0, 3));
    assert_eq!(b.state(&key), State::Acknowledged);
    assert_eq!(b.store.audit_of(&key).unwrap().len(), audit);
    assert_eq!(b.status()["last_sequence"], 3);
}

#[tokio::test]
async fn an_unreachable_server_gives_a_retryable_error_and_the_op_waits_in_the_outbox() {
    let mut server = Server::start();
    let (mut a, mut b, key) = shared_event(&server).await;
    server.stop();
    a.dismiss(&key);
    let e = a.push().await.unwrap_err();
    assert!(e.is_retryable(), "{e:?}");
    assert!(e.to_string().contains(&server.url), "names the server: {e}");
    assert_eq!(a.outbox_len(), 1, "the op stays");
    assert!(
        a.status()["last_error"].as_str().is_some(),
        "{}",
        a.status()
    );
    server.restart();
    assert_eq!(a.push().await.unwrap(), 1);
    assert_eq!(a.outbox_len(), 0);
    assert_eq!(b.sync_now().await.unwrap(), (0, 1));
    assert_eq!(b.state(&key), State::Acknowledged);
}

#[tokio::test]
async fn joining_a_port_nobody_listens_on_fails_retryably_and_stores_nothing() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut d = Device::new();
    let e = d
        .join(&format!("ws://127.0.0.1:{port}"), "0000-0000-0000", "x")
        .await
        .unwrap_err();
    assert!(
        matches!(e, kairos_sync::SyncError::Connection { .. }),
        "{e:?}"
    );
    assert!(e.is_retryable());
    assert_eq!(d.identity(), None);
}

#[tokio::test]
async fn a_url_that_is_not_ws_is_refused_before_any_connection() {
    let mut d = Device::new();
    for url in ["http://127.0.0.1:1", "127.0.0.1:1", "ws://"] {
        let e = d.join(url, "0000-0000-0000", "x").await.unwrap_err();
        assert!(
            matches!(e, kairos_sync::SyncError::BadUrl(_)),
            "{url}: {e:?}"
        );
        assert!(!e.is_retryable());
    }
}
