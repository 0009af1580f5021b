//! `join`, `pair`, `devices`, `revoke`, `leave` against the real server.

use std::time::Duration;

use kairos_sync::{SyncError, Tls};

use crate::support::{Device, EVENT, Server, pair_of};

/// The refusal's HTTP status and the server's reason.
fn refusal(e: &SyncError) -> (u16, &str) {
    match e {
        SyncError::Refused {
            status, message, ..
        } => (*status, message.as_str()),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn pair_gives_a_code_another_device_joins_with_and_both_see_each_other() {
    let server = Server::start();
    let (a, b) = pair_of(&server).await;
    let (ia, ib) = (a.identity().unwrap(), b.identity().unwrap());
    assert_eq!(
        (ia.account.as_str(), ib.account.as_str()),
        ("alice", "alice")
    );
    assert_ne!(ia.device, ib.device);
    assert_eq!(ib.server, server.url);
    let list = kairos_sync::devices(&b.store, &Tls::default())
        .await
        .unwrap();
    let mut names: Vec<(&str, &str)> = list
        .iter()
        .map(|d| (d.device.as_str(), d.name.as_str()))
        .collect();
    names.sort_unstable();
    let mut want = vec![
        (ia.device.as_str(), "laptop"),
        (ib.device.as_str(), "desktop"),
    ];
    want.sort_unstable();
    assert_eq!(names, want);
    assert!(list.iter().all(|d| !d.revoked));
    let status = b.status();
    assert_eq!(status["paired"], true);
    assert_eq!(status["device"], ib.device.as_str());
}

#[tokio::test]
async fn wrong_used_and_expired_codes_are_refused_with_the_reason_and_store_nothing() {
    let server = Server::start();
    let code = server.invite();
    let mut first = Device::new();
    first.join(&server.url, &code, "first").await.unwrap();
    let expired = server.invite_for("alice", Duration::ZERO);
    for (code, reason) in [
        ("0000-0000-0000", "unknown pairing code"),
        (code.as_str(), "pairing code already used"),
        (expired.as_str(), "pairing code expired"),
    ] {
        // A device that keeps events already: a failed join records none
        // of them for sync.
        let mut d = Device::new();
        d.import(EVENT);
        let e = d.join(&server.url, code, "thief").await.unwrap_err();
        assert_eq!(refusal(&e), (401, reason), "{code}");
        assert!(e.to_string().contains(reason), "{e}");
        assert!(!e.is_retryable(), "{e}");
        assert_eq!(d.identity(), None, "{code}");
        assert_eq!(d.outbox_len(), 0, "{code}");
        assert_eq!(d.status()["paired"], false);
    }
}

#[tokio::test]
async fn a_code_typed_in_lower_case_without_dashes_still_joins() {
    let server = Server::start();
    let code = server.invite().replace('-', "").to_lowercase();
    let mut d = Device::new();
    let id = d
        .join(&server.url, &format!("  {code} "), "typed")
        .await
        .unwrap();
    assert_eq!(id.account, "alice");
}

#[tokio::test]
async fn a_revoked_device_is_refused_with_401_and_can_still_leave() {
    let server = Server::start();
    let (a, mut b) = pair_of(&server).await;
    let victim = b.identity().unwrap().device;
    kairos_sync::revoke(&a.store, &victim, &Tls::default())
        .await
        .unwrap();
    let e = kairos_sync::pair(&b.store, &Tls::default())
        .await
        .unwrap_err();
    assert_eq!(refusal(&e), (401, "device revoked"));
    assert!(!e.is_retryable(), "{e}");
    let e = b.sync_now().await.unwrap_err();
    assert_eq!(refusal(&e), (401, "device revoked"));
    assert!(
        b.status()["last_error"]
            .as_str()
            .unwrap()
            .contains("device revoked"),
        "{}",
        b.status()
    );
    // Leaving a device the server already revoked needs no --force.
    kairos_sync::leave(&mut b.store, &Tls::default(), false)
        .await
        .unwrap();
    assert_eq!(b.identity(), None);
}

#[tokio::test]
async fn leave_revokes_this_device_on_the_server_and_keeps_the_events() {
    let server = Server::start();
    let (mut a, b) = pair_of(&server).await;
    a.import(EVENT);
    let left = a.identity().unwrap().device;
    kairos_sync::leave(&mut a.store, &Tls::default(), false)
        .await
        .unwrap();
    assert_eq!(a.identity(), None);
    assert_eq!(a.outbox_len(), 0);
    assert_eq!(a.pending().len(), 1, "the reminder stays");
    let list = kairos_sync::devices(&b.store, &Tls::default())
        .await
        .unwrap();
    let gone = list.iter().find(|d| d.device == left).unwrap();
    assert!(gone.revoked, "{list:?}");
    // Not paired any more: a clear error, no connection attempted.
    let e = kairos_sync::pair(&a.store, &Tls::default())
        .await
        .unwrap_err();
    assert!(matches!(e, SyncError::NotPaired), "{e:?}");
}

#[tokio::test]
async fn leave_with_the_server_down_fails_unless_forced() {
    let mut server = Server::start();
    let (mut a, _b) = pair_of(&server).await;
    server.stop();
    let e = kairos_sync::leave(&mut a.store, &Tls::default(), false)
        .await
        .unwrap_err();
    assert!(e.is_retryable(), "{e:?}");
    assert!(a.identity().is_some(), "still paired after a failed leave");
    kairos_sync::leave(&mut a.store, &Tls::default(), true)
        .await
        .unwrap();
    assert_eq!(a.identity(), None);
}
