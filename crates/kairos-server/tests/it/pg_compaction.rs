//! PostgreSQL compaction runs on a task of its own (`store/pg/compactor.rs`),
//! in either run of the suite: a compaction that waits does not hold up
//! the pushes of its account, and when it goes on it removes only ops that
//! no longer decide the state, however many pushes came in between.

use std::time::Duration;

use kairos_proto::{Body, HlcClock, Op};
use kairos_server::Store;
use kairos_server::store::{Auth, Database};
use tokio::time::{Instant, interval, timeout};

use crate::pg;
use crate::support::WAIT;

/// Dismisses of one reminder key, numbered `first..=last`, each stamped
/// later than the one before: only the first decides (the earliest
/// dismissal wins), so compaction may empty every other.
fn dismisses(a: &Auth, first: u64, last: u64) -> Vec<Op> {
    let mut clock = HlcClock::new(a.device.clone(), None);
    let key = "9c1e/standup@x/2026-12-04T16:00:00Z/#0@745c1657".to_owned();
    (first..=last)
        .map(|n| {
            Op::new(
                n,
                clock.issue(1_764_864_000_000 + n),
                Body::ReminderDismiss { key: key.clone() },
            )
        })
        .collect()
}

/// Waits (at most `WAIT`) until `sql`, one `bigint`, reads `want`.
async fn until(c: &pg::Side, sql: &str, want: i64) {
    let deadline = Instant::now() + WAIT;
    let mut tick = interval(Duration::from_millis(10));
    loop {
        tick.tick().await;
        let got: i64 = c.query_one(sql, &[]).await.unwrap().get(0);
        if got == want {
            return;
        }
        assert!(Instant::now() < deadline, "{sql}: {got}, not {want}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_is_answered_while_a_compaction_of_its_account_waits() {
    let url = pg::database().await;
    let db = Database::Postgres(url.clone());
    Store::invite_in(&db, "alice", Duration::from_secs(60))
        .await
        .unwrap();
    let store = Store::connect(&db, 2, false, Box::new(|_| {}))
        .await
        .unwrap();
    let alice = Auth {
        account: "alice".into(),
        device: "d_0000000000000005".into(),
    };
    let all = dismisses(&alice, 1, 6);
    let watch = pg::client(&url).await;
    let compacted = "SELECT compacted_head FROM accounts WHERE id = 'alice'";
    // Head 2: due, nothing to remove yet (keep 2).
    store.push(&alice, all[..2].to_vec()).await.unwrap();
    until(&watch, compacted, 2).await;

    // The test holds op 2's row, which the next compaction empties.
    let holder = pg::client(&url).await;
    holder
        .batch_execute(
            "BEGIN; SELECT 1 FROM ops WHERE account_num = (SELECT num FROM accounts WHERE id = 'alice') AND seq = 2 FOR UPDATE",
        )
        .await
        .unwrap();
    let pid: i32 = holder
        .query_one("SELECT pg_backend_pid()", &[])
        .await
        .unwrap()
        .get(0);
    let waiting =
        format!("SELECT count(*) FROM pg_stat_activity WHERE {pid} = ANY(pg_blocking_pids(pid))");
    // Head 4: due again; its compaction (cutoff 2) waits on op 2's row.
    store.push(&alice, all[2..4].to_vec()).await.unwrap();
    until(&watch, &waiting, 1).await;

    // The account's next push is answered while that compaction waits.
    let answered = timeout(
        Duration::from_secs(5),
        store.push(&alice, all[4..].to_vec()),
    )
    .await
    .expect("a push waited for its account's compaction")
    .unwrap();
    assert_eq!(answered.iter().map(|r| r.seq).collect::<Vec<_>>(), [5, 6]);
    until(&watch, &waiting, 1).await;

    // Let it go: it empties op 2, then the one queued at head 6 ops 3 and
    // 4; op 1 (the first dismissal) and the last `keep` stay.
    holder.batch_execute("COMMIT").await.unwrap();
    until(&watch, compacted, 6).await;
    let live: Vec<u64> = store
        .ops_after("alice", 0, 100, 1 << 20)
        .await
        .unwrap()
        .iter()
        .map(|s| s.seq)
        .collect();
    assert_eq!(live, [1, 5, 6]);
    let r = watch
        .query_one(
            "SELECT floor, head, (SELECT count(*) FROM ops) FROM accounts WHERE id = 'alice'",
            &[],
        )
        .await
        .unwrap();
    let (floor, head, rows): (i64, i64, i64) = (r.get(0), r.get(1), r.get(2));
    assert_eq!((floor, head, rows), (4, 6, 6), "every id keeps its row");

    store.close().await;
    holder.close().await;
    watch.close().await;
    pg::drop_database(&url).await;
}
