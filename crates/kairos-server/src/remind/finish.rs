//! Recording what became of claimed deliveries (`claim.rs`), on both
//! stores: the finishes ready together are committed in one transaction;
//! a success is an insert into `remind_sent`, whose primary key admits one
//! per instance, channel and round (a second is a duplicate, never
//! stored). On
//! SQLite the queue row is then marked `delivered`; on PostgreSQL it is
//! deleted in the same statement (see [`PG_SENT`]): `remind_sent` alone
//! says the delivery was made.

use std::collections::HashSet;

use deadpool_postgres::GenericClient;
use rusqlite::{Connection, params};

use super::claim::{Claimed, Finish};
use super::pg::audit as pg_audit;
use crate::store::StoreError;

/// Why an attempt that failed or was deferred is not tried again.
const SUPERSEDED: &str = "snoozed on a device while it was under way, its return is queued";

/// A failed or deferred attempt of a row a snooze's return supersedes
/// (queued beside it while it was in flight, `ack_store::QUEUE_RETURN`) is
/// cancelled, not retried: the person saw the reminder and asked for it
/// later. Parameters: account, key, channel, round, reason, now, counted
/// attempt (0 or 1), owner.
const CANCEL_SUPERSEDED: &str = "UPDATE remind_delivery SET state = 'cancelled', reason = ?5,
         done_ms = ?6, attempts = attempts + ?7
     WHERE account = ?1 AND key = ?2 AND channel = ?3 AND round = ?4 AND state = 'pending'
       AND owner = ?8
       AND EXISTS (SELECT 1 FROM remind_delivery n
                   WHERE n.account = ?1 AND n.key = ?2 AND n.channel = ?3 AND n.round <> ?4
                     AND n.state = 'pending')";

/// The audit line of an attempt [`CANCEL_SUPERSEDED`] cancelled.
fn superseded(c: &Claimed, f: &Finish, owner: &str) -> String {
    let what = match f {
        Finish::Retry { reason, .. } => {
            format!("{} attempt {} failed: {reason}", c.channel, c.attempts + 1)
        }
        Finish::Defer { reason, .. } => format!("{} deferred: {reason}", c.channel),
        other => event(c, other, owner, false),
    };
    format!("{what}; not tried again: {SUPERSEDED}")
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
    let (a, k, ch, r) = (&row.account, &row.key, &row.channel, row.round);
    let mut dup = false;
    match f {
        Finish::Sent => {
            dup = tx
                .prepare_cached(
                    "INSERT INTO remind_sent (account, key, channel, at_ms, owner, round)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING",
                )?
                .execute(params![a, k, ch, now, owner, r])?
                == 0;
            tx.prepare_cached(
                "UPDATE remind_delivery SET state = 'delivered', done_ms = ?4, reason = NULL,
                 attempts = attempts + 1
                 WHERE account = ?1 AND key = ?2 AND channel = ?3 AND round = ?5 AND state = 'pending'",
            )?
            .execute(params![a, k, ch, now, r])?;
        }
        Finish::Retry { at_ms, reason } | Finish::Defer { at_ms, reason } => {
            let counted = i64::from(matches!(f, Finish::Retry { .. }));
            if tx
                .prepare_cached(CANCEL_SUPERSEDED)?
                .execute(params![a, k, ch, r, SUPERSEDED, now, counted, owner])?
                > 0
            {
                super::sqlite::audit(tx, a, k, now, &superseded(row, f, owner))?;
                return Ok(false);
            }
            tx.prepare_cached(
                "UPDATE remind_delivery SET attempts = attempts + ?7, next_ms = ?4, owner = NULL,
                 lease_ms = 0, reason = ?5
                 WHERE account = ?1 AND key = ?2 AND channel = ?3 AND round = ?8 AND state = 'pending'
                   AND owner = ?6",
            )?
            .execute(params![
                a,
                k,
                ch,
                at_ms,
                reason,
                owner,
                counted,
                r
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
                 WHERE account = ?1 AND key = ?2 AND channel = ?3 AND round = ?9 AND state = 'pending'
                   AND owner = ?7",
            )?
            .execute(params![
                a,
                k,
                ch,
                state,
                reason,
                now,
                owner,
                i64::from(state == "abandoned"),
                r
            ])?;
        }
    }
    tx.prepare_cached(
        "INSERT INTO remind_audit (account, key, at_ms, event) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![a, k, now, event(row, f, owner, dup)])?;
    Ok(dup)
}

/// PostgreSQL, a group's successes in one statement over arrays
/// (`unnest`), when none of them is a duplicate (nearly always: a
/// duplicate needs a takeover): a plain insert into `remind_sent`, with
/// the attempt each success was, and the **deletion** of the queue rows.
/// Their audit line is not written: the `remind_sent` row says it (who,
/// when, which attempt), and [`super::Reminders::why`] reads it from there
/// ([`PG_WHY`]). A duplicate among them breaks `remind_sent`'s primary key
/// and the statement fails as a whole, writing nothing; the group then
/// goes through [`PG_SENT_DUP`], audit lines included. Against that
/// statement alone it spares each row the speculative insertion of
/// `ON CONFLICT` (a probe of the key before the insert and a confirmation
/// record after it), an audit row and its index entry, and the two audit
/// texts per row built and sent by the server.
///
/// The queue row is deleted rather than marked `delivered`: a deletion
/// writes one small WAL record and no index entry, where the update wrote
/// a whole new row version and a primary key entry (`state` is in the
/// partial indexes' predicates, so the update is never HOT). The success
/// stays known from `remind_sent` alone: the planner does not queue a
/// delivery again that has a `remind_sent` row (`pg.rs`), the queue depth
/// and the next due time read pending rows only, and `why` reads the
/// attempt from `remind_sent.attempt`. A row no longer pending (cancelled
/// by an acknowledgement while its POST was in flight) is left as it is,
/// as before.
const PG_SENT: &str = "WITH t AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $6::int8[], $7::int8[])
             AS t(a, k, ch, n, r)
     ), s AS (
         INSERT INTO remind_sent (account, key, channel, at_ms, owner, attempt, round)
         SELECT a, k, ch, $4, $5, n, r FROM t
     )
     DELETE FROM remind_delivery d USING t
     WHERE d.account = t.a AND d.key = t.k AND d.channel = t.ch AND d.round = t.r
       AND d.state = 'pending'";

/// PostgreSQL, the audit trail of a key (`$1`): `remind_audit`'s lines,
/// and the successes [`PG_SENT`] recorded without one, from `remind_sent`
/// (in the accounts with a line for the key: its primary key's prefix),
/// written as [`finish_sqlite`] writes them. The attempt is
/// `remind_sent.attempt`; a row recorded before it existed (NULL) takes it
/// from its queue row, which such a finish kept (it counted the attempt in
/// `attempts` unless the row had left `pending` meanwhile, say acknowledged
/// while its POST was in flight).
pub(crate) const PG_WHY: &str = "SELECT account, at_ms, event FROM remind_audit WHERE key = $1
     UNION ALL
     SELECT s.account, s.at_ms,
            'delivered by ' || s.channel || ' (attempt '
            || coalesce(s.attempt,
                        CASE WHEN d.state = 'delivered' THEN d.attempts ELSE d.attempts + 1 END)
            || ', ' || s.owner || ')'
     FROM remind_sent s
     LEFT JOIN remind_delivery d
       ON d.account = s.account AND d.key = s.key AND d.channel = s.channel AND d.round = s.round
     WHERE s.key = $1 AND s.account IN (SELECT account FROM remind_audit WHERE key = $1)
       AND NOT EXISTS (SELECT 1 FROM remind_audit a
                       WHERE a.account = s.account AND a.key = s.key
                         AND a.event LIKE 'delivered by ' || s.channel || ' (%')
     ORDER BY at_ms";

/// PostgreSQL, a group's successes that may hold duplicates: the insert
/// into `remind_sent` skips them (its `RETURNING`: the ones that were not
/// duplicates), the queue rows' deletion (as [`PG_SENT`]), and the audit lines, each
/// chosen by whether its insert went in (`$6` if it did, `$7` if it was a
/// duplicate).
const PG_SENT_DUP: &str = "WITH t AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $6::text[], $7::text[], $8::int8[],
                              $9::int8[])
             AS t(a, k, ch, ok, dup, n, r)
     ), s AS (
         INSERT INTO remind_sent (account, key, channel, at_ms, owner, attempt, round)
         SELECT a, k, ch, $4, $5, n, r FROM t ON CONFLICT DO NOTHING
         RETURNING account, key, channel, round
     ), u AS (
         DELETE FROM remind_delivery d USING t
         WHERE d.account = t.a AND d.key = t.k AND d.channel = t.ch AND d.round = t.r
           AND d.state = 'pending'
     ), au AS (
         INSERT INTO remind_audit (account, key, at_ms, event)
         SELECT t.a, t.k, $4, CASE WHEN s.key IS NULL THEN t.dup ELSE t.ok END
         FROM t LEFT JOIN s ON s.account = t.a AND s.key = t.k AND s.channel = t.ch AND s.round = t.r
     )
     SELECT account, key, channel, round FROM s";

/// PostgreSQL: [`finish_sqlite`], set-based. A group of successes only
/// (nearly every group in a burst) is one prepared statement, its own
/// transaction: [`PG_SENT`], or if a duplicate makes it fail,
/// [`PG_SENT_DUP`]. A group with other outcomes (failures, deferrals,
/// cancellations: few) is one transaction: its successes by
/// [`PG_SENT_DUP`] (a failed statement would abort the transaction), the
/// rest one statement each.
pub(crate) async fn finish_pg(
    c: &mut deadpool_postgres::Object,
    group: &[(Claimed, Finish)],
    owner: &str,
    now: i64,
) -> Result<Vec<bool>, StoreError> {
    let sent: Vec<&Claimed> = group
        .iter()
        .filter(|(_, f)| *f == Finish::Sent)
        .map(|(c, _)| c)
        .collect();
    let stored = if sent.len() == group.len() {
        if record_sent_pg(&*c, &sent, owner, now).await? {
            return Ok(vec![false; group.len()]);
        }
        record_sent_dup_pg(&*c, &sent, owner, now).await?
    } else {
        let tx = c.transaction().await?;
        let stored = record_sent_dup_pg(&tx, &sent, owner, now).await?;
        for (row, f) in group.iter().filter(|(_, f)| *f != Finish::Sent) {
            let line = if record_pg(&tx, row, f, owner, now).await? {
                event(row, f, owner, false)
            } else {
                superseded(row, f, owner)
            };
            pg_audit(&tx, &row.account, &row.key, now, &line).await?;
        }
        tx.commit().await?;
        stored
    };
    Ok(group
        .iter()
        .map(|(c, f)| {
            *f == Finish::Sent
                && !stored.contains(&(c.account.clone(), c.key.clone(), c.channel.clone(), c.round))
        })
        .collect())
}

fn columns<'a>(sent: &[&'a Claimed]) -> [Vec<&'a str>; 3] {
    let col =
        |f: fn(&'a Claimed) -> &'a str| -> Vec<&'a str> { sent.iter().map(|c| f(c)).collect() };
    [col(|c| &c.account), col(|c| &c.key), col(|c| &c.channel)]
}

/// The attempt each success was (1 for the first).
fn attempts(sent: &[&Claimed]) -> Vec<i64> {
    sent.iter().map(|c| i64::from(c.attempts) + 1).collect()
}

/// The round of each (see [`Claimed::round`]).
fn rounds(sent: &[&Claimed]) -> Vec<i64> {
    sent.iter().map(|c| c.round).collect()
}

/// [`PG_SENT`] for `sent`: `false` if a duplicate among them made it fail
/// (nothing written).
async fn record_sent_pg(
    client: &impl GenericClient,
    sent: &[&Claimed],
    owner: &str,
    now: i64,
) -> Result<bool, StoreError> {
    if sent.is_empty() {
        return Ok(true);
    }
    let [a, k, ch] = columns(sent);
    let (n, r) = (attempts(sent), rounds(sent));
    let st = client.prepare_cached(PG_SENT).await?;
    match client
        .execute(&st, &[&a, &k, &ch, &now, &owner, &n, &r])
        .await
    {
        Ok(_) => Ok(true),
        Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// [`PG_SENT_DUP`] for `sent`: the ones stored (not duplicates).
async fn record_sent_dup_pg(
    client: &impl GenericClient,
    sent: &[&Claimed],
    owner: &str,
    now: i64,
) -> Result<HashSet<(String, String, String, i64)>, StoreError> {
    if sent.is_empty() {
        return Ok(HashSet::new());
    }
    let [a, k, ch] = columns(sent);
    let text = |dup: bool| -> Vec<String> {
        sent.iter()
            .map(|c| event(c, &Finish::Sent, owner, dup))
            .collect()
    };
    let (ok, dup, n, r) = (text(false), text(true), attempts(sent), rounds(sent));
    let st = client.prepare_cached(PG_SENT_DUP).await?;
    Ok(client
        .query(&st, &[&a, &k, &ch, &now, &owner, &ok, &dup, &n, &r])
        .await?
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
        .collect())
}

/// A failure, deferral or cancellation (never a success: see
/// [`finish_pg`]); its audit line is the caller's. `false` when a snooze's
/// return superseded the row ([`CANCEL_SUPERSEDED`]).
async fn record_pg(
    tx: &impl GenericClient,
    row: &Claimed,
    f: &Finish,
    owner: &str,
    now: i64,
) -> Result<bool, StoreError> {
    let (a, k, ch, r) = (&row.account, &row.key, &row.channel, &row.round);
    match f {
        Finish::Sent => {}
        Finish::Retry { at_ms, reason } | Finish::Defer { at_ms, reason } => {
            let attempt = i64::from(matches!(f, Finish::Retry { .. }));
            let sql = super::dollars(CANCEL_SUPERSEDED);
            let why = SUPERSEDED;
            let args: [&(dyn tokio_postgres::types::ToSql + Sync); 8] =
                [a, k, ch, r, &why, &now, &attempt, &owner];
            if tx.execute(&sql, &args).await? > 0 {
                return Ok(false);
            }
            tx.execute(
                "UPDATE remind_delivery SET attempts = attempts + $7, next_ms = $4, owner = NULL,
                 lease_ms = 0, reason = $5
                 WHERE account = $1 AND key = $2 AND channel = $3 AND round = $8 AND state = 'pending'
                   AND owner = $6",
                &[a, k, ch, at_ms, reason, &owner, &attempt, r],
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
                 WHERE account = $1 AND key = $2 AND channel = $3 AND round = $9 AND state = 'pending'
                   AND owner = $7",
                &[a, k, ch, &state, reason, &now, &owner, &i64::from(state == "abandoned"), r],
            )
            .await?;
        }
    }
    Ok(true)
}
