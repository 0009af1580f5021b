//! Catch-up and live messages stay within the protocol's limits: at most
//! 500 ops and at most 1 MiB each, however many or however large the ops;
//! catch-up frames of small ops stay small (the socket's write buffer keeps
//! the largest frame's size for as long as the session lasts).

use kairos_proto::{Body, MAX_FRAME, MAX_OPS_PER_MESSAGE, ServerMsg};

use crate::support::{Maker, Server};

#[tokio::test]
async fn catch_up_comes_in_batches_of_at_most_500_in_seq_order() {
    let server = Server::start(&[]).await;
    let (a_id, token) = server.device("alice", "laptop").await;
    let mut a = server.connect(&token).await;
    let h = a.hello(0).await;
    assert_eq!(
        (h.account.as_str(), h.device.as_str()),
        ("alice", a_id.as_str())
    );
    let mut m = Maker::new(&a_id);
    for _ in 0..3 {
        let ops: Vec<_> = (0..400).map(|_| m.dismiss("k")).collect();
        a.push(&ops).await;
    }
    let mut b = server.connect(&token).await;
    let all = b.hello(0).await;
    assert_eq!(all.caught_up, 1200);
    assert!(all.batches.len() >= 3, "{:?}", all.batches);
    assert!(all.batches.iter().all(|(_, n)| *n <= MAX_OPS_PER_MESSAGE));
    assert_eq!(
        all.ops.iter().map(|s| s.seq).collect::<Vec<_>>(),
        (1..=1200).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn large_ops_are_split_so_no_message_is_over_one_mib() {
    let server = Server::start(&[]).await;
    let (a_id, a_token) = server.device("alice", "laptop").await;
    let (_, b_token) = server.device("alice", "desktop").await;
    let (mut a, mut b) = (
        server.connect(&a_token).await,
        server.connect(&b_token).await,
    );
    a.hello(0).await;
    b.hello(0).await;
    let mut m = Maker::new(&a_id);
    // Three series of ~256 KiB of text each, with many line breaks (each
    // written as two bytes in JSON): one push just under 1 MiB.
    let ics = "X:abc\r\n".repeat(37_400);
    let ops: Vec<_> = (0..3)
        .map(|i| {
            m.op(Body::SeriesPut {
                calendar: "c1".into(),
                uid: format!("u{i}"),
                ics: ics.clone(),
            })
        })
        .collect();
    let frame = kairos_proto::encode(&kairos_proto::ClientMsg::Push { ops: ops.clone() });
    assert!(
        frame.len() > 900 * 1024 && frame.len() <= MAX_FRAME,
        "{}",
        frame.len()
    );
    a.push(&ops).await;
    // Live: however the server splits it, every frame is within the limit.
    let mut got = 0;
    while got < 3 {
        let (msg, len) = b.recv_sized().await;
        assert!(len <= MAX_FRAME, "a live frame of {len} bytes");
        let ServerMsg::Ops { ops, .. } = msg else {
            panic!()
        };
        got += ops.len();
    }
    // Catch-up: the same.
    let mut c = server.connect(&b_token).await;
    let all = c.hello(0).await;
    assert_eq!(all.ops.len(), 3);
    assert!(all.batches.len() >= 2, "{:?}", all.batches);
    assert!(
        all.batches.iter().all(|(len, _)| *len <= MAX_FRAME),
        "{:?}",
        all.batches
    );
}

#[tokio::test]
async fn a_catch_up_of_small_ops_comes_in_frames_of_about_32_kib() {
    let server = Server::start(&[]).await;
    let (a_id, token) = server.device("alice", "laptop").await;
    let mut a = server.connect(&token).await;
    a.hello(0).await;
    let mut m = Maker::new(&a_id);
    for _ in 0..4 {
        let ops: Vec<_> = (0..500).map(|_| m.dismiss("a-reminder-key")).collect();
        a.push(&ops).await;
    }
    let mut b = server.connect(&token).await;
    let all = b.hello(0).await;
    assert_eq!(all.caught_up, 2000);
    let total: usize = all.batches.iter().map(|(len, _)| len).sum();
    assert!(
        total > 200 * 1024,
        "{total} bytes: enough for several frames"
    );
    // 32 KiB of ops, plus the envelope and one op over.
    assert!(
        all.batches.iter().all(|(len, _)| *len <= 36 * 1024),
        "{:?}",
        all.batches
    );
}
