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

/// Alice's store in `data`, and a push of 20 ops by her device.
fn alice(data: &std::path::Path) -> (Store, Auth, Vec<Op>) {
    Store::invite(data, "alice", Duration::from_secs(60)).unwrap();
    let store = Store::open(data, 10_000, Box::new(|_| {})).unwrap();
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
    (store, auth, ops)
}

/// Alice's ops in the database file alone, once it holds all 20 (or what
/// it held when 10 s passed).
async fn twenty_in_db_file(data: &std::path::Path) -> Option<i64> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut seen = None;
    while Instant::now() < deadline {
        seen = ops_in_db_file(data, "alice");
        if seen == Some(20) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    seen
}

#[tokio::test]
async fn a_small_commit_reaches_the_database_file_without_waiting_for_a_thousand_wal_pages() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (store, auth, ops) = alice(&data);
    let results = store.push(&auth, ops).await.unwrap();
    assert_eq!(results.len(), 20);
    // A few WAL pages: SQLite's automatic checkpoint (every 1,000 pages)
    // would leave them in the WAL; the checkpoint thread copies them
    // within its pace (`EVERY`, 2 ms). Checked on the file alone while the store
    // stays open (closing it would checkpoint anyway).
    assert_eq!(
        twenty_in_db_file(&data).await,
        Some(20),
        "the database file alone does not hold the pushed ops"
    );
    store.close().await;
}

/// A checkpoint that a reader held back (its snapshot older than the last
/// commit, so those pages cannot be copied yet) is tried again (`RETRY`,
/// 50 ms), not left in the WAL until the next commit: a commit before a
/// quiet spell reaches the database file all the same.
#[tokio::test]
async fn a_checkpoint_a_reader_held_back_is_tried_again() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (store, auth, ops) = alice(&data);
    let reader = Connection::open(db_path(&data)).unwrap();
    reader.execute_batch("BEGIN").unwrap();
    let before: i64 = reader
        .query_row("SELECT count(*) FROM ops", [], |r| r.get(0))
        .unwrap();
    assert_eq!(before, 0);
    store.push(&auth, ops).await.unwrap();
    // The thread checkpoints within 2 ms of the commit; the reader holds
    // its snapshot well past that, so that checkpoint copies none of it.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(ops_in_db_file(&data, "alice"), Some(0), "held back");
    reader.execute_batch("COMMIT").unwrap();
    assert_eq!(
        twenty_in_db_file(&data).await,
        Some(20),
        "the held-back checkpoint was not tried again"
    );
    drop(reader);
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
