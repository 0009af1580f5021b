//! `deliveries` and `audit`: what was attempted, what came of it, and why.

use chrono::{DateTime, Utc};
use rusqlite::types::Type;
use rusqlite::{OptionalExtension, Row, params};

use super::{limit, ms, opt_state_at, state_at, time_at};
use crate::error::{At, Result};
use crate::store::{Reader, Tx};
use crate::types::{AuditRow, Delivery, Outcome, Recorded, State};

const AUDIT_COLS: &str = "id, at, key, from_state, to_state, reason, channel, latency_ms";

fn audit_row(row: &Row<'_>) -> rusqlite::Result<AuditRow> {
    Ok(AuditRow {
        id: row.get(0)?,
        at: time_at(row, 1)?,
        key: row.get(2)?,
        from: opt_state_at(row, 3)?,
        to: opt_state_at(row, 4)?,
        reason: row.get(5)?,
        channel: row.get(6)?,
        latency_ms: row.get(7)?,
        sync_note: row.get::<_, String>(4)? == super::SYNC_NOTE,
    })
}

fn delivery(row: &Row<'_>) -> rusqlite::Result<Delivery> {
    let outcome: String = row.get(1)?;
    Ok(Delivery {
        channel: row.get(0)?,
        outcome: Outcome::parse(&outcome).ok_or_else(|| {
            rusqlite::Error::FromSqlConversionFailure(
                1,
                Type::Text,
                format!("unknown outcome {outcome:?}").into(),
            )
        })?,
        error: row.get(2)?,
        latency_ms: row.get(3)?,
        at: time_at(row, 4)?,
    })
}

impl Tx<'_> {
    /// Appends one audit row. `to` is a state name or "removed".
    #[allow(clippy::too_many_arguments)] // one per column; private
    pub(crate) fn audit(
        &self,
        at: DateTime<Utc>,
        key: &str,
        from: Option<State>,
        to: &str,
        reason: &str,
        channel: Option<&str>,
        latency_ms: Option<i64>,
    ) -> Result<()> {
        self.conn
            .prepare_cached(
                "INSERT INTO audit (at, key, from_state, to_state, reason, channel, latency_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )
            .and_then(|mut s| {
                s.execute(params![
                    ms(at),
                    key,
                    from.map(State::as_str),
                    to,
                    reason,
                    channel,
                    latency_ms
                ])
            })
            .at(self.ctx)?;
        Ok(())
    }

    /// Records one delivery attempt of instance `key` on `channel`, with an
    /// audit row (`from == to` = the instance's current state; the state is
    /// not changed: use [`Tx::transition`] for that).
    ///
    /// A second [`Outcome::Delivered`] for the same instance and channel is
    /// refused by the database's unique index and returns
    /// [`Recorded::AlreadyDelivered`] (audited as a refused duplicate, so the
    /// duplicate rate can be measured). Failures can be recorded any number
    /// of times.
    ///
    /// # Errors
    /// [`crate::ErrorKind::NotFound`] if there is no instance `key`.
    pub fn record_delivery(
        &self,
        key: &str,
        channel: &str,
        outcome: Outcome,
        error: Option<&str>,
        latency_ms: Option<i64>,
        now: DateTime<Utc>,
    ) -> Result<Recorded> {
        let (id, state): (i64, State) = self
            .conn
            .prepare_cached("SELECT id, state FROM instances WHERE key = ?1")
            .and_then(|mut s| {
                s.query_row([key], |r| Ok((r.get(0)?, state_at(r, 1)?)))
                    .optional()
            })
            .at(self.ctx)?
            .ok_or_else(|| self.ctx.not_found(format!("reminder instance {key:?}")))?;
        // DO NOTHING without a target covers exactly the uniqueness
        // constraints, i.e. the partial index `deliveries_once`; a CHECK or
        // foreign-key failure is still an error.
        let n = self
            .conn
            .prepare_cached(
                "INSERT INTO deliveries (instance_id, channel, outcome, error, latency_ms, at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT DO NOTHING",
            )
            .and_then(|mut s| {
                s.execute(params![
                    id,
                    channel,
                    outcome.as_str(),
                    error,
                    latency_ms,
                    ms(now)
                ])
            })
            .at(self.ctx)?;
        let (recorded, reason) = if n == 0 {
            (
                Recorded::AlreadyDelivered,
                format!("duplicate delivery via {channel} refused: already delivered there"),
            )
        } else if outcome == Outcome::Delivered {
            (Recorded::Recorded, format!("delivered via {channel}"))
        } else {
            let why = error.unwrap_or("no error text");
            (
                Recorded::Recorded,
                format!(
                    "delivery via {channel} failed ({}): {why}",
                    outcome.as_str()
                ),
            )
        };
        let s = state.as_str();
        self.audit(now, key, Some(state), s, &reason, Some(channel), latency_ms)?;
        Ok(recorded)
    }
}

impl Reader<'_> {
    /// Every delivery attempt of instance `key`, oldest first.
    pub fn deliveries_of(&self, key: &str) -> Result<Vec<Delivery>> {
        self.conn
            .prepare_cached(
                "SELECT d.channel, d.outcome, d.error, d.latency_ms, d.at
                 FROM deliveries d JOIN instances i ON i.id = d.instance_id
                 WHERE i.key = ?1 ORDER BY d.at, d.id",
            )
            .and_then(|mut s| s.query_map([key], delivery)?.collect())
            .at(self.ctx)
    }

    /// The whole history of `key`, in the order it was written.
    pub fn audit_of(&self, key: &str) -> Result<Vec<AuditRow>> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {AUDIT_COLS} FROM audit WHERE key = ?1 ORDER BY id"
            ))
            .and_then(|mut s| s.query_map([key], audit_row)?.collect())
            .at(self.ctx)
    }

    /// Up to `limit` audit rows with `at >= since`, oldest first.
    pub fn audit_since(&self, since: DateTime<Utc>, limit_to: usize) -> Result<Vec<AuditRow>> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {AUDIT_COLS} FROM audit WHERE at >= ?1 ORDER BY at, id LIMIT ?2"
            ))
            .and_then(|mut s| {
                s.query_map(params![ms(since), limit(limit_to)], audit_row)?
                    .collect()
            })
            .at(self.ctx)
    }
}
