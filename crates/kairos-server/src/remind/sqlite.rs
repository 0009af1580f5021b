//! The reminder tables in the embedded SQLite store: one connection of its
//! own (beside the sync writer's), used from tokio's blocking threads. On
//! SQLite one process is the only writer, so `BEGIN IMMEDIATE` is the claim.

use std::path::Path;
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::{Channel, Due, Fallback, Loaded, Row, Stored, Write, effective, from_ms, ms, rank};
use crate::store::StoreError;

/// Ops read per account and round (the next round reads on).
pub(crate) const OPS_PER_ROUND: i64 = 5_000;

pub(crate) struct Sqlite {
    pub(crate) conn: Arc<Mutex<Connection>>,
}

impl Sqlite {
    pub(crate) async fn open(data: &Path) -> Result<Self, StoreError> {
        let data = data.to_owned();
        let conn = tokio::task::spawn_blocking(move || crate::store::create_and_migrate(&data))
            .await
            .map_err(|_| StoreError::Closed)??;
        Ok(Self {
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    /// Runs `f` on the connection on a blocking thread.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let conn = Arc::clone(&self.conn);
        tokio::task::spawn_blocking(move || {
            let mut c = conn.lock().map_err(|_| StoreError::Closed)?;
            f(&mut c)
        })
        .await
        .map_err(|_| StoreError::Closed)?
    }

    pub(crate) async fn configure(&self, f: Fallback, now_ms: i64) -> Result<(), StoreError> {
        self.run(move |c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            tx.execute(
                "INSERT INTO remind_fallback (account, calendar, channel, target, secret, after_secs, always)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT (account, calendar, channel) DO UPDATE SET target = excluded.target,
                   secret = excluded.secret, after_secs = excluded.after_secs, always = excluded.always",
                params![
                    f.account,
                    f.calendar,
                    f.channel.name(),
                    f.target,
                    f.secret,
                    i64::try_from(f.after.as_secs()).unwrap_or(i64::MAX),
                    i64::from(f.always)
                ],
            )?;
            tx.execute(super::round::REPLAN, [&f.account])?;
            super::reconfigure::sqlite(&tx, &f, now_ms)?;
            tx.commit()?;
            Ok(())
        })
        .await
    }

    pub(crate) async fn set_zone(&self, account: &str, zone: &str) -> Result<(), StoreError> {
        let (account, zone) = (account.to_owned(), zone.to_owned());
        self.run(move |c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            tx.execute(
                "INSERT INTO remind_zone (account, zone) VALUES (?1, ?2)
                 ON CONFLICT (account) DO UPDATE SET zone = excluded.zone",
                params![account, zone],
            )?;
            tx.execute(super::round::REPLAN, [&account])?;
            tx.commit()?;
            Ok(())
        })
        .await
    }

    pub(crate) async fn due(&self, refresh_ms: i64) -> Result<Vec<Due>, StoreError> {
        self.run(move |c| {
            let mut st = c.prepare_cached(
                "SELECT a.id, a.head, coalesce(r.seq, 0), coalesce(r.planned_until_ms, 0)
                 FROM accounts a LEFT JOIN remind_cursor r ON r.account = a.id
                 WHERE a.id IN (SELECT account FROM remind_fallback)
                   AND (a.head > coalesce(r.seq, 0) OR coalesce(r.planned_until_ms, 0) < ?1)",
            )?;
            let rows = st.query_map([refresh_ms], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    u64::try_from(r.get::<_, i64>(1)?).unwrap_or(0),
                    u64::try_from(r.get::<_, i64>(2)?).unwrap_or(0),
                    r.get::<_, i64>(3)?,
                ))
            })?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
        .await
    }

    pub(crate) async fn load(&self, account: &str, after: u64) -> Result<Loaded, StoreError> {
        let account = account.to_owned();
        self.run(move |c| {
            let entities = c
                .prepare_cached("SELECT op_json FROM remind_entity WHERE account = ?1")?
                .query_map([&account], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            let ops = c
                .prepare_cached(
                    "SELECT seq, op_json FROM ops WHERE account = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
                )?
                .query_map(
                    params![account, i64::try_from(after).unwrap_or(i64::MAX), OPS_PER_ROUND],
                    |r| Ok((u64::try_from(r.get::<_, i64>(0)?).unwrap_or(0), r.get(1)?)),
                )?
                .collect::<Result<_, _>>()?;
            let zone = c
                .prepare_cached("SELECT zone FROM remind_zone WHERE account = ?1")?
                .query_row([&account], |r| r.get(0))
                .optional()?;
            Ok(Loaded {
                entities,
                ops,
                fallbacks: fallbacks(c, &account)?,
                zone,
            })
        })
        .await
    }

    pub(crate) async fn apply(&self, w: Write) -> Result<Option<Stored>, StoreError> {
        self.run(move |c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let out = apply(&tx, &w)?;
            if out.is_some() {
                tx.commit()?;
            }
            Ok(out)
        })
        .await
    }

    pub(crate) async fn depth(&self, now: i64) -> Result<(u64, u64), StoreError> {
        self.run(move |c| {
            let (due, all): (i64, i64) = c
                .prepare_cached(
                    // Rows never claimed, then rows with a lease: each set
                    // through its own partial index (migration 0006).
                    "SELECT f.due + l.due, f.n + l.n
                     FROM (SELECT coalesce(sum(next_ms <= ?1), 0) AS due, count(*) AS n
                           FROM remind_delivery WHERE state = 'pending' AND lease_ms = 0) f,
                          (SELECT coalesce(sum(next_ms <= ?1), 0) AS due, count(*) AS n
                           FROM remind_delivery WHERE state = 'pending' AND lease_ms > 0) l",
                )?
                .query_row([now], |r| Ok((r.get(0)?, r.get(1)?)))?;
            let due = u64::try_from(due).unwrap_or(0);
            Ok((due, u64::try_from(all).unwrap_or(0).saturating_sub(due)))
        })
        .await
    }

    /// See the PostgreSQL twin.
    pub(crate) async fn next_due(&self) -> Result<Option<i64>, StoreError> {
        self.run(|c| {
            let (fresh, leased): (Option<i64>, Option<i64>) = c
                .prepare_cached(
                    "SELECT (SELECT min(next_ms) FROM remind_delivery
                             WHERE state = 'pending' AND lease_ms = 0),
                            (SELECT min(max(lease_ms, next_ms)) FROM remind_delivery
                             WHERE state = 'pending' AND lease_ms > 0)",
                )?
                .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            Ok(fresh.into_iter().chain(leased).min())
        })
        .await
    }

    pub(crate) async fn instances(&self, account: &str) -> Result<Vec<Row>, StoreError> {
        let account = account.to_owned();
        self.run(move |c| {
            let rows = c
                .prepare_cached(
                    "SELECT key, due_ms, state FROM remind_instance WHERE account = ?1 ORDER BY due_ms, key",
                )?
                .query_map([&account], |r| {
                    Ok(Row {
                        key: r.get(0)?,
                        due: from_ms(r.get(1)?),
                        state: r.get(2)?,
                    })
                })?
                .collect::<Result<_, _>>()?;
            Ok(rows)
        })
        .await
    }
}

pub(super) fn fallbacks(c: &Connection, account: &str) -> Result<Vec<Fallback>, StoreError> {
    let mut st = c.prepare_cached(
        "SELECT calendar, channel, target, secret, after_secs, always FROM remind_fallback WHERE account = ?1",
    )?;
    let rows = st.query_map([account], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, Option<String>>(3)?,
            r.get::<_, i64>(4)?,
            r.get::<_, i64>(5)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (calendar, channel, target, secret, after, always) = row?;
        let Ok(channel) = Channel::parse(&channel) else {
            continue;
        };
        out.push(Fallback {
            account: account.to_owned(),
            calendar,
            channel,
            target,
            secret,
            after: std::time::Duration::from_secs(u64::try_from(after).unwrap_or(0)),
            always: always != 0,
        });
    }
    Ok(out)
}

pub(super) fn audit(
    c: &Connection,
    account: &str,
    key: &str,
    at: i64,
    event: &str,
) -> Result<(), StoreError> {
    c.prepare_cached(
        "INSERT INTO remind_audit (account, key, at_ms, event) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![account, key, at, event])?;
    Ok(())
}

/// One account's round in one transaction; `None` when another round
/// moved the cursor first (nothing is written).
fn apply(c: &Connection, w: &Write) -> Result<Option<Stored>, StoreError> {
    let a = &w.account;
    let now = w.now_ms;
    c.execute(
        "INSERT INTO remind_cursor (account, seq, planned_until_ms) VALUES (?1, 0, 0)
         ON CONFLICT (account) DO NOTHING",
        [a],
    )?;
    let moved = c.execute(
        "UPDATE remind_cursor SET seq = ?2, planned_until_ms = ?3
         WHERE account = ?1 AND seq = ?4 AND planned_until_ms = ?5",
        params![
            a,
            i64::try_from(w.to_seq).unwrap_or(i64::MAX),
            w.to_until_ms,
            i64::try_from(w.from_seq).unwrap_or(i64::MAX),
            w.from_until_ms
        ],
    )?;
    if moved == 0 {
        return Ok(None);
    }
    let mut out = Stored::default();
    for (entity, hlc, json) in &w.changes.entities {
        c.prepare_cached(
            "INSERT INTO remind_entity (account, entity, hlc, op_json) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (account, entity) DO UPDATE SET hlc = excluded.hlc, op_json = excluded.op_json",
        )?
        .execute(params![a, entity, hlc, json])?;
    }
    super::ack_store::sqlite_apply(c, w, &mut out)?;
    let planned: std::collections::BTreeSet<&str> =
        w.instances.iter().map(|i| i.key.as_str()).collect();
    let stale: Vec<String> = c
        .prepare_cached(
            "SELECT key FROM remind_instance WHERE account = ?1 AND state = 'pending'
             AND due_ms >= ?2 AND due_ms < ?3",
        )?
        .query_map(params![a, w.window.0, w.window.1], |r| {
            r.get::<_, String>(0)
        })?
        .filter(|k| k.as_ref().map_or(true, |k| !planned.contains(k.as_str())))
        .collect::<Result<_, _>>()?;
    for key in &stale {
        c.prepare_cached(
            "UPDATE remind_instance SET state = 'withdrawn' WHERE account = ?1 AND key = ?2",
        )?
        .execute(params![a, key])?;
        c.prepare_cached(
            "UPDATE remind_delivery SET state = 'cancelled', reason = 'withdrawn: the event changed or went away', done_ms = ?3
             WHERE account = ?1 AND key = ?2 AND state = 'pending'",
        )?
        .execute(params![a, key, now])?;
        audit(c, a, key, now, "withdrawn: the event changed or went away")?;
        out.withdrawn += 1;
    }
    for i in &w.instances {
        let ack = super::ack_store::sqlite_acked(c, a, &i.key)?;
        let state = if ack.as_ref().is_some_and(|r| r.dismissed) {
            "acked"
        } else {
            "pending"
        };
        let n = c
            .prepare_cached(
                "INSERT INTO remind_instance (account, key, calendar, due_ms, payload, state, priority)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT DO NOTHING",
            )?
            .execute(params![a, i.key, i.calendar, ms(i.due), i.payload, state, i.priority])?;
        if n > 0 {
            out.planned += 1;
            audit(
                c,
                a,
                &i.key,
                now,
                &format!("planned: due {}", i.due.to_rfc3339()),
            )?;
        }
        let current: String = c
            .prepare_cached("SELECT state FROM remind_instance WHERE account = ?1 AND key = ?2")?
            .query_row(params![a, i.key], |r| r.get(0))?;
        for f in effective(&w.fallbacks, &i.calendar) {
            if current == "withdrawn" || (current == "acked" && !f.always) {
                continue;
            }
            let due = super::snooze::due(ms(i.due), ack.as_ref(), f.after_ms(), f.always);
            out.deliveries += c
                .prepare_cached(
                    "INSERT INTO remind_delivery (account, key, channel, due_ms, next_ms, state, always, target, secret, rank, calendar)
                     VALUES (?1, ?2, ?3, ?4, ?4, 'pending', ?5, ?6, ?7, ?8, ?9) ON CONFLICT DO NOTHING",
                )?
                .execute(params![a, i.key, f.channel.name(), due, i64::from(f.always), f.target, f.secret, rank(i.priority), i.calendar])?;
        }
    }
    Ok(Some(out))
}
