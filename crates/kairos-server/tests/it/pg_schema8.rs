//! PostgreSQL migration 0008 on a database that already holds ops: the
//! ops written by schema 7 (with `ops.op_id` and `ops.device`) are still
//! caught up after it, and an id stored before it is still answered with
//! its first seq and not stored again.

use kairos_server::Store;
use kairos_server::store::{Auth, Database, migrate_postgres};

use crate::pg;
use crate::pg_ingest::ops;

/// Migrations 0001–0007, as a schema-7 server applied them.
const UP_TO_0007: [&str; 7] = [
    include_str!("../../migrations/postgres/0001_init.sql"),
    include_str!("../../migrations/postgres/0002_remind.sql"),
    include_str!("../../migrations/postgres/0003_remind_order.sql"),
    include_str!("../../migrations/postgres/0004_remind_takeover.sql"),
    include_str!("../../migrations/postgres/0005_remind_gate.sql"),
    include_str!("../../migrations/postgres/0006_remind_fresh_order.sql"),
    include_str!("../../migrations/postgres/0007_ops_no_account_fkey.sql"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ops_stored_by_schema_7_are_served_and_deduplicated_after_migration_8() {
    let url = pg::empty_database().await;
    let client = pg::client(&url).await;
    client
        .batch_execute(
            "CREATE TABLE kairos_schema (version INTEGER PRIMARY KEY, applied_ms BIGINT NOT NULL);
             INSERT INTO kairos_schema SELECT v, 0 FROM generate_series(1, 7) AS v;",
        )
        .await
        .unwrap();
    for m in UP_TO_0007 {
        client.batch_execute(m).await.unwrap();
    }
    let device = "d_0000000000000001";
    let alice = Auth {
        account: "alice".into(),
        device: device.into(),
    };
    let old = ops(&alice, 1, 2, "");
    client
        .execute(
            "INSERT INTO accounts (id, created_ms, head) VALUES ('alice', 0, 2)",
            &[],
        )
        .await
        .unwrap();
    for (seq, op) in (1_i64..).zip(&old) {
        // Exactly the row schema 7's writer inserted.
        client
            .execute(
                "INSERT INTO ops (account, seq, op_id, device, entity, hlc, kind, until_ms, op_json)
                 VALUES ('alice', $1, $2, $3, $4, $5, $6, NULL, $7)",
                &[
                    &seq,
                    &op.id,
                    &device,
                    &op.entity(),
                    &op.hlc.to_string(),
                    &op.body.kind(),
                    &serde_json::to_string(op).unwrap(),
                ],
            )
            .await
            .unwrap();
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
        (7, kairos_server::store::POSTGRES_SCHEMA_VERSION)
    );
    assert!(to >= 8);

    let db = Database::Postgres(url.clone());
    // A store on the migrated database (it refuses any other schema).
    let store = Store::connect(&db, 10_000, false, Box::new(|_| {}))
        .await
        .unwrap();
    // Op 2 again (stored before the migration) and op 3, new.
    let pushed = store.push(&alice, ops(&alice, 2, 3, "")).await.unwrap();
    let seqs: Vec<u64> = pushed.iter().map(|p| p.seq).collect();
    assert_eq!(seqs, [2, 3]);
    let served = store.ops_after("alice", 0, 100, 1 << 20).await.unwrap();
    let ids: Vec<(u64, String)> = served.iter().map(|o| (o.seq, o.op.id.clone())).collect();
    let want: Vec<(u64, String)> = (1..=3).map(|n| (n, format!("{device}:{n}"))).collect();
    assert_eq!(ids, want);
    assert_eq!(served[0].op, old[0]);
    let stored: i64 = client
        .query_one(
            "SELECT count(*) FROM ops
             WHERE account_num = (SELECT num FROM accounts WHERE id = 'alice')",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(stored, 3);

    store.close().await;
    client.close().await;
    pg::drop_database(&url).await;
}
