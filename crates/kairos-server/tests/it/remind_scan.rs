//! What a claim reads (`remind/claim.rs`, migration 0006): the index that
//! orders rows never claimed holds no row another instance has claimed, so
//! a claim late in a burst does not walk past every row in flight (on
//! PostgreSQL, every claim is an update that made a new row version, which
//! the old index took in again at the front of the order). On both stores:
//! PostgreSQL's `EXPLAIN ANALYZE` counts the rows the scan read and threw
//! away; SQLite's plan names the index. The queue depth still counts
//! the claimed rows (through the index of leased rows).

use std::time::Duration;

use crate::receiver;
use crate::remind::{NO_TASK, at, with_webhook};
use crate::remind_ops::{account, item};
use crate::support::Server;

/// The fresh part of the claim, as a plain `SELECT` (`$1`/`?1`: now, ms).
const FRESH: &str = "SELECT key FROM remind_delivery
     WHERE state = 'pending' AND next_ms <= $1 AND next_ms / 1000 <= $1 / 1000 AND lease_ms = 0
     ORDER BY next_ms / 1000, rank, calendar, key LIMIT 10";

/// PostgreSQL's `EXPLAIN (ANALYZE, COSTS OFF)` of `sql`, one line a node.
async fn explain(
    c: &tokio_postgres::Client,
    sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> String {
    let rows = c
        .query(&format!("EXPLAIN (ANALYZE, COSTS OFF) {sql}"), params)
        .await
        .unwrap();
    let lines: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
    lines.join("\n")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_claim_reads_no_row_another_instance_holds() {
    let hook = receiver::start(&[], Duration::ZERO).await;
    let server = Server::start(NO_TASK).await;
    let s = "20300107T100000Z";
    let uids = ["e1", "e2", "e3", "e4", "e5", "e6"];
    let items = uids.iter().map(|u| item("c1", u, s, None)).collect();
    let _dev = account(&server, "alice", items).await;
    let rem = with_webhook(&server, "alice", &hook.url, Duration::ZERO).await;
    let round = rem.replicate(at("2030-01-07T08:00:00Z")).await.unwrap();
    assert_eq!(round.deliveries, uids.len(), "{round:?}");
    let now = at("2030-01-07T09:50:00Z").timestamp_millis();
    let lease = now + 600_000;
    // Another instance holds the first three in the order (a lease far
    // ahead), as its claim leaves them.
    let hold = "UPDATE remind_delivery SET owner = 'other', lease_ms = $1
         WHERE key IN (SELECT key FROM remind_delivery ORDER BY calendar, key LIMIT 3)";

    if let Some(url) = &server.database {
        let c = crate::pg::client(url).await;
        assert_eq!(c.execute(hold, &[&lease]).await.unwrap(), 3);
        // Six rows: without these the planner reads the table, not an index.
        c.batch_execute("SET enable_seqscan = off; SET enable_bitmapscan = off")
            .await
            .unwrap();
        let plan = explain(&c, FRESH, &[&now]).await;
        assert!(plan.contains("Index Scan"), "{plan}");
        // The old index (`state = 'pending'` only) read the three held rows
        // and filtered them out on `lease_ms = 0`.
        assert!(!plan.contains("Rows Removed by Filter"), "{plan}");
        let keys = c.query(FRESH, &[&now]).await.unwrap();
        assert_eq!(keys.len(), 3);
        c.close().await;
    } else {
        let c = rusqlite::Connection::open(kairos_server::store::db_path(&server.data)).unwrap();
        let (hold, fresh) = (hold.replace("$1", "?1"), FRESH.replace("$1", "?1"));
        assert_eq!(c.execute(&hold, [lease]).unwrap(), 3);
        let plan: Vec<String> = c
            .prepare(&format!("EXPLAIN QUERY PLAN {fresh}"))
            .unwrap()
            .query_map([now], |r| r.get(3))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let plan = plan.join("\n");
        // The index whose predicate leaves out claimed rows, in order (no
        // sort of its own).
        assert!(plan.contains("USING INDEX remind_delivery_fresh"), "{plan}");
        assert!(!plan.contains("TEMP B-TREE"), "{plan}");
        let n = c
            .prepare(&fresh)
            .unwrap()
            .query_map([now], |r| r.get::<_, String>(0))
            .unwrap()
            .count();
        assert_eq!(n, 3);
    }
    // The queue depth counts the held rows too (they are pending), now
    // found through the index of leased rows.
    let depth = rem.depth(at("2030-01-07T09:50:00Z")).await.unwrap();
    assert_eq!(depth, (6, 0));
    let depth = rem.depth(at("2030-01-07T09:44:00Z")).await.unwrap();
    assert_eq!(depth, (0, 6));
}

/// The next due time (the drain's pause, `remind/run.rs`) reads the first
/// entry of the index of rows never claimed, not every entry: with
/// `min(next_ms)` a queue filled since the last `ANALYZE` made PostgreSQL
/// aggregate over the whole index (3.3 ms at 20,000 queued, at every pause
/// of every instance). SQLite's `min()` takes the index's first entry (its
/// min/max optimisation), so the test is PostgreSQL's.
#[tokio::test(flavor = "multi_thread")]
async fn the_next_due_time_reads_one_index_entry() {
    let server = Server::start(NO_TASK).await;
    let Some(url) = server.database.clone() else {
        return;
    };
    let hook = receiver::start(&[], Duration::ZERO).await;
    let _dev = account(
        &server,
        "alice",
        vec![item("c1", "e1", "20300107T100000Z", None)],
    )
    .await;
    let rem = with_webhook(&server, "alice", &hook.url, Duration::ZERO).await;
    let round = rem.replicate(at("2030-01-07T08:00:00Z")).await.unwrap();
    assert_eq!(round.deliveries, 1, "{round:?}");
    let c = crate::pg::client(&url).await;
    // 2,000 more pending rows after the planned one, no ANALYZE since.
    let added = c
        .execute(
            "INSERT INTO remind_delivery (account, key, channel, due_ms, next_ms, state, always,
                                          target, secret, rank, calendar)
             SELECT account, key || '-' || g, channel, due_ms, next_ms + g, state, always,
                    target, secret, rank, calendar
             FROM remind_delivery, generate_series(1, 2000) g",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(added, 2000);
    let plan = explain(&c, kairos_server::remind::NEXT_DUE_PG, &[]).await;
    let scan = plan
        .lines()
        .find(|l| l.contains("remind_delivery_fresh_next"))
        .unwrap_or_else(|| panic!("no scan of remind_delivery_fresh_next:\n{plan}"));
    assert!(scan.contains("rows=1 loops=1"), "{plan}");
    // The earliest: the planned row's own time.
    let first: i64 = c
        .query_one("SELECT min(next_ms) FROM remind_delivery", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(rem.next_due().await.unwrap(), Some(first));
    c.close().await;
}
