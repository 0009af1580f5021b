//! Recording what became of claimed deliveries (`claim.rs`), on both
//! stores: the finishes ready together are committed in one transaction;
//! a success is an insert into `remind_sent`, whose primary key admits one
//! per instance and channel (a second is a duplicate, never stored).

use std::collections::HashSet;

use deadpool_postgres::GenericClient;
use rusqlite::{Connection, params};

use super::claim::{Claimed, Finish};
use crate::store::StoreError;

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

/// PostgreSQL: [`finish_sqlite`], set-based. A group's successes (nearly
/// every row in a burst) are recorded by two statements over arrays
/// (`unnest`): the insert into `remind_sent`, whose `RETURNING` says which
/// were not duplicates, and the update to `delivered`; the other outcomes
/// (failures, deferrals, cancellations: few) one statement each; then the
/// whole group's audit lines in one insert. A few round trips per group
/// instead of three per delivery.
pub(crate) async fn finish_pg(
    c: &mut deadpool_postgres::Object,
    group: &[(Claimed, Finish)],
    owner: &str,
    now: i64,
) -> Result<Vec<bool>, StoreError> {
    let tx = c.transaction().await?;
    let mut dups = vec![false; group.len()];
    let sent: Vec<usize> = (0..group.len())
        .filter(|&i| group[i].1 == Finish::Sent)
        .collect();
    if !sent.is_empty() {
        let col = |f: fn(&Claimed) -> &str| -> Vec<&str> {
            sent.iter().map(|&i| f(&group[i].0)).collect()
        };
        let (a, k, ch) = (col(|c| &c.account), col(|c| &c.key), col(|c| &c.channel));
        let stored: HashSet<(String, String, String)> = tx
            .query(
                "INSERT INTO remind_sent (account, key, channel, at_ms, owner)
                 SELECT a, k, ch, $4, $5 FROM unnest($1::text[], $2::text[], $3::text[]) AS t(a, k, ch)
                 ON CONFLICT DO NOTHING RETURNING account, key, channel",
                &[&a, &k, &ch, &now, &owner],
            )
            .await?
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect();
        for &i in &sent {
            let c = &group[i].0;
            dups[i] = !stored.contains(&(c.account.clone(), c.key.clone(), c.channel.clone()));
        }
        tx.execute(
            "UPDATE remind_delivery d SET state = 'delivered', done_ms = $4, reason = NULL,
             attempts = d.attempts + 1
             FROM unnest($1::text[], $2::text[], $3::text[]) AS t(a, k, ch)
             WHERE d.account = t.a AND d.key = t.k AND d.channel = t.ch AND d.state = 'pending'",
            &[&a, &k, &ch, &now],
        )
        .await?;
    }
    for (row, f) in group.iter().filter(|(_, f)| *f != Finish::Sent) {
        record_pg(&tx, row, f, owner, now).await?;
    }
    let events: Vec<String> = group
        .iter()
        .zip(&dups)
        .map(|((row, f), &dup)| event(row, f, owner, dup))
        .collect();
    let a: Vec<&str> = group.iter().map(|(c, _)| c.account.as_str()).collect();
    let k: Vec<&str> = group.iter().map(|(c, _)| c.key.as_str()).collect();
    tx.execute(
        "INSERT INTO remind_audit (account, key, at_ms, event)
         SELECT a, k, $3, e FROM unnest($1::text[], $2::text[], $4::text[]) AS t(a, k, e)",
        &[&a, &k, &now, &events],
    )
    .await?;
    tx.commit().await?;
    Ok(dups)
}

/// A failure, deferral or cancellation (never a success: see
/// [`finish_pg`]); its audit line is the caller's.
async fn record_pg(
    tx: &impl GenericClient,
    row: &Claimed,
    f: &Finish,
    owner: &str,
    now: i64,
) -> Result<(), StoreError> {
    let (a, k, ch) = (&row.account, &row.key, &row.channel);
    match f {
        Finish::Sent => {}
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
    Ok(())
}
