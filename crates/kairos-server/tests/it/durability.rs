//! Stopping: SIGTERM closes sessions with 1001 and exits 0; kill -9 loses
//! nothing that was acknowledged; compaction leaves a snapshot.

// Elsewhere two of these tests send signals (Unix only).
#![cfg_attr(not(unix), allow(dead_code, unused_imports))]

use std::collections::HashMap;

use kairos_proto::{ClientMsg, ServerMsg};
#[cfg(unix)]
use nix::sys::signal::Signal;

use crate::support::{Hello, Maker, Server, WAIT};

/// A catch-up from 0 once compaction left exactly the seqs `kept` (on
/// PostgreSQL it runs beside the writers, so after the pushes are answered:
/// waits at most `WAIT`, trying again every 10 ms).
async fn compacted_to(server: &Server, token: &str, kept: &[u64]) -> Hello {
    let deadline = tokio::time::Instant::now() + WAIT;
    let mut tick = tokio::time::interval(std::time::Duration::from_millis(10));
    loop {
        tick.tick().await;
        let h = server.connect(token).await.hello(0).await;
        let seqs: Vec<u64> = h.ops.iter().map(|s| s.seq).collect();
        if seqs == kept {
            return h;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "kept {seqs:?}, not {kept:?}"
        );
    }
}

// SIGTERM to the server process: Unix.
#[cfg(unix)]
#[tokio::test]
async fn sigterm_closes_sessions_with_1001_and_exits_0() {
    let mut server = Server::start(&[]).await;
    let (_, token) = server.device("alice", "laptop").await;
    let mut a = server.connect(&token).await;
    a.hello(0).await;
    server.signal(Signal::SIGTERM);
    assert_eq!(a.closed().await.0, 1001);
    let status = server.exit().await;
    assert!(status.success(), "{status:?}\n{}", server.log());
    let rest = server.stdout.as_mut().unwrap().next_line().await.unwrap();
    assert_eq!(rest, None, "stdout has exactly one line");
}

// SIGKILL to the server process: Unix.
#[cfg(unix)]
#[tokio::test]
async fn after_kill_9_every_acknowledged_op_is_there_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut server = Server::start_on(&data, &[]).await;
    let (a_id, token) = server.device("alice", "laptop").await;
    let mut a = server.connect(&token).await;
    a.hello(0).await;
    let mut m = Maker::new(&a_id);
    // Pipelined pushes; kill the server once some were acknowledged.
    let pushes: Vec<Vec<kairos_proto::Op>> = (0..400)
        .map(|i| (0..5).map(|j| m.dismiss(&format!("k{i}-{j}"))).collect())
        .collect();
    for ops in &pushes {
        a.send(&ClientMsg::Push { ops: ops.clone() }).await;
    }
    let mut acked: HashMap<String, u64> = HashMap::new();
    while acked.len() < 5 * 50 {
        match a.recv().await {
            ServerMsg::Pushed { results } => {
                acked.extend(results.into_iter().map(|r| (r.id, r.seq)))
            }
            other => panic!("{other:?}"),
        }
    }
    server.signal(Signal::SIGKILL);
    let _ = server.exit().await;
    // Whatever else arrived before the connection broke counts as acked too.
    while let Ok(Some(Ok(msg))) = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        futures_util::StreamExt::next(&mut a.ws),
    )
    .await
    {
        if let Ok(ServerMsg::Pushed { results }) = msg
            .to_text()
            .map(kairos_proto::decode_server)
            .unwrap_or(Err(kairos_proto::ProtoError::Malformed(String::new())))
        {
            acked.extend(results.into_iter().map(|r| (r.id, r.seq)));
        }
    }
    drop(server);

    let server = Server::start_on(&data, &[]).await;
    let mut b = server.connect(&token).await;
    let all = b.hello(0).await;
    let mut seen: HashMap<String, u64> = HashMap::new();
    for s in &all.ops {
        assert!(
            seen.insert(s.op.id.clone(), s.seq).is_none(),
            "{} twice",
            s.op.id
        );
    }
    for (id, seq) in &acked {
        assert_eq!(
            seen.get(id),
            Some(seq),
            "acknowledged op {id} lost or moved"
        );
    }
    let seqs: Vec<u64> = all.ops.iter().map(|s| s.seq).collect();
    assert!(
        seqs.windows(2).all(|w| w[1] == w[0] + 1) && seqs.first() == Some(&1),
        "gaps in {seqs:?}"
    );
    // Re-pushing everything after the restart: known ids keep their seq.
    let replay = pushes[0].clone();
    let again = b.push(&replay).await;
    assert_eq!(
        again,
        replay.iter().map(|o| seen[&o.id]).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn a_cursor_below_the_compaction_floor_gets_a_snapshot_of_the_kept_ops() {
    let server = Server::start(&["--compact-keep", "2"]).await;
    let (a_id, token) = server.device("alice", "laptop").await;
    let mut a = server.connect(&token).await;
    a.hello(0).await;
    let mut m = Maker::new(&a_id);
    let renames: Vec<_> = (0..5)
        .map(|i| m.calendar("c1", &format!("name {i}")))
        .collect();
    let dismissed = m.dismiss("k1");
    let other = m.calendar("c2", "other");
    let last = m.calendar("c3", "last");
    // One push each: seqs 1..=8, compaction after every two.
    for op in renames.iter().chain([&dismissed, &other, &last]) {
        a.push(std::slice::from_ref(op)).await;
    }
    let snap = compacted_to(&server, &token, &[5, 6, 7, 8]).await;
    assert!(snap.snapshot);
    assert_eq!(snap.head, 8);
    assert_eq!(snap.caught_up, 8);
    let kept: Vec<(u64, &kairos_proto::Op)> = snap.ops.iter().map(|s| (s.seq, &s.op)).collect();
    assert_eq!(
        kept,
        vec![(5, &renames[4]), (6, &dismissed), (7, &other), (8, &last)]
    );
    // A cursor at or above the floor catches up normally.
    let mut c = server.connect(&token).await;
    let normal = c.hello(6).await;
    assert!(!normal.snapshot);
    assert_eq!(normal.ops.iter().map(|s| s.seq).collect::<Vec<_>>(), [7, 8]);
}

/// A push mixing known and new ids: the known keep their first seq (found
/// by the id's unique key, not a lookup first), the new take the next seqs
/// with no gap, and the log holds each op once.
#[tokio::test]
async fn a_push_of_known_and_new_ids_stores_only_the_new_without_gaps() {
    let server = Server::start(&[]).await;
    let (a_id, token) = server.device("alice", "laptop").await;
    let mut a = server.connect(&token).await;
    a.hello(0).await;
    let mut m = Maker::new(&a_id);
    let (x, y, z, w) = (
        m.dismiss("k1"),
        m.dismiss("k2"),
        m.dismiss("k3"),
        m.dismiss("k4"),
    );
    assert_eq!(a.push(&[x.clone(), y.clone()]).await, vec![1, 2]);
    assert_eq!(
        a.push(&[y.clone(), z.clone(), x.clone(), w.clone()]).await,
        vec![2, 3, 1, 4]
    );
    let mut b = server.connect(&token).await;
    let all = b.hello(0).await;
    let ids: Vec<(u64, &str)> = all.ops.iter().map(|s| (s.seq, s.op.id.as_str())).collect();
    assert_eq!(
        ids,
        vec![
            (1, x.id.as_str()),
            (2, y.id.as_str()),
            (3, z.id.as_str()),
            (4, w.id.as_str())
        ]
    );
}

/// An op compaction removed is gone from catch-up, but its id stays known:
/// sent again (a device that never saw its `pushed`), it gets its first
/// seq and is not stored a second time. On PostgreSQL the id lives in the
/// op's own row (migration 0011), which compaction empties, not deletes.
#[tokio::test]
async fn a_compacted_op_sent_again_gets_its_first_seq_and_is_not_stored_again() {
    let server = Server::start(&["--compact-keep", "2"]).await;
    let (a_id, token) = server.device("alice", "laptop").await;
    let mut a = server.connect(&token).await;
    a.hello(0).await;
    let mut m = Maker::new(&a_id);
    let renames: Vec<_> = (0..5)
        .map(|i| m.calendar("c1", &format!("name {i}")))
        .collect();
    let others = [
        m.calendar("c2", "c2"),
        m.calendar("c3", "c3"),
        m.calendar("c4", "c4"),
    ];
    // One push each: seqs 1..=8, compaction after every two.
    for op in renames.iter().chain(&others) {
        a.push(std::slice::from_ref(op)).await;
    }
    // Seqs 1..=4 are compacted away (renames of c1 made stale by seq 5).
    let snap = compacted_to(&server, &token, &[5, 6, 7, 8]).await;
    assert!(snap.snapshot);

    assert_eq!(
        a.push(&[renames[0].clone(), renames[4].clone()]).await,
        [1, 5]
    );
    let mut c = server.connect(&token).await;
    let again = c.hello(0).await;
    assert_eq!(again.head, 8, "nothing stored again");
    let kept: Vec<u64> = again.ops.iter().map(|s| s.seq).collect();
    assert_eq!(kept, [5, 6, 7, 8]);
}
