//! The acknowledgement rows (`remind_ack`) on both stores, and what a
//! round's acknowledgements do to the queue (rules in `snooze`): a
//! dismissal marks the instance acknowledged and cancels its pending
//! fallbacks, a snooze moves them to N after the snooze's end. A snooze
//! that comes after a channel's fallback went out (the person read the
//! e-mail, snoozed on the laptop, shut it) queues that channel's fallback
//! again for the return, as a new round (migrations 0010 / postgres 0015).
//! "Always" fallbacks are left alone by all of these.
//! A snooze that comes while the fallback's attempt is in flight leaves
//! that row to its attempt and queues the return beside it: sent, the
//! return follows; failed, the return supersedes it (not retried).

use deadpool_postgres::GenericClient;
use rusqlite::{Connection, OptionalExtension, params};

use super::snooze::{self, Acked, Effect};
use super::{Stored, Write, dollars, effective, from_ms};
use crate::store::StoreError;

const DISMISSED: &str = "acknowledged by a device";

fn snoozed(until_ms: i64) -> String {
    format!(
        "snoozed on a device until {}",
        from_ms(until_ms).to_rfc3339()
    )
}

fn moved(channel: &str, due_ms: i64) -> String {
    format!(
        "{channel} fallback waits for the snooze: due {}",
        from_ms(due_ms).to_rfc3339()
    )
}

fn returned(channel: &str, due_ms: i64) -> String {
    format!(
        "{channel} fallback sent before the snooze: queued again for its return, due {}",
        from_ms(due_ms).to_rfc3339()
    )
}

/// Moves a channel's pending fallback of a snoozed instance to N after the
/// snooze's end: account, key, channel, due, now. Not a row in flight (its
/// lease runs past `now`): that attempt finishes it, and the snooze queues
/// a return beside it ([`QUEUE_RETURN`]).
const MOVE: &str = "UPDATE remind_delivery SET due_ms = ?4, next_ms = ?4
     WHERE account = ?1 AND key = ?2 AND channel = ?3 AND state = 'pending' AND always = 0
       AND lease_ms <= ?5";

/// Queues a snooze's return on a channel whose fallback already went out,
/// was given up, or is in flight: a new delivery, `round` the snooze's
/// end, when no other row of the instance and channel waits. Parameters:
/// account, key, channel, due, target, secret, rank, calendar, round, now.
/// Nothing when the channel never had a delivery (the planner queues the
/// first), or this return is queued or sent already (the primary key; on
/// PostgreSQL a sent row is deleted, so `remind_sent` says it). An attempt
/// in flight that then fails is not retried: the return supersedes it
/// (`finish.rs`).
const QUEUE_RETURN: &str = "INSERT INTO remind_delivery
       (account, key, channel, due_ms, next_ms, state, always, target, secret, rank, calendar, round)
     SELECT ?1, ?2, ?3, ?4, ?4, 'pending', 0, ?5, ?6, ?7, ?8, ?9
     WHERE NOT EXISTS (SELECT 1 FROM remind_delivery
                       WHERE account = ?1 AND key = ?2 AND channel = ?3 AND state = 'pending'
                         AND lease_ms <= ?10)
       AND (EXISTS (SELECT 1 FROM remind_delivery
                    WHERE account = ?1 AND key = ?2 AND channel = ?3
                      AND (state IN ('delivered', 'abandoned')
                           OR (state = 'pending' AND lease_ms > ?10)))
            OR EXISTS (SELECT 1 FROM remind_sent WHERE account = ?1 AND key = ?2 AND channel = ?3))
       AND NOT EXISTS (SELECT 1 FROM remind_sent
                       WHERE account = ?1 AND key = ?2 AND channel = ?3 AND round = ?9)
     ON CONFLICT DO NOTHING";

/// [`QUEUE_RETURN`] with PostgreSQL's placeholders and types.
fn queue_return_pg() -> String {
    dollars(&QUEUE_RETURN.replace(
        "SELECT ?1, ?2, ?3, ?4, ?4, 'pending', 0, ?5, ?6, ?7, ?8, ?9",
        "SELECT $1::text, $2::text, $3::text, $4::int8, $4::int8, 'pending', 0, $5::text, $6::text, \
         $7::int8, $8::text, $9::int8",
    ))
}

fn row(dismissed: bool, hlc: Option<String>, until: Option<i64>) -> Acked {
    Acked {
        dismissed,
        snooze: hlc.zip(until),
    }
}

/// The stored acknowledgements of `key` (SQLite).
pub(crate) fn sqlite_acked(
    c: &Connection,
    account: &str,
    key: &str,
) -> Result<Option<Acked>, StoreError> {
    Ok(c
        .prepare_cached(
            "SELECT dismissed, snooze_hlc, snooze_until_ms FROM remind_ack WHERE account = ?1 AND key = ?2",
        )?
        .query_row(params![account, key], |r| {
            Ok(row(r.get::<_, i64>(0)? != 0, r.get(1)?, r.get(2)?))
        })
        .optional()?)
}

/// Applies the round's acknowledgements (SQLite), in op order.
pub(crate) fn sqlite_apply(c: &Connection, w: &Write, out: &mut Stored) -> Result<(), StoreError> {
    let (a, now) = (&w.account, w.now_ms);
    for op in &w.changes.acks {
        let Some(key) = snooze::key(op) else {
            continue;
        };
        let stored = sqlite_acked(c, a, key)?;
        let (new, effect) = snooze::merge(stored.as_ref(), op);
        if stored.as_ref() != Some(&new) {
            let (hlc, until) = new.snooze.clone().unzip();
            c.prepare_cached(
                "INSERT INTO remind_ack (account, key, at_ms, dismissed, snooze_hlc, snooze_until_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (account, key) DO UPDATE SET dismissed = excluded.dismissed,
                   snooze_hlc = excluded.snooze_hlc, snooze_until_ms = excluded.snooze_until_ms",
            )?
            .execute(params![a, key, now, new.dismissed, hlc, until])?;
        }
        match effect {
            Effect::Dismissed => {
                let n = c
                    .prepare_cached(
                        "UPDATE remind_instance SET state = 'acked' WHERE account = ?1 AND key = ?2 AND state = 'pending'",
                    )?
                    .execute(params![a, key])?;
                if n > 0 {
                    out.acked += n;
                    super::sqlite::audit(c, a, key, now, DISMISSED)?;
                    let channels = c
                        .prepare_cached(
                            "UPDATE remind_delivery SET state = 'cancelled', reason = ?4, done_ms = ?3
                             WHERE account = ?1 AND key = ?2 AND state = 'pending' AND always = 0
                             RETURNING channel",
                        )?
                        .query_map(params![a, key, now, DISMISSED], |r| r.get::<_, String>(0))?
                        .collect::<Result<Vec<_>, _>>()?;
                    out.cancelled_by_ack.extend(channels);
                }
            }
            Effect::Snoozed(until) => {
                let instance: Option<(String, Option<i64>)> = c
                    .prepare_cached(
                        "SELECT calendar, priority FROM remind_instance
                         WHERE account = ?1 AND key = ?2 AND state = 'pending'",
                    )?
                    .query_row(params![a, key], |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()?;
                let Some((calendar, priority)) = instance else {
                    continue; // not planned yet: planning reads the row
                };
                out.snoozed += 1;
                super::sqlite::audit(c, a, key, now, &snoozed(until))?;
                for f in effective(&w.fallbacks, &calendar)
                    .into_iter()
                    .filter(|f| !f.always)
                {
                    let due = until.saturating_add(f.after_ms());
                    let n = c.prepare_cached(MOVE)?.execute(params![
                        a,
                        key,
                        f.channel.name(),
                        due,
                        now
                    ])?;
                    if n > 0 {
                        super::sqlite::audit(c, a, key, now, &moved(f.channel.name(), due))?;
                    } else if c.prepare_cached(QUEUE_RETURN)?.execute(params![
                        a,
                        key,
                        f.channel.name(),
                        due,
                        f.target,
                        f.secret,
                        priority.unwrap_or(10),
                        calendar,
                        until,
                        now
                    ])? > 0
                    {
                        super::sqlite::audit(c, a, key, now, &returned(f.channel.name(), due))?;
                    }
                }
            }
            Effect::Nothing => {}
        }
    }
    Ok(())
}

/// The stored acknowledgements of `key` (PostgreSQL).
async fn pg_acked(
    c: &impl GenericClient,
    account: &str,
    key: &str,
) -> Result<Option<Acked>, StoreError> {
    Ok(c
        .query_opt(
            "SELECT dismissed, snooze_hlc, snooze_until_ms FROM remind_ack WHERE account = $1 AND key = $2",
            &[&account, &key],
        )
        .await?
        .map(|r| row(r.get(0), r.get(1), r.get(2))))
}

/// The stored acknowledgements of `keys` (PostgreSQL), by key.
pub(crate) async fn pg_acked_all(
    c: &impl GenericClient,
    account: &str,
    keys: &[&str],
) -> Result<std::collections::HashMap<String, Acked>, StoreError> {
    Ok(c.query(
        "SELECT key, dismissed, snooze_hlc, snooze_until_ms FROM remind_ack
             WHERE account = $1 AND key = ANY($2)",
        &[&account, &keys],
    )
    .await?
    .iter()
    .map(|r| (r.get(0), row(r.get(1), r.get(2), r.get(3))))
    .collect())
}

/// Applies the round's acknowledgements (PostgreSQL), in op order.
pub(crate) async fn pg_apply(
    c: &impl GenericClient,
    w: &Write,
    out: &mut Stored,
) -> Result<(), StoreError> {
    let (a, now) = (&w.account, w.now_ms);
    for op in &w.changes.acks {
        let Some(key) = snooze::key(op) else {
            continue;
        };
        let stored = pg_acked(c, a, key).await?;
        let (new, effect) = snooze::merge(stored.as_ref(), op);
        if stored.as_ref() != Some(&new) {
            let (hlc, until) = new.snooze.clone().unzip();
            c.execute(
                "INSERT INTO remind_ack (account, key, at_ms, dismissed, snooze_hlc, snooze_until_ms)
                 VALUES ($1, $2, $3, $4, $5, $6)
                 ON CONFLICT (account, key) DO UPDATE SET dismissed = excluded.dismissed,
                   snooze_hlc = excluded.snooze_hlc, snooze_until_ms = excluded.snooze_until_ms",
                &[a, &key, &now, &new.dismissed, &hlc, &until],
            )
            .await?;
        }
        match effect {
            Effect::Dismissed => {
                let n = c
                    .execute(
                        "UPDATE remind_instance SET state = 'acked' WHERE account = $1 AND key = $2 AND state = 'pending'",
                        &[a, &key],
                    )
                    .await?;
                if n > 0 {
                    out.acked += usize::try_from(n).unwrap_or(0);
                    super::pg::audit(c, a, key, now, DISMISSED).await?;
                    let cancelled = c
                        .query(
                            "UPDATE remind_delivery SET state = 'cancelled', reason = $4, done_ms = $3
                             WHERE account = $1 AND key = $2 AND state = 'pending' AND always = 0
                             RETURNING channel",
                            &[a, &key, &now, &DISMISSED],
                        )
                        .await?;
                    out.cancelled_by_ack
                        .extend(cancelled.iter().map(|r| r.get::<_, String>(0)));
                }
            }
            Effect::Snoozed(until) => {
                let Some((calendar, priority)) = c
                    .query_opt(
                        "SELECT calendar, priority FROM remind_instance
                         WHERE account = $1 AND key = $2 AND state = 'pending'",
                        &[a, &key],
                    )
                    .await?
                    .map(|r| (r.get::<_, String>(0), r.get::<_, Option<i64>>(1)))
                else {
                    continue; // not planned yet: planning reads the row
                };
                out.snoozed += 1;
                super::pg::audit(c, a, key, now, &snoozed(until)).await?;
                for f in effective(&w.fallbacks, &calendar)
                    .into_iter()
                    .filter(|f| !f.always)
                {
                    let due = until.saturating_add(f.after_ms());
                    let n = c
                        .execute(&dollars(MOVE), &[a, &key, &f.channel.name(), &due, &now])
                        .await?;
                    if n > 0 {
                        super::pg::audit(c, a, key, now, &moved(f.channel.name(), due)).await?;
                        continue;
                    }
                    let queued = c
                        .execute(
                            &queue_return_pg(),
                            &[
                                a,
                                &key,
                                &f.channel.name(),
                                &due,
                                &f.target,
                                &f.secret,
                                &priority.unwrap_or(10),
                                &calendar,
                                &until,
                                &now,
                            ],
                        )
                        .await?;
                    if queued > 0 {
                        super::pg::audit(c, a, key, now, &returned(f.channel.name(), due)).await?;
                    }
                }
            }
            Effect::Nothing => {}
        }
    }
    Ok(())
}
