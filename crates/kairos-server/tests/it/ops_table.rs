//! The SQLite `ops` table (migration 0007): keyed `(account, seq)` WITHOUT
//! ROWID with only the op's JSON beside the key. A store written with the
//! 0006 schema keeps every op through the upgrade, and every reader of
//! `ops` searches its key.

use std::path::Path;

use chrono::DateTime;
use kairos_proto::{Body, HlcClock, Op, SeqOp};
use kairos_server::Store;
use kairos_server::store::{Auth, db_path};
use rusqlite::{Connection, params};

/// The server's migrations up to 0006, as shipped.
const UP_TO_0006: &[&str] = &[
    include_str!("../../migrations/0001_init.sql"),
    include_str!("../../migrations/0002_remind.sql"),
    include_str!("../../migrations/0003_remind_order.sql"),
    include_str!("../../migrations/0004_remind_takeover.sql"),
    include_str!("../../migrations/0005_remind_gate.sql"),
    include_str!("../../migrations/0006_remind_fresh_order.sql"),
];

/// Ops of every effect compaction tells apart, numbered from 1.
fn ops(device: &str, n: u64) -> Vec<Op> {
    let mut clock = HlcClock::new(device, None);
    (1..=n)
        .map(|i| {
            let body = match i % 4 {
                0 => Body::ReminderDismiss {
                    key: format!("k{}", i / 2),
                },
                1 => Body::ReminderSnooze {
                    key: format!("k{}", i / 2),
                    until: DateTime::from_timestamp_millis(1_900_000_000_000).unwrap(),
                },
                2 => Body::CalendarPut {
                    calendar: "cal1".into(),
                    name: format!("Work {i}"),
                    color: None,
                },
                _ => Body::SeriesPut {
                    calendar: "cal1".into(),
                    uid: format!("u{i}"),
                    ics: "BEGIN:VEVENT\r\nEND:VEVENT\r\n".into(),
                },
            };
            Op::new(i, clock.issue(1_764_864_000_000 + i), body)
        })
        .collect()
}

/// A data directory as a 0006 server left it, `log` stored per account
/// with the columns 0001 had.
fn store_0006(data: &Path, logs: &[(&str, &str, &[Op])]) {
    std::fs::create_dir_all(data).unwrap();
    let mut c = Connection::open(db_path(data)).unwrap();
    c.pragma_update(None, "journal_mode", "WAL").unwrap();
    let tx = c.transaction().unwrap();
    for m in UP_TO_0006 {
        tx.execute_batch(m).unwrap();
    }
    tx.pragma_update(None, "user_version", 6).unwrap();
    for (account, device, log) in logs {
        tx.execute(
            "INSERT INTO accounts (id, created_ms, head) VALUES (?1, 0, ?2)",
            params![account, log.len() as i64],
        )
        .unwrap();
        for (i, op) in log.iter().enumerate() {
            let seq = i as i64 + 1;
            let until = match op.body {
                Body::ReminderSnooze { until, .. } => Some(until.timestamp_millis()),
                _ => None,
            };
            tx.execute(
                "INSERT INTO ops (account, seq, op_id, device, entity, hlc, kind, until_ms, op_json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    account,
                    seq,
                    op.id,
                    device,
                    op.entity(),
                    op.hlc.to_string(),
                    op.body.kind(),
                    until,
                    serde_json::to_string(op).unwrap()
                ],
            )
            .unwrap();
            tx.execute(
                "INSERT INTO op_ids (account, op_id, seq) VALUES (?1, ?2, ?3)",
                params![account, op.id, seq],
            )
            .unwrap();
        }
    }
    tx.commit().unwrap();
}

fn numbered(log: &[Op]) -> Vec<SeqOp> {
    (1..)
        .zip(log)
        .map(|(seq, op)| SeqOp {
            seq,
            op: op.clone(),
        })
        .collect()
}

#[tokio::test]
async fn a_store_made_with_the_0006_schema_keeps_every_op_through_the_upgrade() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (alice, bob) = (ops("d_00000000000000a1", 300), ops("d_00000000000000b1", 7));
    store_0006(
        &data,
        &[
            ("alice", "d_00000000000000a1", &alice),
            ("bob", "d_00000000000000b1", &bob),
        ],
    );
    let store = Store::open(&data, 10_000, Box::new(|_| {})).unwrap();
    // Catch-up returns the same ops in the same order, in pages.
    let mut got = Vec::new();
    loop {
        let after = got.last().map_or(0, |s: &SeqOp| s.seq);
        let page = store.ops_after("alice", after, 64, 1 << 20).await.unwrap();
        if page.is_empty() {
            break;
        }
        got.extend(page);
    }
    assert_eq!(got, numbered(&alice));
    let bob_got = store.ops_after("bob", 0, 1000, 1 << 20).await.unwrap();
    assert_eq!(bob_got, numbered(&bob));
    // A reused id is answered with its first seq and not stored again; a
    // new op takes the next seq.
    let auth = Auth {
        account: "alice".into(),
        device: "d_00000000000000a1".into(),
    };
    let next = ops("d_00000000000000a1", 301).pop().unwrap();
    let r = store
        .push(&auth, vec![alice[41].clone(), next.clone()])
        .await
        .unwrap();
    assert_eq!((r[0].seq, r[1].seq), (42, 301));
    let tail = store.ops_after("alice", 299, 10, 1 << 20).await.unwrap();
    let seqs: Vec<u64> = tail.iter().map(|s| s.seq).collect();
    assert_eq!(seqs, [300, 301]);
    assert_eq!(tail[1].op, next);
    store.close().await;
    // The table is the new one: the key and the JSON, no rowid.
    let c = Connection::open(db_path(&data)).unwrap();
    let sql: String = c
        .query_row(
            "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'ops'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(sql.contains("WITHOUT ROWID"), "{sql}");
    let cols: Vec<String> = c
        .prepare("SELECT name FROM pragma_table_info('ops') ORDER BY cid")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(cols, ["account", "seq", "op_json"]);
    let n: i64 = c
        .query_row("SELECT count(*) FROM ops", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 300 + 1 + 7);
}

#[tokio::test]
async fn compaction_of_an_upgraded_store_reads_each_op_from_its_json() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let log = ops("d_00000000000000a1", 40);
    store_0006(&data, &[("alice", "d_00000000000000a1", &log)]);
    // Keep 4: the next commit compacts everything older that a later op
    // supersedes (each reminder key's snooze is followed by its dismiss;
    // `cal1` is put ten times).
    let store = Store::open(&data, 4, Box::new(|_| {})).unwrap();
    let auth = Auth {
        account: "alice".into(),
        device: "d_00000000000000a1".into(),
    };
    let next = ops("d_00000000000000a1", 41).pop().unwrap();
    store.push(&auth, vec![next]).await.unwrap();
    store.close().await;
    let store = Store::open(&data, 4, Box::new(|_| {})).unwrap();
    let log_after = store.log("alice").await.unwrap();
    assert_eq!(log_after.head, 41);
    assert!(log_after.floor > 0, "nothing was compacted: {log_after:?}");
    let kept = store.ops_after("alice", 0, 1000, 1 << 20).await.unwrap();
    // The series survive (each its own entity), the last calendar put
    // survives, no snooze whose key was dismissed later survives.
    let kinds = |k: &str| kept.iter().filter(|s| s.op.body.kind() == k).count();
    assert_eq!(kinds("series.put"), 10);
    assert_eq!(kinds("calendar.put"), 1);
    assert!(kept.iter().any(|s| s.seq == 41));
    store.close().await;
}

/// Every statement that reads or deletes `ops` searches its key, in order.
#[test]
fn every_reader_of_ops_searches_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let store = Store::open(&data, 10_000, Box::new(|_| {})).unwrap();
    drop(store);
    let c = Connection::open(db_path(&data)).unwrap();
    for sql in [
        // Catch-up (store/read.rs) and the reminder engine's scan.
        "SELECT seq, op_json FROM ops WHERE account = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
        // Compaction's read and delete (store/tx.rs); export (admin.rs).
        "SELECT seq, op_json FROM ops WHERE account = ?1 ORDER BY seq",
        "DELETE FROM ops WHERE account = ?1 AND seq = ?2",
        // Deleting an account (admin.rs).
        "DELETE FROM ops WHERE account = ?1",
    ] {
        let n = sql.matches('?').count();
        let plan: Vec<String> = c
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap()
            .query_map(rusqlite::params_from_iter(vec![0; n]), |r| r.get(3))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let plan = plan.join("\n");
        assert!(
            plan.contains("SEARCH ops USING PRIMARY KEY"),
            "{sql}: {plan}"
        );
        assert!(!plan.contains("TEMP B-TREE"), "{sql}: {plan}");
    }
}
