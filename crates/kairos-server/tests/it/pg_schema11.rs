//! PostgreSQL migration 0011 on a database that already holds ops: `ops`
//! takes each op's id and its account's number, and `op_ids` goes. The ops
//! stored by schema 10 are still caught up, each by its own account, and
//! every id it knew (of an op still stored, or of one compaction had
//! removed) is still answered with its first seq and not stored again.

use kairos_server::Store;
use kairos_server::store::{Auth, Database, migrate_postgres};

use crate::pg;
use crate::pg_ingest::ops;

/// Migrations 0001–0010, as a schema-10 server applied them.
const UP_TO_0010: [&str; 10] = [
    include_str!("../../migrations/postgres/0001_init.sql"),
    include_str!("../../migrations/postgres/0002_remind.sql"),
    include_str!("../../migrations/postgres/0003_remind_order.sql"),
    include_str!("../../migrations/postgres/0004_remind_takeover.sql"),
    include_str!("../../migrations/postgres/0005_remind_gate.sql"),
    include_str!("../../migrations/postgres/0006_remind_fresh_order.sql"),
    include_str!("../../migrations/postgres/0007_ops_no_account_fkey.sql"),
    include_str!("../../migrations/postgres/0008_ops_narrow.sql"),
    include_str!("../../migrations/postgres/0009_remind_snooze.sql"),
    include_str!("../../migrations/postgres/0010_remind_zone.sql"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ids_known_to_schema_10_compacted_or_not_keep_their_seqs_after_migration_11() {
    let url = pg::empty_database().await;
    let client = pg::client(&url).await;
    client
        .batch_execute(
            "CREATE TABLE kairos_schema (version INTEGER PRIMARY KEY, applied_ms BIGINT NOT NULL);
             INSERT INTO kairos_schema SELECT v, 0 FROM generate_series(1, 10) AS v;",
        )
        .await
        .unwrap();
    for m in UP_TO_0010 {
        client.batch_execute(m).await.unwrap();
    }
    let device = "d_0000000000000001";
    let alice = Auth {
        account: "alice".into(),
        device: device.into(),
    };
    let bob = Auth {
        account: "bob".into(),
        device: device.into(),
    };
    let old = ops(&alice, 1, 3, "");
    let bobs = ops(&bob, 1, 1, "/bob");
    client
        .batch_execute(
            "INSERT INTO accounts (id, created_ms, head, floor, compacted_head)
             VALUES ('bob', 0, 1, 0, 0), ('alice', 0, 3, 1, 3);",
        )
        .await
        .unwrap();
    // Bob's op has the id of Alice's first: ids are per account.
    client
        .execute(
            "INSERT INTO ops (account, seq, op_json) VALUES ('bob', 1, $1)",
            &[&serde_json::to_string(&bobs[0]).unwrap()],
        )
        .await
        .unwrap();
    client
        .execute(
            "INSERT INTO op_ids (account, op_id, seq) VALUES ('bob', $1, 1)",
            &[&bobs[0].id],
        )
        .await
        .unwrap();
    for (seq, op) in (1_i64..).zip(&old) {
        // Exactly the rows schema 10's writer inserted; op 1 was then
        // removed by compaction, which left its id in `op_ids`.
        if seq > 1 {
            client
                .execute(
                    "INSERT INTO ops (account, seq, op_json) VALUES ('alice', $1, $2)",
                    &[&seq, &serde_json::to_string(op).unwrap()],
                )
                .await
                .unwrap();
        }
        client
            .execute(
                "INSERT INTO op_ids (account, op_id, seq) VALUES ('alice', $1, $2)",
                &[&op.id, &seq],
            )
            .await
            .unwrap();
    }

    let (from, to) = migrate_postgres(&url).await.unwrap();
    assert_eq!(
        (from, to),
        (10, kairos_server::store::POSTGRES_SCHEMA_VERSION)
    );
    assert!(to >= 11);

    let db = Database::Postgres(url.clone());
    let store = Store::connect(&db, 10_000, false, Box::new(|_| {}))
        .await
        .unwrap();
    let served = store.ops_after("alice", 0, 100, 1 << 20).await.unwrap();
    assert_eq!(served.iter().map(|o| o.seq).collect::<Vec<_>>(), [2, 3]);
    assert_eq!(served[0].op, old[1]);
    // Ops 1 (compacted), 2 and 3 again, and op 4, new.
    let pushed = store.push(&alice, ops(&alice, 1, 4, "")).await.unwrap();
    let seqs: Vec<u64> = pushed.iter().map(|p| p.seq).collect();
    assert_eq!(seqs, [1, 2, 3, 4]);
    let served = store.ops_after("alice", 0, 100, 1 << 20).await.unwrap();
    let ids: Vec<(u64, String)> = served.iter().map(|o| (o.seq, o.op.id.clone())).collect();
    let want: Vec<(u64, String)> = (2..=4).map(|n| (n, format!("{device}:{n}"))).collect();
    assert_eq!(ids, want, "op 1 stays compacted, op 4 stored once");

    let served = store.ops_after("bob", 0, 100, 1 << 20).await.unwrap();
    assert_eq!(served.len(), 1);
    assert_eq!(served[0].op, bobs[0]);
    let pushed = store.push(&bob, ops(&bob, 1, 2, "/bob")).await.unwrap();
    assert_eq!(pushed.iter().map(|p| p.seq).collect::<Vec<_>>(), [1, 2]);
    store.close().await;

    let op_ids: i64 = client
        .query_one(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'op_ids'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(op_ids, 0, "op_ids is gone");
    client.close().await;
    pg::drop_database(&url).await;
}
