//! The PostgreSQL side of `store/admin.rs`: the readiness query, an
//! account's export (one `REPEATABLE READ` snapshot) and deletion (every
//! table of the schema with an `account` column, in one transaction).

use tokio_postgres::IsolationLevel;
use tokio_postgres::error::SqlState;

use super::super::admin::{Deleted, Exported, Lines};
use super::{Postgres, StoreError, get, parse, pool, schema};

/// Ops read per round trip of an export.
const PAGE: i64 = 10_000;

impl Postgres {
    pub(crate) async fn ping(&self) -> Result<(), StoreError> {
        let c = get(&self.pool).await?;
        c.query_one(
            "SELECT count(*) FROM (SELECT 1 FROM accounts LIMIT 1) a",
            &[],
        )
        .await?;
        Ok(())
    }
}

async fn client(url: &str) -> Result<deadpool_postgres::Object, StoreError> {
    let pool = pool(&parse(url)?)?;
    let c = get(&pool).await?;
    schema::check(&c).await?;
    Ok(c)
}

pub(crate) async fn export(
    url: &str,
    account: &str,
    out: &mut Lines,
) -> Result<Option<Exported>, StoreError> {
    let mut c = client(url).await?;
    let tx = c
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await?;
    let Some(a) = tx
        .query_opt(
            "SELECT created_ms, head, floor FROM accounts WHERE id = $1",
            &[&account],
        )
        .await?
    else {
        return Ok(None);
    };
    out.account(account, a.get(0), a.get(1), a.get(2))?;
    for r in tx
        .query(
            "SELECT id, name, created_ms, last_seen_ms, revoked_ms FROM devices
             WHERE account = $1 ORDER BY created_ms, id",
            &[&account],
        )
        .await?
    {
        out.device(r.get(0), r.get(1), r.get(2), r.get(3), r.get(4))?;
    }
    let mut after = 0i64;
    loop {
        let rows = tx
            .query(
                "SELECT seq, op_json FROM ops WHERE account_num = (SELECT num FROM accounts WHERE id = $1) AND seq > $2 AND op_json IS NOT NULL ORDER BY seq LIMIT $3",
                &[&account, &after, &PAGE],
            )
            .await?;
        let Some(last) = rows.last() else { break };
        after = last.get(0);
        for r in &rows {
            out.op(r.get(0), r.get(1))?;
        }
    }
    tx.commit().await?;
    Ok(Some(out.n))
}

pub(crate) async fn delete(url: &str, account: &str) -> Result<Option<Deleted>, StoreError> {
    let mut c = client(url).await?;
    let mut tx = c.transaction().await?;
    if tx
        .query_opt(
            "SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE",
            &[&account],
        )
        .await?
        .is_none()
    {
        return Ok(None);
    }
    let mut tables: Vec<String> = tx
        .query(
            "SELECT table_name::text FROM information_schema.columns
             WHERE table_schema = current_schema() AND column_name = 'account'
             ORDER BY table_name",
            &[],
        )
        .await?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let mut deleted = Deleted::new();
    // `ops` names its account by number (migration 0011), so the loop
    // below does not see it.
    let n = tx
        .execute(
            "DELETE FROM ops WHERE account_num = (SELECT num FROM accounts WHERE id = $1)",
            &[&account],
        )
        .await?;
    deleted.insert("ops".into(), n);
    // The keys are not deferrable: a table whose rows are still referenced
    // by another's is tried again after the others (each pass deletes at
    // least one table, or the last error is the answer).
    while !tables.is_empty() {
        let (tried, mut later, mut last) = (tables.len(), Vec::new(), None);
        for t in tables {
            let sql = format!(
                "DELETE FROM \"{}\" WHERE account = $1",
                t.replace('"', "\"\"")
            );
            let sp = tx.savepoint("one_table").await?;
            match sp.execute(&sql, &[&account]).await {
                Ok(n) => {
                    sp.commit().await?;
                    deleted.insert(t, n);
                }
                Err(e) if e.code() == Some(&SqlState::FOREIGN_KEY_VIOLATION) => {
                    sp.rollback().await?;
                    later.push(t);
                    last = Some(e);
                }
                Err(e) => return Err(e.into()),
            }
        }
        if let Some(e) = last
            && later.len() == tried
        {
            return Err(e.into());
        }
        tables = later;
    }
    let n = tx
        .execute("DELETE FROM accounts WHERE id = $1", &[&account])
        .await?;
    deleted.insert("accounts".into(), n);
    tx.commit().await?;
    Ok(Some(deleted))
}
