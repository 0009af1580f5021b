//! Claiming due deliveries with a lease, and recording what became of
//! them, on both stores.
//!
//! A claim sets `owner` and `lease_ms` on up to a batch of pending rows
//! whose time has come and whose lease (if any) has run out: on PostgreSQL
//! with `FOR UPDATE SKIP LOCKED`, so instances claim disjoint batches
//! without waiting on each other; on SQLite inside `BEGIN IMMEDIATE` (one
//! writer). A claim takes rows in the order (due second, rank, calendar,
//! key): a backlog's same second goes out by task priority, and a row due
//! in an earlier second goes before any of a later one (no starvation).
//!
//! A killed instance's rows are claimable again once its lease ends, and
//! then go first: a claim takes the due rows whose lease ran out (in the
//! same order among themselves) before any never claimed, so a takeover
//! does not wait behind a backlog of the same second (measured: 33 s
//! behind 50,000, docs/benchmarks.md). They cannot starve the rest: they
//! are rows already claimed once (a few batches per instance, found
//! through the small partial index `remind_delivery_leased`), and each is
//! finished or leased again by the claim that takes it. Rows never claimed
//! have `lease_ms = 0` (a retry or deferral sets it back to 0), so the two
//! parts of a claim never take the same row. The second part's index,
//! `remind_delivery_fresh`, holds only those (`lease_ms = 0` in its
//! predicate): a claimed row leaves it, so a claim does not read past the
//! rows in flight, and on PostgreSQL (where a claim is an update making a
//! new row version) the index does not take every claimed row in again.
//!
//! A success is recorded by inserting into `remind_sent`, whose
//! primary key (account, key, channel, round) admits one success per
//! instance, channel and round (the trigger's, or a snooze's return)
//! whatever the leases did; a second is counted as a
//! duplicate, never stored. The finishes are recorded a group at a time,
//! one transaction each (the outcomes that became ready together).

use deadpool_postgres::GenericClient;
use rusqlite::{Connection, params};

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
    /// 0 for the trigger's fallback; for a snooze's return (sent again
    /// because the first went out before the snooze), the snooze's end
    /// (ms). One success per (account, key, channel, round).
    pub round: i64,
}

impl Claimed {
    /// For a snooze's return (round ≠ 0): the snooze's end, RFC 3339 UTC.
    #[must_use]
    pub fn after_snooze(&self) -> Option<String> {
        (self.round != 0).then(|| kairos_proto::utc::format(&super::from_ms(self.round)))
    }

    /// Its name within its account, the same on every attempt:
    /// `KEY/CHANNEL`, and `KEY/CHANNEL/after-snooze/T` for a snooze's return.
    #[must_use]
    pub fn name(&self) -> String {
        match self.after_snooze() {
            None => format!("{}/{}", self.key, self.channel),
            Some(t) => format!("{}/{}/after-snooze/{t}", self.key, self.channel),
        }
    }

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
        round: r.get(11)?,
    })
}

/// SQLite, the first part of a claim: due rows whose lease ran out, found
/// through `remind_delivery_leased`.
const SQLITE_EXPIRED: &str = "UPDATE remind_delivery SET owner = ?1, lease_ms = ?2
     WHERE rowid IN (SELECT rowid FROM remind_delivery
                     WHERE state = 'pending' AND lease_ms > 0 AND lease_ms <= ?3 AND next_ms <= ?3
                     ORDER BY next_ms / 1000, rank, calendar, key LIMIT ?4)
     RETURNING account, key, channel, attempts, always, due_ms, target, secret, next_ms, rank,
               calendar, round";

/// SQLite, the second part: due rows never claimed, in order, through
/// `remind_delivery_fresh` (bounded by the due second so that the scan
/// stops at the first row not yet due).
const SQLITE_FRESH: &str = "UPDATE remind_delivery SET owner = ?1, lease_ms = ?2
     WHERE rowid IN (SELECT rowid FROM remind_delivery
                     WHERE state = 'pending' AND next_ms / 1000 <= ?3 / 1000 AND next_ms <= ?3
                           AND lease_ms = 0
                     ORDER BY next_ms / 1000, rank, calendar, key LIMIT ?4)
     RETURNING account, key, channel, attempts, always, due_ms, target, secret, next_ms, rank,
               calendar, round";

/// SQLite: claims up to `batch` due rows for `owner` until `lease_ms`.
pub(crate) fn claim_sqlite(
    c: &mut Connection,
    owner: &str,
    now: i64,
    lease_ms: i64,
    batch: i64,
) -> Result<Vec<Claimed>, StoreError> {
    let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    // The expired leases first, then rows never claimed, up to `batch`.
    let mut rows: Vec<Claimed> = Vec::new();
    for sql in [SQLITE_EXPIRED, SQLITE_FRESH] {
        let left = batch - i64::try_from(rows.len()).unwrap_or(batch);
        if left <= 0 {
            break;
        }
        let mut st = tx.prepare_cached(sql)?;
        for row in st.query_map(params![owner, lease_ms, now, left], claimed_row)? {
            rows.push(row?);
        }
    }
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
            // The expired leases (`e`) first, then rows never claimed
            // (`f`) to fill the batch; see the SQLite twins. The update
            // finds the locked rows by `ctid` (a TID scan): joined on the
            // key, a plan for an unknown row count hashes the whole table.
            "WITH e AS (
                 SELECT ctid AS t FROM remind_delivery
                 WHERE state = 'pending' AND lease_ms > 0 AND lease_ms <= $3 AND next_ms <= $3
                 ORDER BY next_ms / 1000, rank, calendar, key LIMIT $4 FOR UPDATE SKIP LOCKED
             ), f AS (
                 SELECT ctid AS t FROM remind_delivery
                 WHERE state = 'pending' AND next_ms / 1000 <= $3 / 1000 AND next_ms <= $3
                       AND lease_ms = 0
                 ORDER BY next_ms / 1000, rank, calendar, key
                 LIMIT $4 - (SELECT count(*) FROM e) FOR UPDATE SKIP LOCKED
             ), u AS (
                 UPDATE remind_delivery d SET owner = $1, lease_ms = $2
                 WHERE d.ctid = ANY (ARRAY(SELECT t FROM e UNION ALL SELECT t FROM f))
                 RETURNING d.account, d.key, d.channel, d.attempts, d.always, d.due_ms, d.target, d.secret,
                           d.next_ms, d.rank, d.round
             )
             SELECT u.account, u.key, u.channel, u.attempts, u.always, i.due_ms, u.target, u.secret,
                    i.payload, i.state, i.calendar, u.due_ms, u.next_ms, u.rank, u.round FROM u
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
            round: r.get(14),
        })
        .collect())
}
