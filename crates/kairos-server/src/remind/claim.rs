//! Claiming due deliveries with a lease, and recording what became of
//! them, on both stores.
//!
//! A claim sets `owner` and `lease_ms` on up to a batch of pending rows
//! whose time has come and whose lease (if any) has run out: on PostgreSQL
//! with `FOR UPDATE SKIP LOCKED`, so instances claim disjoint batches
//! without waiting on each other; on SQLite inside `BEGIN IMMEDIATE` (one
//! writer). A claim takes rows in the order (due second, rank, calendar,
//! key): a backlog's same second goes out by task priority, and a row due
//! in an earlier second goes before any of a later one (no starvation). A killed instance's rows are claimable again once its lease
//! ends. A success is recorded by inserting into `remind_sent`, whose
//! primary key (account, key, channel) admits one success per instance
//! and channel whatever the leases did; a second is counted as a
//! duplicate, never stored. The finishes are recorded a group at a time,
//! one transaction each (the outcomes that became ready together).

use deadpool_postgres::GenericClient;
use rusqlite::{Connection, params};

use super::pg::audit as pg_audit;
use crate::store::StoreError;

/// One claimed delivery with what is needed to send it.
#[derive(Debug, Clone)]
pub struct Claimed {
    /// The account.
    pub account: String,
    /// The instance's key.
    pub key: String,
    /// `webhook` or `email`.
    pub channel: String,
    /// Failed attempts so far.
    pub attempts: u32,
    /// Sent even if acknowledged.
    pub always: bool,
    /// When the reminder fired (ms; the delivery is due N minutes later).
    pub due_ms: i64,
    /// URL or address.
    pub target: String,
    /// The webhook secret.
    pub secret: Option<String>,
    /// The instance's payload (JSON).
    pub payload: String,
    /// The instance's state (`pending`, `acked`, `withdrawn`).
    pub state: String,
    /// The instance's calendar uid.
    pub calendar: String,
    /// When the delivery was due (ms): the trigger plus the fallback's delay.
    pub deliver_ms: i64,
    /// When this attempt was due (ms): `deliver_ms`, or a retry's or a
    /// deferral's time.
    pub next_ms: i64,
    /// The task's priority, 10 for none.
    pub rank: i64,
}

impl Claimed {
    /// Its place in the claim's order.
    #[must_use]
    pub fn order(&self) -> (i64, i64, &str, &str) {
        (
            self.next_ms.div_euclid(1000),
            self.rank,
            &self.calendar,
            &self.key,
        )
    }
}

/// What to record for a claimed delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finish {
    /// Delivered.
    Sent,
    /// Failed, try again at this time (ms).
    Retry {
        /// When.
        at_ms: i64,
        /// Why it failed.
        reason: String,
    },
    /// Given up.
    Abandon(String),
    /// Not to be sent (acknowledged or withdrawn meanwhile).
    Cancel(String),
    /// Not sent now and not an attempt (the destination's circuit is open,
    /// or the account is over its rate): pending again at this time (ms).
    Defer {
        /// When.
        at_ms: i64,
        /// Why.
        reason: String,
    },
}

fn claimed_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Claimed> {
    Ok(Claimed {
        account: r.get(0)?,
        key: r.get(1)?,
        channel: r.get(2)?,
        attempts: u32::try_from(r.get::<_, i64>(3)?).unwrap_or(u32::MAX),
        always: r.get::<_, i64>(4)? != 0,
        due_ms: r.get(5)?,
        target: r.get(6)?,
        secret: r.get(7)?,
        payload: String::new(),
        state: String::new(),
        calendar: r.get(10)?,
        deliver_ms: r.get(5)?,
        next_ms: r.get(8)?,
        rank: r.get(9)?,
    })
}

/// SQLite: claims up to `batch` due rows for `owner` until `lease_ms`.
pub(crate) fn claim_sqlite(
    c: &mut Connection,
    owner: &str,
    now: i64,
    lease_ms: i64,
    batch: i64,
) -> Result<Vec<Claimed>, StoreError> {
    let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let mut rows: Vec<Claimed> = tx
        .prepare_cached(
            "UPDATE remind_delivery SET owner = ?1, lease_ms = ?2
             WHERE rowid IN (SELECT rowid FROM remind_delivery
                             WHERE state = 'pending' AND next_ms <= ?3 AND lease_ms <= ?3
                             ORDER BY next_ms / 1000, rank, calendar, key LIMIT ?4)
             RETURNING account, key, channel, attempts, always, due_ms, target, secret, next_ms, rank,
                       calendar",
        )?
        .query_map(params![owner, lease_ms, now, batch], claimed_row)?
        .collect::<Result<_, _>>()?;
    {
        let mut st = tx.prepare_cached(
            "SELECT payload, state, due_ms FROM remind_instance WHERE account = ?1 AND key = ?2",
        )?;
        for row in &mut rows {
            (row.payload, row.state, row.due_ms) = st
                .query_row(params![row.account, row.key], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })?;
        }
    }
    tx.commit()?;
    Ok(rows)
}

/// PostgreSQL: the same claim, `FOR UPDATE SKIP LOCKED`.
pub(crate) async fn claim_pg(
    c: &impl GenericClient,
    owner: &str,
    now: i64,
    lease_ms: i64,
    batch: i64,
) -> Result<Vec<Claimed>, StoreError> {
    let rows = c
        .query(
            "WITH c AS (
                 SELECT account, key, channel FROM remind_delivery
                 WHERE state = 'pending' AND next_ms <= $3 AND lease_ms <= $3
                 ORDER BY next_ms / 1000, rank, calendar, key LIMIT $4 FOR UPDATE SKIP LOCKED
             ), u AS (
                 UPDATE remind_delivery d SET owner = $1, lease_ms = $2 FROM c
                 WHERE d.account = c.account AND d.key = c.key AND d.channel = c.channel
                 RETURNING d.account, d.key, d.channel, d.attempts, d.always, d.due_ms, d.target, d.secret,
                           d.next_ms, d.rank
             )
             SELECT u.account, u.key, u.channel, u.attempts, u.always, i.due_ms, u.target, u.secret,
                    i.payload, i.state, i.calendar, u.due_ms, u.next_ms, u.rank FROM u
             JOIN remind_instance i ON i.account = u.account AND i.key = u.key",
            &[&owner, &lease_ms, &now, &batch],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| Claimed {
            account: r.get(0),
            key: r.get(1),
            channel: r.get(2),
            attempts: u32::try_from(r.get::<_, i64>(3)).unwrap_or(u32::MAX),
            always: r.get::<_, i64>(4) != 0,
            due_ms: r.get(5),
            target: r.get(6),
            secret: r.get(7),
            payload: r.get(8),
            state: r.get(9),
            calendar: r.get(10),
            deliver_ms: r.get(11),
            next_ms: r.get(12),
            rank: r.get(13),
        })
        .collect())
}

fn event(c: &Claimed, f: &Finish, owner: &str, dup: bool) -> String {
    let n = c.attempts + 1;
    match f {
        Finish::Sent if dup => format!(
            "duplicate: {} attempt {n} by {owner} succeeded after another had (not recorded)",
            c.channel
        ),
        Finish::Sent => format!("delivered by {} (attempt {n}, {owner})", c.channel),
        Finish::Retry { reason, .. } => {
            format!("{} attempt {n} failed, retrying: {reason}", c.channel)
        }
        Finish::Abandon(reason) => format!("{} abandoned after attempt {n}: {reason}", c.channel),
        Finish::Cancel(reason) => format!("{} cancelled: {reason}", c.channel),
        Finish::Defer { reason, .. } => format!("{} deferred: {reason}", c.channel),
    }
}

/// SQLite: records each `(row, f)` of a group in one transaction; per row
/// `true` if it was a duplicate success.
pub(crate) fn finish_sqlite(
    c: &mut Connection,
    group: &[(Claimed, Finish)],
    owner: &str,
    now: i64,
) -> Result<Vec<bool>, StoreError> {
    let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let mut dups = Vec::with_capacity(group.len());
    for (row, f) in group {
        dups.push(record_sqlite(&tx, row, f, owner, now)?);
    }
    tx.commit()?;
    Ok(dups)
}

fn record_sqlite(
    tx: &rusqlite::Transaction<'_>,
    row: &Claimed,
    f: &Finish,
    owner: &str,
    now: i64,
) -> Result<bool, StoreError> {
    let (a, k, ch) = (&row.account, &row.key, &row.channel);
    let mut dup = false;
    match f {
        Finish::Sent => {
            dup = tx
                .prepare_cached(
                    "INSERT INTO remind_sent (account, key, channel, at_ms, owner)
                     VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT DO NOTHING",
                )?
                .execute(params![a, k, ch, now, owner])?
                == 0;
            tx.prepare_cached(
                "UPDATE remind_delivery SET state = 'delivered', done_ms = ?4, reason = NULL,
                 attempts = attempts + 1 WHERE account = ?1 AND key = ?2 AND channel = ?3 AND state = 'pending'",
            )?
            .execute(params![a, k, ch, now])?;
        }
        Finish::Retry { at_ms, reason } | Finish::Defer { at_ms, reason } => {
            tx.prepare_cached(
                "UPDATE remind_delivery SET attempts = attempts + ?7, next_ms = ?4, owner = NULL,
                 lease_ms = 0, reason = ?5
                 WHERE account = ?1 AND key = ?2 AND channel = ?3 AND state = 'pending' AND owner = ?6",
            )?
            .execute(params![
                a,
                k,
                ch,
                at_ms,
                reason,
                owner,
                i64::from(matches!(f, Finish::Retry { .. }))
            ])?;
        }
        Finish::Abandon(reason) | Finish::Cancel(reason) => {
            let state = if matches!(f, Finish::Abandon(_)) {
                "abandoned"
            } else {
                "cancelled"
            };
            tx.prepare_cached(
                "UPDATE remind_delivery SET state = ?4, reason = ?5, done_ms = ?6,
                 attempts = attempts + ?8
                 WHERE account = ?1 AND key = ?2 AND channel = ?3 AND state = 'pending' AND owner = ?7",
            )?
            .execute(params![
                a,
                k,
                ch,
                state,
                reason,
                now,
                owner,
                i64::from(state == "abandoned")
            ])?;
        }
    }
    tx.prepare_cached(
        "INSERT INTO remind_audit (account, key, at_ms, event) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![a, k, now, event(row, f, owner, dup)])?;
    Ok(dup)
}

/// PostgreSQL: [`finish_sqlite`].
pub(crate) async fn finish_pg(
    c: &mut deadpool_postgres::Object,
    group: &[(Claimed, Finish)],
    owner: &str,
    now: i64,
) -> Result<Vec<bool>, StoreError> {
    let tx = c.transaction().await?;
    let mut dups = Vec::with_capacity(group.len());
    for (row, f) in group {
        dups.push(record_pg(&tx, row, f, owner, now).await?);
    }
    tx.commit().await?;
    Ok(dups)
}

async fn record_pg(
    tx: &impl GenericClient,
    row: &Claimed,
    f: &Finish,
    owner: &str,
    now: i64,
) -> Result<bool, StoreError> {
    let (a, k, ch) = (&row.account, &row.key, &row.channel);
    let mut dup = false;
    match f {
        Finish::Sent => {
            dup = tx
                .execute(
                    "INSERT INTO remind_sent (account, key, channel, at_ms, owner)
                     VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
                    &[a, k, ch, &now, &owner],
                )
                .await?
                == 0;
            tx.execute(
                "UPDATE remind_delivery SET state = 'delivered', done_ms = $4, reason = NULL,
                 attempts = attempts + 1 WHERE account = $1 AND key = $2 AND channel = $3 AND state = 'pending'",
                &[a, k, ch, &now],
            )
            .await?;
        }
        Finish::Retry { at_ms, reason } | Finish::Defer { at_ms, reason } => {
            let attempt = i64::from(matches!(f, Finish::Retry { .. }));
            tx.execute(
                "UPDATE remind_delivery SET attempts = attempts + $7, next_ms = $4, owner = NULL,
                 lease_ms = 0, reason = $5
                 WHERE account = $1 AND key = $2 AND channel = $3 AND state = 'pending' AND owner = $6",
                &[a, k, ch, at_ms, reason, &owner, &attempt],
            )
            .await?;
        }
        Finish::Abandon(reason) | Finish::Cancel(reason) => {
            let state = if matches!(f, Finish::Abandon(_)) {
                "abandoned"
            } else {
                "cancelled"
            };
            tx.execute(
                "UPDATE remind_delivery SET state = $4, reason = $5, done_ms = $6,
                 attempts = attempts + $8
                 WHERE account = $1 AND key = $2 AND channel = $3 AND state = 'pending' AND owner = $7",
                &[a, k, ch, &state, reason, &now, &owner, &i64::from(state == "abandoned")],
            )
            .await?;
        }
    }
    pg_audit(tx, a, k, now, &event(row, f, owner, dup)).await?;
    Ok(dup)
}
