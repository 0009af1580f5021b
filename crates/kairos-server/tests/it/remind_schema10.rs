//! SQLite migration 0010: `remind_delivery` and `remind_sent` rebuilt with
//! a `round` in their primary keys (a snooze's return is a delivery of its
//! own). A store queued and delivered with the 0009 schema keeps every row
//! through the upgrade, as round 0, and its one-success guarantee.

use std::path::Path;

use kairos_server::Store;
use kairos_server::store::db_path;
use rusqlite::{Connection, params};

/// The server's migrations up to 0009, as shipped.
const UP_TO_0009: &[&str] = &[
    include_str!("../../migrations/0001_init.sql"),
    include_str!("../../migrations/0002_remind.sql"),
    include_str!("../../migrations/0003_remind_order.sql"),
    include_str!("../../migrations/0004_remind_takeover.sql"),
    include_str!("../../migrations/0005_remind_gate.sql"),
    include_str!("../../migrations/0006_remind_fresh_order.sql"),
    include_str!("../../migrations/0007_ops_without_rowid.sql"),
    include_str!("../../migrations/0008_remind_snooze.sql"),
    include_str!("../../migrations/0009_remind_zone.sql"),
];

/// A data directory as a 0009 server left it: one delivery sent, one
/// pending under a lease, one abandoned.
fn store_0009(data: &Path) {
    std::fs::create_dir_all(data).unwrap();
    let mut c = Connection::open(db_path(data)).unwrap();
    c.pragma_update(None, "journal_mode", "WAL").unwrap();
    let tx = c.transaction().unwrap();
    for m in UP_TO_0009 {
        tx.execute_batch(m).unwrap();
    }
    tx.pragma_update(None, "user_version", 9).unwrap();
    tx.execute(
        "INSERT INTO accounts (id, created_ms) VALUES ('alice', 0)",
        [],
    )
    .unwrap();
    for (key, state, owner, lease) in [
        ("k1", "delivered", Some("i1"), 0),
        ("k2", "pending", Some("i2"), 9_000),
        ("k3", "abandoned", None, 0),
    ] {
        tx.execute(
            "INSERT INTO remind_delivery (account, key, channel, due_ms, next_ms, state, always,
                 target, secret, attempts, owner, lease_ms, rank, calendar)
             VALUES ('alice', ?1, 'webhook', 1000, 2000, ?2, 0, 'http://127.0.0.1:9/', 's', 1, ?3, ?4, 3, 'cal')",
            params![key, state, owner, lease],
        )
        .unwrap();
    }
    tx.execute(
        "INSERT INTO remind_sent (account, key, channel, at_ms, owner) VALUES ('alice', 'k1', 'webhook', 1500, 'i1')",
        [],
    )
    .unwrap();
    tx.commit().unwrap();
}

/// key, state, owner, lease, rank, calendar, round
type Queued = (String, String, Option<String>, i64, i64, String, i64);

#[tokio::test]
async fn deliveries_queued_and_sent_with_the_0009_schema_stay_as_round_0() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    store_0009(&data);
    drop(Store::open(&data, 10_000, Box::new(|_| {})).unwrap());

    let c = Connection::open(db_path(&data)).unwrap();
    let version: i64 = c
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert!(version >= 10, "migrated: {version}");
    let rows: Vec<Queued> = c
        .prepare(
            "SELECT key, state, owner, lease_ms, rank, calendar, round FROM remind_delivery ORDER BY key",
        )
        .unwrap()
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
            ))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let row = |k: &str, s: &str, o: Option<&str>, l: i64| {
        (k.into(), s.into(), o.map(Into::into), l, 3, "cal".into(), 0)
    };
    assert_eq!(
        rows,
        [
            row("k1", "delivered", Some("i1"), 0),
            row("k2", "pending", Some("i2"), 9_000),
            row("k3", "abandoned", None, 0),
        ]
    );
    let sent: (String, i64, String, i64) = c
        .query_row(
            "SELECT key, at_ms, owner, round FROM remind_sent",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!(sent, ("k1".into(), 1500, "i1".into(), 0));

    // Still one success per round; a return is a round of its own.
    let insert = "INSERT INTO remind_sent (account, key, channel, at_ms, owner, round)
                  VALUES ('alice', 'k1', 'webhook', 1600, 'i2', ?1) ON CONFLICT DO NOTHING";
    assert_eq!(c.execute(insert, [0]).unwrap(), 0, "round 0 sent already");
    assert_eq!(c.execute(insert, [5_000]).unwrap(), 1, "a return");
    // The claim's indexes are back.
    let indexes: Vec<String> = c
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'remind_delivery'
             AND name NOT LIKE 'sqlite_%' ORDER BY name",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        indexes,
        [
            "remind_delivery_fresh",
            "remind_delivery_fresh_next",
            "remind_delivery_leased"
        ]
    );
}
