//! WAL checkpoints run on a thread of their own (`store/checkpoint.rs`):
//! the writer's connection no longer copies the WAL into the database file
//! every 1,000 pages inside its commits.

use std::time::{Duration, Instant};

use kairos_proto::{Body, HlcClock, Op};
use kairos_server::Store;
use kairos_server::store::{Auth, db_path};
use rusqlite::Connection;

/// The ops of `account` in a copy of the database file alone (without its
/// WAL), or `None` while the copy is not readable (a checkpoint writing).
fn ops_in_db_file(data: &std::path::Path, account: &str) -> Option<i64> {
    let copy = tempfile::tempdir().unwrap();
    let file = copy.path().join("copy.db");
    std::fs::copy(db_path(data), &file).ok()?;
    let c = Connection::open(&file).ok()?;
    c.query_row(
        "SELECT count(*) FROM ops WHERE account = ?1",
        [account],
        |r| r.get(0),
    )
    .ok()
}

#[tokio::test]
async fn a_small_commit_reaches_the_database_file_without_waiting_for_a_thousand_wal_pages() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    Store::invite(&data, "alice", Duration::from_secs(60)).unwrap();
    let store = Store::open(&data, 10_000, Box::new(|_| {})).unwrap();
    let device = "d_00000000000000a1";
    let mut clock = HlcClock::new(device, None);
    let ops: Vec<Op> = (1..=20)
        .map(|i| {
            let body = Body::ReminderDismiss {
                key: format!("k{i}"),
            };
            Op::new(i, clock.issue(1_764_864_000_000 + i), body)
        })
        .collect();
    let auth = Auth {
        account: "alice".into(),
        device: device.into(),
    };
    let results = store.push(&auth, ops).await.unwrap();
    assert_eq!(results.len(), 20);
    // A few WAL pages: SQLite's automatic checkpoint (every 1,000 pages)
    // would leave them in the WAL; the checkpoint thread copies them
    // within its pace (`EVERY`, 2 ms). Checked on the file alone while the store
    // stays open (closing it would checkpoint anyway).
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut seen = None;
    while Instant::now() < deadline {
        seen = ops_in_db_file(&data, "alice");
        if seen == Some(20) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        seen,
        Some(20),
        "the database file alone does not hold the pushed ops"
    );
    store.close().await;
}

/// The writer finishes the checkpoint thread's work (`START_OVER` in
/// `store/checkpoint.rs`): commits streaming in back to back leave the
/// thread no moment when the whole WAL is copied as the writer starts its
/// next transaction (when SQLite starts the WAL over), so without that
/// step the WAL grows to its 32 MiB bound (22–32 MiB here; with it, 5–6
/// MiB: the writer finishes after ≈ 4 MiB). The WAL file never shrinks
/// below that bound, so its size at the end is the most it ever held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wal_starts_over_while_pushes_stream_in() {
    const ACCOUNTS: usize = 16;
    const PUSHES: u64 = 500;
    const BOUND: u64 = 12 << 20;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    for a in 0..ACCOUNTS {
        Store::invite(&data, &format!("acct{a}"), Duration::from_secs(60)).unwrap();
    }
    let store = Store::open(&data, 1_000_000, Box::new(|_| {})).unwrap();
    // Each account's device pushes one op at a time, the next as soon as
    // the last is durable: the writer always has a group waiting.
    let tasks: Vec<_> = (0..ACCOUNTS)
        .map(|a| {
            let store = store.clone();
            tokio::spawn(async move {
                let device = format!("d_{a:016x}");
                let auth = Auth {
                    account: format!("acct{a}"),
                    device: device.clone(),
                };
                let mut clock = HlcClock::new(&device, None);
                for i in 1..=PUSHES {
                    let body = Body::ReminderDismiss {
                        key: format!("k{i}"),
                    };
                    let op = Op::new(i, clock.issue(1_764_864_000_000 + i), body);
                    store.push(&auth, vec![op]).await.unwrap();
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let mut wal = db_path(&data).into_os_string();
    wal.push("-wal");
    let size = std::fs::metadata(&wal).unwrap().len();
    let c = Connection::open(db_path(&data)).unwrap();
    let stored: i64 = c
        .query_row("SELECT count(*) FROM ops", [], |r| r.get(0))
        .unwrap();
    drop(c);
    store.close().await;
    assert_eq!(
        stored,
        i64::try_from(PUSHES).unwrap() * i64::try_from(ACCOUNTS).unwrap()
    );
    assert!(
        size <= BOUND,
        "the WAL reached {size} bytes after {stored} single-op pushes (bound {BOUND})"
    );
}
