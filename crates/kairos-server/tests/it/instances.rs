//! Several `kairos-server` processes on one PostgreSQL database (issue
//! #21 §1), in either run of the suite: the explicit migration, a device on
//! each instance, and what crosses between them — live ops (by the
//! `NOTIFY` hint, and without it by the periodic head check), gap-free
//! seqs under concurrent pushes, single-use pairing codes, revocations.

use std::time::{Duration, Instant};

use kairos_proto::{ClientMsg, Op, SeqOp, ServerMsg};
use tokio::process::Command;

use crate::pg;
use crate::support::{BIN, Client, Maker, Server};

/// Two instances on one fresh database, each with extra `args`.
pub(crate) async fn two(args1: &[&str], args2: &[&str]) -> (tempfile::TempDir, Server, Server) {
    let dir = tempfile::tempdir().unwrap();
    let url = pg::database().await;
    let s1 = Server::start_pg(&dir.path().join("one"), &url, args1).await;
    let s2 = Server::start_pg(&dir.path().join("two"), &url, args2).await;
    (dir, s1, s2)
}

/// A connected, caught-up device of alice: one joined through `join_on`,
/// connected to `session_on`.
pub(crate) async fn device(join_on: &Server, session_on: &Server, name: &str) -> (String, Client) {
    let (id, token) = join_on.device("alice", name).await;
    let mut c = session_on.connect(&token).await;
    c.hello(0).await;
    (id, c)
}

/// The next `ops` message's ops.
async fn live(c: &mut Client) -> Vec<SeqOp> {
    match c.recv().await {
        ServerMsg::Ops { ops, .. } => ops,
        other => panic!("expected ops, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_is_explicit_and_a_server_refuses_another_schema() {
    // The schema version this server migrates to (one per migration).
    const V: i32 = kairos_server::store::POSTGRES_SCHEMA_VERSION;
    let url = pg::empty_database().await;
    let serve = || {
        Command::new(BIN)
            .args(["--database", &url, "--listen", "127.0.0.1:0"])
            .output()
    };
    let out = serve().await.unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("no kairos-server schema") && err.contains("kairos-server migrate"),
        "{err}"
    );

    let migrate = || {
        Command::new(BIN)
            .args(["migrate", "--database", &url])
            .output()
    };
    let out = migrate().await.unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!(r#"{{"schema":{V},"schema_from":0}}"#)
    );
    // Again: nothing to do.
    let out = migrate().await.unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!(r#"{{"schema":{V},"schema_from":{V}}}"#)
    );

    // A newer server migrated the database: this one refuses to serve it
    // or to migrate it back.
    let client = pg::client(&url).await;
    client
        .batch_execute(&format!(
            "INSERT INTO kairos_schema (version, applied_ms) VALUES ({}, 0)",
            V + 1
        ))
        .await
        .unwrap();
    client.close().await;
    for out in [serve().await.unwrap(), migrate().await.unwrap()] {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(
            err.contains(&format!("version {}, newer than this server's {V}", V + 1)),
            "{err}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_op_pushed_on_one_instance_reaches_a_device_on_the_other_live() {
    // No head check worth the name on either: only the hint can be fast.
    let slow = ["--head-check-ms", "600000"];
    let (_dir, s1, s2) = two(&slow, &slow).await;
    let (a_id, mut a) = device(&s1, &s1, "laptop").await;
    let (b_id, mut b) = device(&s2, &s2, "desktop").await;

    let op = Maker::new(&a_id).dismiss("k1");
    assert_eq!(a.push(std::slice::from_ref(&op)).await, [1]);
    let got = live(&mut b).await;
    assert_eq!((got.len(), got[0].seq, &got[0].op), (1, 1, &op));

    let op = Maker::new(&b_id).dismiss("k2");
    assert_eq!(b.push(std::slice::from_ref(&op)).await, [2]);
    let got = live(&mut a).await;
    assert_eq!((got.len(), got[0].seq, &got[0].op), (1, 2, &op));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_hints_suppressed_an_op_still_arrives_within_a_second() {
    let (_dir, s1, s2) = two(&["--no-hints"], &["--no-hints"]).await;
    let (a_id, mut a) = device(&s1, &s1, "laptop").await;
    let (_, mut b) = device(&s2, &s2, "desktop").await;
    let mut m = Maker::new(&a_id);
    for i in 1..=3 {
        let op = m.dismiss(&format!("k{i}"));
        assert_eq!(a.push(std::slice::from_ref(&op)).await, [i]);
        let pushed = Instant::now();
        let got = live(&mut b).await;
        let took = pushed.elapsed();
        assert_eq!((got.len(), got[0].seq, &got[0].op), (1, i, &op));
        // The head check runs every 500 ms.
        assert!(took < Duration::from_millis(1000), "op {i} took {took:?}");
    }
}

/// Pushes `n` batches of `size` ops, reading until each is acknowledged:
/// (every seq handed out, every op received live meanwhile).
async fn push_many(c: &mut Client, m: &mut Maker, n: usize, size: usize) -> (Vec<u64>, Vec<SeqOp>) {
    let (mut seqs, mut got) = (Vec::new(), Vec::new());
    for i in 0..n {
        let ops: Vec<Op> = (0..size).map(|j| m.dismiss(&format!("k{i}-{j}"))).collect();
        c.send(&ClientMsg::Push { ops }).await;
        loop {
            match c.recv().await {
                ServerMsg::Pushed { results } => {
                    seqs.extend(results.iter().map(|r| r.seq));
                    break;
                }
                ServerMsg::Ops { ops, .. } => got.extend(ops),
                other => panic!("{other:?}"),
            }
        }
    }
    (seqs, got)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_pushes_on_two_instances_get_gap_free_seqs_and_each_device_gets_the_others_once()
{
    let (_dir, s1, s2) = two(&[], &[]).await;
    let (a_id, mut a) = device(&s1, &s1, "laptop").await;
    let (b_id, mut b) = device(&s2, &s2, "desktop").await;
    let (n, size) = (20, 5);
    let ta = tokio::spawn(async move {
        let r = push_many(&mut a, &mut Maker::new(&a_id), n, size).await;
        (a, r)
    });
    let tb = tokio::spawn(async move {
        let r = push_many(&mut b, &mut Maker::new(&b_id), n, size).await;
        (b, r)
    });
    let (mut a, (a_seqs, mut a_got)) = ta.await.unwrap();
    let (mut b, (b_seqs, mut b_got)) = tb.await.unwrap();
    let mut all: Vec<u64> = a_seqs.iter().chain(&b_seqs).copied().collect();
    all.sort_unstable();
    let total = u64::try_from(2 * n * size).unwrap();
    assert_eq!(
        all,
        (1..=total).collect::<Vec<_>>(),
        "seqs not gap-free and unique"
    );
    // Each device receives exactly the other's ops, in seq order, once.
    while a_got.len() < b_seqs.len() {
        a_got.extend(live(&mut a).await);
    }
    while b_got.len() < a_seqs.len() {
        b_got.extend(live(&mut b).await);
    }
    assert_eq!(a_got.iter().map(|s| s.seq).collect::<Vec<_>>(), b_seqs);
    assert_eq!(b_got.iter().map(|s| s.seq).collect::<Vec<_>>(), a_seqs);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pairing_code_joins_once_across_instances_and_a_revocation_crosses() {
    let (_dir, s1, s2) = two(&[], &[]).await;
    let code = s1.invite("alice", &[]).await;
    let (r1, r2) = tokio::join!(s1.join(&code, "one"), s2.join(&code, "two"));
    let (joined, refused) = match (r1, r2) {
        (Ok(j), Err(r)) | (Err(r), Ok(j)) => (j, r),
        other => panic!("expected exactly one join: {other:?}"),
    };
    assert_eq!(
        (refused.0, refused.1.trim()),
        (401, "pairing code already used")
    );
    let ServerMsg::Joined { token, .. } = joined else {
        unreachable!()
    };

    // The device joined through either, now on instance 2; revoked from a
    // device on instance 1.
    let mut victim = s2.connect(&token).await;
    let hello = victim.hello(0).await;
    let (_, mut admin) = device(&s1, &s1, "admin").await;
    admin
        .send(&ClientMsg::Revoke {
            device: hello.device.clone(),
        })
        .await;
    assert!(matches!(admin.recv().await, ServerMsg::Revoked { .. }));
    let (code, reason, _) = victim.closed().await;
    assert_eq!((code, reason.as_str()), (4401, "device revoked"));
    assert_eq!(
        s1.refused("/v1/sync", Some(&format!("Bearer {token}")))
            .await
            .0,
        401
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_hints_suppressed_a_revocation_still_closes_the_session_on_the_other_instance() {
    let (_dir, s1, s2) = two(&["--no-hints"], &["--no-hints"]).await;
    let (victim_id, mut victim) = device(&s2, &s2, "stolen laptop").await;
    let (_, mut admin) = device(&s1, &s1, "admin").await;
    admin
        .send(&ClientMsg::Revoke {
            device: victim_id.clone(),
        })
        .await;
    assert!(matches!(admin.recv().await, ServerMsg::Revoked { .. }));
    let revoked = Instant::now();
    let (code, reason, _) = victim.closed().await;
    let took = revoked.elapsed();
    assert_eq!((code, reason.as_str()), (4401, "device revoked"));
    // The head check runs every 500 ms.
    assert!(took < Duration::from_millis(1500), "closed after {took:?}");
}
