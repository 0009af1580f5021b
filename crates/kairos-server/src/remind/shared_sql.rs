//! The statements of `shared.rs` on both stores. PostgreSQL: the start of
//! a batch is two statements sent together on one connection (pipelined:
//! one round trip), each atomic on its own; the bucket's refill is
//! computed by the `INSERT … ON CONFLICT DO UPDATE` from the row, so
//! instances taking tokens at once each see the other's take. SQLite: one
//! `BEGIN IMMEDIATE` transaction (one writer), the refill by `rate::refill`.

use std::collections::HashSet;

use deadpool_postgres::{GenericClient, Object};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::gate::{Breaker, PROBE_STALE_MS, merge};
use super::rate;
use super::shared::{Changes, Ctx, RESERVATION_TTL_MS, Taken};
use crate::store::StoreError;

/// Takes out the reservations of the batch's deliveries, then the tokens
/// of the others from their accounts' buckets: rows (account, delivery,
/// 0) for a reservation, (account, NULL, tokens before) for a bucket.
const PG_TOKENS: &str = "WITH batch AS (
    SELECT * FROM unnest($1::text[], $2::text[]) AS t(account, delivery)
), old AS (
    DELETE FROM remind_reserved r WHERE r.account = ANY($1) AND r.at_ms < $3::int8 - $6::int8
      AND NOT EXISTS (SELECT 1 FROM batch b WHERE b.account = r.account AND b.delivery = r.delivery)
), res AS (
    DELETE FROM remind_reserved r USING batch b
    WHERE r.account = b.account AND r.delivery = b.delivery
    RETURNING r.account, r.delivery
), need AS (
    SELECT b.account, count(*)::float8 AS n FROM batch b
    WHERE NOT EXISTS (SELECT 1 FROM res WHERE res.account = b.account AND res.delivery = b.delivery)
    GROUP BY b.account
), took AS (
    INSERT INTO remind_bucket AS k (account, tokens, at_ms)
    SELECT account, $4::float8 - n, $3::int8 FROM need
    ON CONFLICT (account) DO UPDATE SET
        tokens = least($4::float8, k.tokens + greatest(0, $3::int8 - k.at_ms) * $5::float8)
            - ($4::float8 - excluded.tokens),
        at_ms = greatest(k.at_ms, $3::int8)
    RETURNING k.account, k.tokens
)
SELECT account, delivery, 0::float8 FROM res
UNION ALL
SELECT t.account, NULL, t.tokens + n.n FROM took t JOIN need n USING (account)";

/// Takes the probe of each half-open destination no live instance holds,
/// and reads the rows (as they were before: `took` says which are ours).
const PG_BREAKERS: &str = "WITH took AS (
    UPDATE remind_breaker SET probe_owner = $2::text, probe_until_ms = $3::int8 + $4::int8
    WHERE destination = ANY($1::text[]) AND open_until_ms > 0 AND open_until_ms <= $3::int8
      AND (probe_owner IS NULL OR probe_until_ms <= $3::int8)
    RETURNING destination
)
SELECT b.destination, b.failures, b.open_until_ms, b.probe_owner, b.probe_until_ms,
       EXISTS (SELECT 1 FROM took t WHERE t.destination = b.destination)
FROM remind_breaker b WHERE b.destination = ANY($1::text[])";

fn count(n: i64) -> u32 {
    u32::try_from(n.max(0)).unwrap_or(u32::MAX)
}

pub(crate) async fn take_pg(
    c: &Object,
    cands: &[(String, String)],
    dests: &[String],
    ctx: &Ctx,
) -> Result<Taken, StoreError> {
    let (accounts, deliveries): (Vec<&str>, Vec<&str>) =
        cands.iter().map(|(a, d)| (a.as_str(), d.as_str())).unzip();
    let cap = f64::from(ctx.limits.per_minute);
    let per_ms = rate::per_ms(ctx.limits.per_minute);
    // Both sent before either answer is awaited: one round trip.
    let tokens = async {
        if cands.is_empty() {
            return Ok(Vec::new());
        }
        c.query(
            PG_TOKENS,
            &[
                &accounts,
                &deliveries,
                &ctx.now,
                &cap,
                &per_ms,
                &RESERVATION_TTL_MS,
            ],
        )
        .await
    };
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 4] =
        [&dests, &ctx.owner, &ctx.now, &PROBE_STALE_MS];
    let breakers = c.query(PG_BREAKERS, &params);
    let (tokens, breakers) = tokio::try_join!(tokens, breakers)?;
    let mut out = Taken::default();
    for r in &tokens {
        if let Some(d) = r.get::<_, Option<String>>(1) {
            out.reserved.insert((r.get(0), d));
        }
    }
    for r in &tokens {
        if r.get::<_, Option<String>>(1).is_none() {
            let account: String = r.get(0);
            let n = cands
                .iter()
                .filter(|c| c.0 == account && !out.reserved.contains(*c))
                .count();
            out.buckets.push((account, r.get(2), n));
        }
    }
    out.breakers = breakers
        .iter()
        .map(|r| (r.get(0), breaker_pg(r), r.get(5)))
        .collect();
    Ok(out)
}

/// A breaker from a row whose columns 1–4 are `failures, open_until_ms,
/// probe_owner, probe_until_ms` (column 0 its destination).
fn breaker_pg(r: &tokio_postgres::Row) -> Breaker {
    Breaker {
        failures: count(r.get(1)),
        open_until: r.get(2),
        probe_owner: r.get(3),
        probe_until: r.get(4),
    }
}

pub(crate) async fn reserve_pg(
    c: &Object,
    rows: &[(String, String, i64)],
) -> Result<(), StoreError> {
    let a: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    let d: Vec<&str> = rows.iter().map(|r| r.1.as_str()).collect();
    let t: Vec<i64> = rows.iter().map(|r| r.2).collect();
    c.execute(
        "INSERT INTO remind_reserved (account, delivery, at_ms)
         SELECT * FROM unnest($1::text[], $2::text[], $3::int8[])
         ON CONFLICT (account, delivery) DO UPDATE SET at_ms = excluded.at_ms",
        &[&a, &d, &t],
    )
    .await?;
    Ok(())
}

pub(crate) async fn write_pg(c: &mut Object, w: &Changes, ctx: &Ctx) -> Result<(), StoreError> {
    let tx = c.transaction().await?;
    let dests: Vec<&str> = w.tallies.iter().map(|(d, _)| d.as_str()).collect();
    let rows = tx
        .query(
            "SELECT destination, failures, open_until_ms, probe_owner, probe_until_ms
             FROM remind_breaker WHERE destination = ANY($1) FOR UPDATE",
            &[&dests],
        )
        .await?;
    let stored: std::collections::HashMap<String, Breaker> =
        rows.iter().map(|r| (r.get(0), breaker_pg(r))).collect();
    for (dest, t) in &w.tallies {
        let now = stored.get(dest).cloned().unwrap_or_default();
        let b = merge(&now, t, &ctx.limits, &ctx.owner, ctx.now);
        if b == Breaker::default() {
            tx.execute("DELETE FROM remind_breaker WHERE destination = $1", &[dest])
                .await?;
        } else {
            tx.execute(
                "INSERT INTO remind_breaker (destination, failures, open_until_ms, probe_owner, probe_until_ms)
                 VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (destination) DO UPDATE SET failures = excluded.failures,
                   open_until_ms = excluded.open_until_ms, probe_owner = excluded.probe_owner,
                   probe_until_ms = excluded.probe_until_ms",
                &[dest, &i64::from(b.failures), &b.open_until, &b.probe_owner, &b.probe_until],
            )
            .await?;
        }
    }
    for (account, n) in &w.refunds {
        tx.execute(
            "UPDATE remind_bucket SET tokens = tokens + $2 WHERE account = $1",
            &[account, &f64::from(*n)],
        )
        .await?;
    }
    tx.commit().await?;
    Ok(())
}

fn breaker_sqlite(c: &Connection, dest: &str) -> rusqlite::Result<Option<Breaker>> {
    c.query_row(
        "SELECT failures, open_until_ms, probe_owner, probe_until_ms FROM remind_breaker WHERE destination = ?1",
        [dest],
        |r| {
            Ok(Breaker {
                failures: count(r.get(0)?),
                open_until: r.get(1)?,
                probe_owner: r.get(2)?,
                probe_until: r.get(3)?,
            })
        },
    )
    .optional()
}

pub(crate) fn take_sqlite(
    c: &mut Connection,
    cands: &[(String, String)],
    dests: &[String],
    ctx: &Ctx,
) -> Result<Taken, StoreError> {
    let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut out = Taken::default();
    for (account, delivery) in cands {
        let n = tx.execute(
            "DELETE FROM remind_reserved WHERE account = ?1 AND delivery = ?2",
            params![account, delivery],
        )?;
        if n > 0 {
            out.reserved.insert((account.clone(), delivery.clone()));
        }
    }
    let accounts: Vec<&String> = {
        let mut seen = HashSet::new();
        cands
            .iter()
            .map(|c| &c.0)
            .filter(|a| seen.insert(*a))
            .collect()
    };
    let per_minute = ctx.limits.per_minute;
    for account in accounts {
        tx.execute(
            "DELETE FROM remind_reserved WHERE account = ?1 AND at_ms < ?2",
            params![account, ctx.now - RESERVATION_TTL_MS],
        )?;
        let n = cands
            .iter()
            .filter(|c| &c.0 == account && !out.reserved.contains(*c))
            .count();
        if n == 0 {
            continue;
        }
        let before = tx
            .query_row(
                "SELECT tokens, at_ms FROM remind_bucket WHERE account = ?1",
                [account],
                |r| Ok((r.get::<_, f64>(0)?, r.get::<_, i64>(1)?)),
            )
            .optional()?
            .map_or(f64::from(per_minute), |(t, at)| {
                rate::refill(t, at, ctx.now, per_minute)
            });
        #[allow(clippy::cast_precision_loss)] // a batch's size
        let after = before - n as f64;
        tx.execute(
            "INSERT INTO remind_bucket (account, tokens, at_ms) VALUES (?1, ?2, ?3)
             ON CONFLICT (account) DO UPDATE SET tokens = excluded.tokens, at_ms = max(at_ms, excluded.at_ms)",
            params![account, after, ctx.now],
        )?;
        out.buckets.push((account.clone(), before, n));
    }
    for dest in dests {
        let Some(b) = breaker_sqlite(&tx, dest)? else {
            continue;
        };
        let ours = b.open_until > 0
            && b.open_until <= ctx.now
            && (b.probe_owner.is_none() || b.probe_until <= ctx.now);
        if ours {
            tx.execute(
                "UPDATE remind_breaker SET probe_owner = ?2, probe_until_ms = ?3 WHERE destination = ?1",
                params![dest, ctx.owner, ctx.now + PROBE_STALE_MS],
            )?;
        }
        out.breakers.push((dest.clone(), b, ours));
    }
    tx.commit()?;
    Ok(out)
}

pub(crate) fn reserve_sqlite(
    c: &mut Connection,
    rows: &[(String, String, i64)],
) -> Result<(), StoreError> {
    let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
    for (a, d, t) in rows {
        tx.execute(
            "INSERT INTO remind_reserved (account, delivery, at_ms) VALUES (?1, ?2, ?3)
             ON CONFLICT (account, delivery) DO UPDATE SET at_ms = excluded.at_ms",
            params![a, d, t],
        )?;
    }
    tx.commit()?;
    Ok(())
}

pub(crate) fn write_sqlite(c: &mut Connection, w: &Changes, ctx: &Ctx) -> Result<(), StoreError> {
    let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
    for (dest, t) in &w.tallies {
        let now = breaker_sqlite(&tx, dest)?.unwrap_or_default();
        let b = merge(&now, t, &ctx.limits, &ctx.owner, ctx.now);
        if b == Breaker::default() {
            tx.execute("DELETE FROM remind_breaker WHERE destination = ?1", [dest])?;
        } else {
            tx.execute(
                "INSERT INTO remind_breaker (destination, failures, open_until_ms, probe_owner, probe_until_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (destination) DO UPDATE SET failures = excluded.failures,
                   open_until_ms = excluded.open_until_ms, probe_owner = excluded.probe_owner,
                   probe_until_ms = excluded.probe_until_ms",
                params![dest, b.failures, b.open_until, b.probe_owner, b.probe_until],
            )?;
        }
    }
    for (account, n) in &w.refunds {
        tx.execute(
            "UPDATE remind_bucket SET tokens = tokens + ?2 WHERE account = ?1",
            params![account, f64::from(*n)],
        )?;
    }
    tx.commit()?;
    Ok(())
}
