//! Pushing and pulling between devices of one account, and nothing across
//! accounts.

use kairos_proto::{ClientMsg, ServerMsg};

use crate::support::{Maker, Server};

#[tokio::test]
async fn two_devices_exchange_ops_with_exactly_once_seqs_live_and_on_reconnect() {
    let server = Server::start(&[]).await;
    let (a_id, a_token) = server.device("alice", "laptop").await;
    let (b_id, b_token) = server.device("alice", "desktop").await;
    let (mut a, mut b) = (
        server.connect(&a_token).await,
        server.connect(&b_token).await,
    );
    assert_eq!(a.hello(0).await.caught_up, 0);
    assert_eq!(b.hello(0).await.caught_up, 0);

    let mut ma = Maker::new(&a_id);
    let ops = vec![
        ma.calendar("c1", "Work"),
        ma.dismiss("k1"),
        ma.dismiss("k2"),
    ];
    assert_eq!(a.push(&ops).await, [1, 2, 3]);
    let ServerMsg::Ops { ops: live, head } = b.recv().await else {
        panic!()
    };
    assert_eq!(head, 3);
    assert_eq!(
        live.iter().map(|s| (s.seq, &s.op)).collect::<Vec<_>>(),
        vec![(1, &ops[0]), (2, &ops[1]), (3, &ops[2])]
    );

    // A replay keeps its first seq and is not sent again; a new op is.
    let fresh = ma.dismiss("k3");
    assert_eq!(a.push(&[ops[1].clone(), fresh.clone()]).await, [2, 4]);
    let ServerMsg::Ops { ops: live, .. } = b.recv().await else {
        panic!()
    };
    assert_eq!(live.iter().map(|s| s.seq).collect::<Vec<_>>(), [4]);

    // B's op reaches A, and is not echoed to B.
    let mut mb = Maker::new(&b_id);
    let from_b = mb.dismiss("k9");
    assert_eq!(b.push(std::slice::from_ref(&from_b)).await, [5]);
    let ServerMsg::Ops { ops: live, head } = a.recv().await else {
        panic!()
    };
    assert_eq!(
        (live.len(), live[0].seq, &live[0].op, head),
        (1, 5, &from_b, 5)
    );
    b.send(&ClientMsg::Devices).await;
    let ServerMsg::DeviceList { devices } = b.recv().await else {
        panic!("B got its own op back")
    };
    let mut names: Vec<&str> = devices.iter().map(|d| d.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["desktop", "laptop"]);
    assert!(
        devices
            .iter()
            .all(|d| d.connected && !d.revoked && d.last_seen.is_some())
    );

    // B goes away at cursor 5; A pushes two more; B catches up from 5.
    drop(b);
    assert_eq!(a.push(&[ma.dismiss("k4"), ma.dismiss("k5")]).await, [6, 7]);
    let mut b = server.connect(&b_token).await;
    let h = b.hello(5).await;
    assert!(!h.snapshot);
    assert_eq!((h.head, h.caught_up), (7, 7));
    assert_eq!(h.ops.iter().map(|s| s.seq).collect::<Vec<_>>(), [6, 7]);
    // From 0, everything, each seq once.
    let mut c = server.connect(&b_token).await;
    let all = c.hello(0).await;
    assert_eq!(
        all.ops.iter().map(|s| s.seq).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5, 6, 7]
    );
}

#[tokio::test]
async fn another_account_sees_and_touches_nothing() {
    let server = Server::start(&[]).await;
    let (a_id, a_token) = server.device("alice", "laptop").await;
    let (bob_id, bob_token) = server.device("bob", "phone").await;
    let mut a = server.connect(&a_token).await;
    a.hello(0).await;
    a.push(&[Maker::new(&a_id).dismiss("alice-secret")]).await;

    let mut bob = server.connect(&bob_token).await;
    let h = bob.hello(0).await;
    assert_eq!((h.head, h.ops.len(), h.caught_up), (0, 0, 0));
    // Bob's seqs are his own; alice does not hear of his ops.
    assert_eq!(bob.push(&[Maker::new(&bob_id).dismiss("k")]).await, [1]);
    // Revoking alice's device from bob's account: not found, session stays.
    bob.send(&ClientMsg::Revoke {
        device: a_id.clone(),
    })
    .await;
    let ServerMsg::Error { code, .. } = bob.recv().await else {
        panic!()
    };
    assert_eq!(code, "not_found");
    bob.send(&ClientMsg::Devices).await;
    let ServerMsg::DeviceList { devices } = bob.recv().await else {
        panic!()
    };
    assert_eq!(
        devices
            .iter()
            .map(|d| d.device.as_str())
            .collect::<Vec<_>>(),
        [bob_id.as_str()]
    );
    // Alice's next message is her own business: a pair code, no bob ops.
    a.send(&ClientMsg::Pair).await;
    let ServerMsg::Code { code, .. } = a.recv().await else {
        panic!("alice got bob's op")
    };
    assert!(kairos_proto::ids::normalize_pairing_code(&code).is_some());
    assert!(server.join(&code, "tablet").await.is_ok());
}

#[tokio::test]
async fn revoking_a_device_closes_its_session_within_a_second_and_refuses_its_token() {
    let server = Server::start(&[]).await;
    let (_, a_token) = server.device("alice", "laptop").await;
    let (b_id, b_token) = server.device("alice", "old phone").await;
    let (mut a, mut b) = (
        server.connect(&a_token).await,
        server.connect(&b_token).await,
    );
    a.hello(0).await;
    b.hello(0).await;
    let started = std::time::Instant::now();
    a.send(&ClientMsg::Revoke {
        device: b_id.clone(),
    })
    .await;
    let (code, reason, _) = b.closed().await;
    assert!(
        started.elapsed() < std::time::Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!((code, reason.as_str()), (4401, "device revoked"));
    assert_eq!(a.recv().await, ServerMsg::Revoked { device: b_id });
    assert_eq!(
        server
            .refused("/v1/sync", Some(&format!("Bearer {b_token}")))
            .await,
        (401, "device revoked\n".into())
    );
}

#[tokio::test]
async fn a_device_that_revokes_itself_leaves_with_1000() {
    let server = Server::start(&[]).await;
    let (a_id, a_token) = server.device("alice", "laptop").await;
    let mut a = server.connect(&a_token).await;
    a.hello(0).await;
    a.send(&ClientMsg::Revoke {
        device: a_id.clone(),
    })
    .await;
    let (code, _, before) = a.closed().await;
    assert_eq!(before, [ServerMsg::Revoked { device: a_id }]);
    assert_eq!(code, 1000);
}

#[tokio::test]
async fn a_cursor_ahead_of_the_head_gets_a_snapshot() {
    // The server was restored from an older backup: the device has seen
    // seqs the server never handed out (again).
    let server = Server::start(&[]).await;
    let (a_id, token) = server.device("alice", "laptop").await;
    let mut a = server.connect(&token).await;
    a.hello(0).await;
    let mut m = Maker::new(&a_id);
    a.push(&[m.dismiss("k1"), m.dismiss("k2")]).await;
    let mut b = server.connect(&token).await;
    let h = b.hello(99).await;
    assert!(h.snapshot);
    assert_eq!(h.ops.iter().map(|s| s.seq).collect::<Vec<_>>(), [1, 2]);
    assert_eq!((h.head, h.caught_up), (2, 2));
}
