//! The reminder tables on PostgreSQL, shared by every instance: a round
//! is one transaction that first moves the account's cursor with a guarded
//! `UPDATE` (the row lock orders concurrent rounds; the loser writes
//! nothing).

use deadpool_postgres::GenericClient;
use deadpool_postgres::{Manager, Object, Pool};

use super::{Channel, Due, Fallback, Loaded, Row, Stored, Write, from_ms};
use crate::store::StoreError;

/// Connections of the reminder pool (the round, the claims, deliveries).
const POOL: usize = 8;

pub(crate) struct Pg {
    pub(crate) pool: Pool,
}

fn i(u: u64) -> i64 {
    i64::try_from(u).unwrap_or(i64::MAX)
}

impl Pg {
    pub(crate) fn connect(url: &str) -> Result<Self, StoreError> {
        let target = crate::store::pg_target(url)?;
        let pool = Pool::builder(Manager::new(target.config, target.tls))
            .max_size(POOL)
            .build()
            .map_err(|e| StoreError::Pool(e.to_string()))?;
        Ok(Self { pool })
    }

    pub(crate) async fn get(&self) -> Result<Object, StoreError> {
        self.pool.get().await.map_err(crate::store::pool_error)
    }

    pub(crate) async fn configure(&self, f: &Fallback, now_ms: i64) -> Result<(), StoreError> {
        let mut c = self.get().await?;
        let tx = c.transaction().await?;
        let after = i64::try_from(f.after.as_secs()).unwrap_or(i64::MAX);
        tx.execute(
            "INSERT INTO remind_fallback (account, calendar, channel, target, secret, after_secs, always)
             VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT (account, calendar, channel) DO UPDATE SET target = excluded.target,
               secret = excluded.secret, after_secs = excluded.after_secs, always = excluded.always",
            &[
                &f.account,
                &f.calendar,
                &f.channel.name(),
                &f.target,
                &f.secret,
                &after,
                &i64::from(f.always),
            ],
        )
        .await?;
        tx.execute(super::round::REPLAN, &[&f.account]).await?;
        super::reconfigure::pg(&tx, f, now_ms).await?;
        tx.commit().await?;
        Ok(())
    }

    pub(crate) async fn set_zone(&self, account: &str, zone: &str) -> Result<(), StoreError> {
        let mut c = self.get().await?;
        let tx = c.transaction().await?;
        tx.execute(
            "INSERT INTO remind_zone (account, zone) VALUES ($1, $2)
             ON CONFLICT (account) DO UPDATE SET zone = excluded.zone",
            &[&account, &zone],
        )
        .await?;
        tx.execute(super::round::REPLAN, &[&account]).await?;
        tx.commit().await?;
        Ok(())
    }

    pub(crate) async fn due(&self, refresh_ms: i64) -> Result<Vec<Due>, StoreError> {
        let c = self.get().await?;
        let rows = c
            .query(
                "SELECT a.id, a.head, coalesce(r.seq, 0), coalesce(r.planned_until_ms, 0)
                 FROM accounts a LEFT JOIN remind_cursor r ON r.account = a.id
                 WHERE a.id IN (SELECT account FROM remind_fallback)
                   AND (a.head > coalesce(r.seq, 0) OR coalesce(r.planned_until_ms, 0) < $1)",
                &[&refresh_ms],
            )
            .await?;
        Ok(rows
            .iter()
            .map(|r| {
                (
                    r.get(0),
                    u64::try_from(r.get::<_, i64>(1)).unwrap_or(0),
                    u64::try_from(r.get::<_, i64>(2)).unwrap_or(0),
                    r.get(3),
                )
            })
            .collect())
    }

    pub(crate) async fn load(&self, account: &str, after: u64) -> Result<Loaded, StoreError> {
        let c = self.get().await?;
        let entities = c
            .query(
                "SELECT op_json FROM remind_entity WHERE account = $1",
                &[&account],
            )
            .await?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let ops = c
            .query(
                "SELECT seq, op_json FROM ops WHERE account_num = (SELECT num FROM accounts WHERE id = $1) AND seq > $2 AND op_json IS NOT NULL ORDER BY seq LIMIT $3",
                &[&account, &i(after), &super::sqlite::OPS_PER_ROUND],
            )
            .await?
            .iter()
            .map(|r| (u64::try_from(r.get::<_, i64>(0)).unwrap_or(0), r.get(1)))
            .collect();
        let zone = c
            .query_opt(
                "SELECT zone FROM remind_zone WHERE account = $1",
                &[&account],
            )
            .await?
            .map(|r| r.get(0));
        Ok(Loaded {
            entities,
            ops,
            fallbacks: fallbacks(&c, account).await?,
            zone,
        })
    }

    pub(crate) async fn apply(&self, w: Write) -> Result<Option<Stored>, StoreError> {
        let mut c = self.get().await?;
        let tx = c.transaction().await?;
        let out = apply(&tx, &w).await?;
        if out.is_some() {
            tx.commit().await?;
        }
        Ok(out)
    }

    pub(crate) async fn depth(&self, now: i64) -> Result<(u64, u64), StoreError> {
        let row = self
            .get()
            .await?
            .query_one(
                // Rows never claimed, then rows with a lease: each set
                // through its own partial index (migration 0006).
                "SELECT f.due + l.due, f.n + l.n
                 FROM (SELECT count(*) FILTER (WHERE next_ms <= $1) AS due, count(*) AS n
                       FROM remind_delivery WHERE state = 'pending' AND lease_ms = 0) f,
                      (SELECT count(*) FILTER (WHERE next_ms <= $1) AS due, count(*) AS n
                       FROM remind_delivery WHERE state = 'pending' AND lease_ms > 0) l",
                &[&now],
            )
            .await?;
        let (due, all): (i64, i64) = (row.get(0), row.get(1));
        let due = u64::try_from(due).unwrap_or(0);
        Ok((due, u64::try_from(all).unwrap_or(0).saturating_sub(due)))
    }

    /// When the next claim can take something ([`NEXT_DUE_PG`]).
    pub(crate) async fn next_due(&self) -> Result<Option<i64>, StoreError> {
        let row = self.get().await?.query_one(NEXT_DUE_PG, &[]).await?;
        let (fresh, leased): (Option<i64>, Option<i64>) = (row.get(0), row.get(1));
        Ok(fresh.into_iter().chain(leased).min())
    }

    pub(crate) async fn instances(&self, account: &str) -> Result<Vec<Row>, StoreError> {
        let c = self.get().await?;
        Ok(c.query(
            "SELECT key, due_ms, state FROM remind_instance WHERE account = $1 ORDER BY due_ms, key",
            &[&account],
        )
        .await?
        .iter()
        .map(|r| Row {
            key: r.get(0),
            due: from_ms(r.get(1)),
            state: r.get(2),
        })
        .collect())
    }
}

pub(super) async fn fallbacks(
    c: &impl GenericClient,
    account: &str,
) -> Result<Vec<Fallback>, StoreError> {
    let rows = c
        .query(
            "SELECT calendar, channel, target, secret, after_secs, always FROM remind_fallback WHERE account = $1",
            &[&account],
        )
        .await?;
    Ok(rows
        .iter()
        .filter_map(|r| {
            let channel = Channel::parse(r.get::<_, &str>(1)).ok()?;
            Some(Fallback {
                account: account.to_owned(),
                calendar: r.get(0),
                channel,
                target: r.get(2),
                secret: r.get(3),
                after: std::time::Duration::from_secs(
                    u64::try_from(r.get::<_, i64>(4)).unwrap_or(0),
                ),
                always: r.get::<_, i64>(5) != 0,
            })
        })
        .collect())
}

pub(crate) async fn audit(
    c: &impl GenericClient,
    account: &str,
    key: &str,
    at: i64,
    event: &str,
) -> Result<(), StoreError> {
    c.execute(
        "INSERT INTO remind_audit (account, key, at_ms, event) VALUES ($1, $2, $3, $4)",
        &[&account, &key, &at, &event],
    )
    .await?;
    Ok(())
}

async fn apply(c: &impl GenericClient, w: &Write) -> Result<Option<Stored>, StoreError> {
    let a = &w.account;
    let now = w.now_ms;
    c.execute(
        "INSERT INTO remind_cursor (account, seq, planned_until_ms) VALUES ($1, 0, 0)
         ON CONFLICT (account) DO NOTHING",
        &[a],
    )
    .await?;
    let moved = c
        .execute(
            "UPDATE remind_cursor SET seq = $2, planned_until_ms = $3
             WHERE account = $1 AND seq = $4 AND planned_until_ms = $5",
            &[
                a,
                &i(w.to_seq),
                &w.to_until_ms,
                &i(w.from_seq),
                &w.from_until_ms,
            ],
        )
        .await?;
    if moved == 0 {
        return Ok(None);
    }
    let mut out = Stored::default();
    for (entity, hlc, json) in &w.changes.entities {
        c.execute(
            "INSERT INTO remind_entity (account, entity, hlc, op_json) VALUES ($1, $2, $3, $4)
             ON CONFLICT (account, entity) DO UPDATE SET hlc = excluded.hlc, op_json = excluded.op_json",
            &[a, entity, hlc, json],
        )
        .await?;
    }
    super::ack_store::pg_apply(c, w, &mut out).await?;
    let planned: std::collections::BTreeSet<&str> =
        w.instances.iter().map(|i| i.key.as_str()).collect();
    let stale: Vec<String> = c
        .query(
            "SELECT key FROM remind_instance WHERE account = $1 AND state = 'pending'
             AND due_ms >= $2 AND due_ms < $3",
            &[a, &w.window.0, &w.window.1],
        )
        .await?
        .iter()
        .map(|r| r.get::<_, String>(0))
        .filter(|k| !planned.contains(k.as_str()))
        .collect();
    for key in &stale {
        c.execute(
            "UPDATE remind_instance SET state = 'withdrawn' WHERE account = $1 AND key = $2",
            &[a, key],
        )
        .await?;
        c.execute(
            "UPDATE remind_delivery SET state = 'cancelled', reason = 'withdrawn: the event changed or went away', done_ms = $3
             WHERE account = $1 AND key = $2 AND state = 'pending'",
            &[a, key, &now],
        )
        .await?;
        audit(c, a, key, now, "withdrawn: the event changed or went away").await?;
        out.withdrawn += 1;
    }
    super::plan_pg::plan(c, w, &mut out).await?;
    Ok(Some(out))
}

/// When the next claim can take something: the earliest `next_ms` of rows
/// never claimed, or the earliest end of a lease (if later than its row's
/// time); each through its own partial index. The first is `ORDER BY …
/// LIMIT 1`, not `min()`: on a queue filled since the last `ANALYZE` the
/// planner expected one row and aggregated the whole index (3.3 ms with
/// 20,000 queued, at every pause of every instance), where the ordered
/// scan reads one entry (0.05 ms) whatever the statistics say. Public for
/// the plan's test (`tests/it/remind_scan.rs`).
pub const NEXT_DUE_PG: &str = "SELECT (SELECT next_ms FROM remind_delivery
         WHERE state = 'pending' AND lease_ms = 0 ORDER BY next_ms LIMIT 1),
        (SELECT min(greatest(lease_ms, next_ms)) FROM remind_delivery
         WHERE state = 'pending' AND lease_ms > 0)";
