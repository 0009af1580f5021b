//! The PostgreSQL schema: `migrations/postgres/`, applied only by
//! `kairos-server migrate` (several instances must never race to change
//! it), and the check a serving instance makes before it starts.

use tokio_postgres::error::SqlState;

use super::super::StoreError;

/// The migrations, in order; migration `i` brings the schema to `i + 1`.
/// Append-only.
const MIGRATIONS: &[&str] = &[
    include_str!("../../../migrations/postgres/0001_init.sql"),
    include_str!("../../../migrations/postgres/0002_remind.sql"),
    include_str!("../../../migrations/postgres/0003_remind_order.sql"),
    include_str!("../../../migrations/postgres/0004_remind_takeover.sql"),
    include_str!("../../../migrations/postgres/0005_remind_gate.sql"),
    include_str!("../../../migrations/postgres/0006_remind_fresh_order.sql"),
    include_str!("../../../migrations/postgres/0007_ops_no_account_fkey.sql"),
    include_str!("../../../migrations/postgres/0008_ops_narrow.sql"),
    include_str!("../../../migrations/postgres/0009_remind_snooze.sql"),
    include_str!("../../../migrations/postgres/0010_remind_zone.sql"),
    include_str!("../../../migrations/postgres/0011_ops_keyed_by_number.sql"),
    include_str!("../../../migrations/postgres/0012_remind_sent_attempt.sql"),
    include_str!("../../../migrations/postgres/0013_account_revocations.sql"),
    include_str!("../../../migrations/postgres/0014_presence.sql"),
    include_str!("../../../migrations/postgres/0015_remind_snooze_return.sql"),
];

/// The schema version this server runs on.
#[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)] // a handful
pub const SCHEMA_VERSION: i32 = MIGRATIONS.len() as i32;

/// Any number that is ours: the advisory lock that makes two `migrate`
/// runs take turns.
const MIGRATE_LOCK: i64 = 0x6b61_6972_6f73;

/// The version recorded in `kairos_schema`, or `None` when the table does
/// not exist (a database never migrated).
async fn version(c: &tokio_postgres::Client) -> Result<Option<i32>, StoreError> {
    match c
        .query_one("SELECT coalesce(max(version), 0) FROM kairos_schema", &[])
        .await
    {
        Ok(r) => Ok(Some(r.get(0))),
        Err(e) if e.code() == Some(&SqlState::UNDEFINED_TABLE) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Refuses a database whose schema is not [`SCHEMA_VERSION`], saying what
/// to do about it.
pub(super) async fn check(c: &tokio_postgres::Client) -> Result<(), StoreError> {
    match version(c).await? {
        Some(v) if v == SCHEMA_VERSION => Ok(()),
        None | Some(0) => Err(StoreError::Schema(format!(
            "the database has no kairos-server schema: run `kairos-server migrate --database URL` first (it brings the schema to version {SCHEMA_VERSION})"
        ))),
        Some(v) if v < SCHEMA_VERSION => Err(StoreError::Schema(format!(
            "the database schema is at version {v}, this server needs {SCHEMA_VERSION}: run `kairos-server migrate --database URL`"
        ))),
        Some(v) => Err(StoreError::Schema(format!(
            "the database schema is at version {v}, newer than this server's {SCHEMA_VERSION}: run a newer kairos-server"
        ))),
    }
}

/// Brings the database at `url` to [`SCHEMA_VERSION`], one transaction per
/// migration; returns the versions before and after. Refuses a schema
/// newer than this server's.
///
/// # Errors
/// The URL, the connection, a migration, or a newer schema.
pub async fn migrate(url: &str) -> Result<(i32, i32), StoreError> {
    let target = super::parse(url)?;
    let (mut c, conn) = target.config.connect(target.tls).await?;
    let conn = tokio::spawn(conn);
    let result = async {
        let tx = c.transaction().await?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATE_LOCK])
            .await?;
        tx.batch_execute(
            "CREATE TABLE IF NOT EXISTS kairos_schema (
                 version    INTEGER PRIMARY KEY,
                 applied_ms BIGINT NOT NULL
             )",
        )
        .await?;
        let from: i32 = tx
            .query_one("SELECT coalesce(max(version), 0) FROM kairos_schema", &[])
            .await?
            .get(0);
        if from > SCHEMA_VERSION {
            return Err(StoreError::Schema(format!(
                "the database schema is at version {from}, newer than this server's {SCHEMA_VERSION}: run a newer kairos-server"
            )));
        }
        let now = chrono::Utc::now().timestamp_millis();
        for (v, sql) in (1..).zip(MIGRATIONS).skip(usize::try_from(from).unwrap_or(0)) {
            tx.batch_execute(sql).await?;
            tx.execute(
                "INSERT INTO kairos_schema (version, applied_ms) VALUES ($1, $2)",
                &[&v, &now],
            )
            .await?;
        }
        tx.commit().await?;
        Ok((from, SCHEMA_VERSION))
    }
    .await;
    drop(c);
    let _ = conn.await;
    result
}
