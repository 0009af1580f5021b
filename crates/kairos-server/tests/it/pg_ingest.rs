//! The PostgreSQL writer's group of pushes (`store/pg/batch.rs`), in either
//! run of the suite: the pushes of one group go in set-based statements,
//! yet a push PostgreSQL refuses fails alone, and an op id pushed twice in
//! one group is stored once.

use std::time::Duration;

use kairos_proto::{Body, HlcClock, Op};
use kairos_server::Store;
use kairos_server::store::{Auth, Database};

use crate::pg;

pub(crate) fn auth(account: &str) -> Auth {
    Auth {
        account: account.to_owned(),
        device: format!("d_{:0>16}", account.len()),
    }
}

/// Dismisses `first..=last` of `a`'s device, each key ending in `tail`.
pub(crate) fn ops(a: &Auth, first: u64, last: u64, tail: &str) -> Vec<Op> {
    let mut clock = HlcClock::new(a.device.clone(), None);
    (first..=last)
        .map(|n| {
            let key = format!("9c1e/standup@x/2026-12-04T16:00:00Z/#{n}@745c1657{tail}");
            Op::new(
                n,
                clock.issue(1_764_864_000_000 + n),
                Body::ReminderDismiss { key },
            )
        })
        .collect()
}

pub(crate) fn seqs(r: &[kairos_proto::PushResult]) -> Vec<u64> {
    r.iter().map(|p| p.seq).collect()
}

/// A fresh database with `accounts`, a store on it, and a connection of
/// the test's own whose open transaction holds the first account's row
/// (`FOR UPDATE`): the writer stops at its first group on that row, so the
/// pushes made meanwhile queue up behind it until `release`.
struct Held {
    url: String,
    db: Database,
    store: Store,
    client: pg::Side,
}

async fn held(accounts: &[&str]) -> Held {
    let url = pg::database().await;
    let db = Database::Postgres(url.clone());
    for account in accounts {
        Store::invite_in(&db, account, Duration::from_secs(60))
            .await
            .unwrap();
    }
    let store = Store::connect(&db, 10_000, false, Box::new(|_| {}))
        .await
        .unwrap();
    let client = pg::client(&url).await;
    client
        .batch_execute(&format!(
            "BEGIN; SELECT 1 FROM accounts WHERE id = '{}' FOR UPDATE",
            accounts[0]
        ))
        .await
        .unwrap();
    Held {
        url,
        db,
        store,
        client,
    }
}

impl Held {
    async fn release(&self) {
        self.client.batch_execute("COMMIT").await.unwrap();
    }

    async fn end(self) {
        self.store.close().await;
        self.client.close().await;
        pg::drop_database(&self.url).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_postgres_refuses_fails_alone_in_its_group_and_a_repeated_id_is_stored_once() {
    // Alice's row held elsewhere stops the writer at its first group, so
    // every push below is queued before it goes on: the three after the
    // first are taken together (with the first, or in the next group).
    let h = held(&["alice", "bob", "carol"]).await;
    let store = &h.store;
    let (alice, bob, carol) = (auth("alice"), auth("bob"), auth("carol"));
    let first = store.push(&alice, ops(&alice, 1, 3, ""));
    let good = store.push(&bob, ops(&bob, 1, 4, ""));
    // No text column takes a NUL byte: PostgreSQL refuses this push (its
    // op ids; a NUL in the body is escaped in the op's JSON).
    let mut nul = ops(&carol, 1, 2, "\0");
    nul.iter_mut().for_each(|o| o.id.push('\0'));
    let bad = store.push(&carol, nul);
    // Op 3 again (its first seq back, not stored again) and two new ones.
    let again = store.push(&alice, ops(&alice, 3, 5, ""));
    h.release().await;

    assert_eq!(seqs(&first.await.unwrap()), [1, 2, 3]);
    assert_eq!(seqs(&good.await.unwrap()), [1, 2, 3, 4]);
    let refused = bad.await.expect_err("a NUL byte is stored by PostgreSQL");
    // PostgreSQL's own words (code 22021), not tokio_postgres's "db error".
    let said = refused.to_string();
    assert!(
        said.starts_with("postgres: ") && said.contains("22021") && !said.contains("db error"),
        "the error says what PostgreSQL refused: {said}"
    );
    assert_eq!(seqs(&again.await.unwrap()), [3, 4, 5]);

    let stored = |a: &'static str| async move {
        let ops = store.ops_after(a, 0, 100, 1 << 20).await.unwrap();
        ops.iter()
            .map(|o| (o.seq, o.op.id.clone()))
            .collect::<Vec<_>>()
    };
    let ids = |a: &Auth, n: u64| -> Vec<(u64, String)> {
        (1..=n).map(|i| (i, format!("{}:{i}", a.device))).collect()
    };
    assert_eq!(stored("alice").await, ids(&alice, 5));
    assert_eq!(stored("bob").await, ids(&bob, 4));
    assert_eq!(stored("carol").await, []);
    let mut heads: Vec<(String, u64)> = store
        .heads(vec!["alice".into(), "bob".into(), "carol".into()])
        .await
        .unwrap()
        .into_iter()
        .map(|h| (h.account, h.head))
        .collect();
    heads.sort();
    assert_eq!(
        heads,
        [("alice".into(), 5), ("bob".into(), 4), ("carol".into(), 0)]
    );
    h.end().await;
}

/// A group goes in without looking its ids up first. A push repeating an
/// id stored before makes its group fail on `op_ids`' key; the group goes
/// in again set-based with the lookup (its known id answered with its
/// first seq, the new ones stored), not job by job, and the groups right
/// after look up first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_repeating_a_stored_id_goes_in_again_with_the_lookup_not_job_by_job() {
    let url = pg::database().await;
    let db = Database::Postgres(url.clone());
    Store::invite_in(&db, "alice", Duration::from_secs(60))
        .await
        .unwrap();
    let store = Store::connect(&db, 10_000, false, Box::new(|_| {}))
        .await
        .unwrap();
    let alice = auth("alice");
    assert_eq!(
        seqs(&store.push(&alice, ops(&alice, 1, 3, "")).await.unwrap()),
        [1, 2, 3]
    );
    assert_eq!(store.retried_groups(), (0, 0), "new ids go in at once");

    assert_eq!(
        seqs(&store.push(&alice, ops(&alice, 3, 5, "")).await.unwrap()),
        [3, 4, 5]
    );
    assert_eq!(
        store.retried_groups(),
        (1, 0),
        "again with the lookup, not job by job"
    );
    // The next groups look up first: a repeat among them is no retry.
    assert_eq!(
        seqs(&store.push(&alice, ops(&alice, 5, 6, "")).await.unwrap()),
        [5, 6]
    );
    assert_eq!(store.retried_groups(), (1, 0));

    let stored: Vec<u64> = store
        .ops_after("alice", 0, 100, 1 << 20)
        .await
        .unwrap()
        .iter()
        .map(|o| o.seq)
        .collect();
    assert_eq!(stored, [1, 2, 3, 4, 5, 6], "each id stored once");
    store.close().await;
    pg::drop_database(&url).await;
}

/// Two writers per instance, jobs sharded by account: pushes of one
/// account (from several of its devices) queued back to back get their
/// seqs in the order they were queued, whichever writer is free.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pushes_of_one_account_queued_together_get_seqs_in_queue_order() {
    let h = held(&["alice"]).await;
    let devices: Vec<Auth> = (0..8)
        .map(|k| Auth {
            account: "alice".into(),
            device: format!("d_{k:016x}"),
        })
        .collect();
    let pushes: Vec<_> = devices
        .iter()
        .map(|d| h.store.push(d, ops(d, 1, 2, "")))
        .collect();
    h.release().await;
    let mut got = Vec::new();
    for p in pushes {
        got.extend(seqs(&p.await.unwrap()));
    }
    assert_eq!(got, (1..=16).collect::<Vec<u64>>());
    h.end().await;
}

/// Waits (at most 10 s) until `n` sessions of this database wait on a lock.
async fn waiting(client: &tokio_postgres::Client, n: i64) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let row = client
            .query_one(
                "SELECT count(*) FROM pg_stat_activity
                 WHERE datname = current_database() AND wait_event_type = 'Lock'",
                &[],
            )
            .await
            .unwrap();
        if row.get::<_, i64>(0) >= n {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{n} sessions never waited on a lock"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// `ops` has no foreign key to `accounts` (PostgreSQL migration 0007): what keeps an
/// op from outliving its account is the row lock both sides take. A push
/// whose writer holds the account's row commits first; `delete-account`,
/// waiting on the same row, then deletes its ops too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_account_deleted_while_its_push_commits_leaves_no_ops_behind() {
    let h = held(&["alice"]).await;
    let watch = pg::client(&h.url).await;
    let alice = auth("alice");
    let push = h.store.push(&alice, ops(&alice, 1, 3, ""));
    waiting(&watch, 1).await;
    let delete = tokio::spawn({
        let db = h.db.clone();
        async move { Store::delete_account(&db, "alice").await }
    });
    waiting(&watch, 2).await;
    h.release().await;

    assert_eq!(seqs(&push.await.unwrap()), [1, 2, 3]);
    assert!(delete.await.unwrap().unwrap().is_some());
    for table in ["ops", "accounts"] {
        let left: i64 = watch
            .query_one(&format!("SELECT count(*) FROM {table}"), &[])
            .await
            .unwrap()
            .get(0);
        assert_eq!(left, 0, "{table} rows left behind");
    }
    watch.close().await;
    h.end().await;
}
