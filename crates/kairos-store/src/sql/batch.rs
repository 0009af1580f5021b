//! The engine's hot path: guarded transitions of many instances in one
//! statement, and a successful delivery recorded together with the
//! transition it causes. Same guarantees as [`Tx::transition`] and
//! [`Tx::record_delivery`] (guarded updates, an audit row per state change in
//! the same transaction, at most one successful delivery per instance and
//! channel), fewer statements and B-tree writes per reminder.

use std::rc::Rc;

use chrono::{DateTime, Utc};
use rusqlite::params;
use rusqlite::types::Value;

use super::ms;
use crate::error::{At, Result};
use crate::store::Tx;
use crate::types::{Recorded, State};

/// A set of strings bound as one `rarray(?)` parameter.
fn array<'a>(items: impl IntoIterator<Item = &'a str>) -> Rc<Vec<Value>> {
    Rc::new(
        items
            .into_iter()
            .map(|s| Value::Text(s.to_owned()))
            .collect(),
    )
}

/// A successful delivery of one instance on one channel, and the settling
/// transition it causes ([`Tx::record_delivered`]).
#[derive(Debug, Clone, Copy)]
pub struct Delivered<'a> {
    /// The instance key.
    pub key: &'a str,
    /// The channel that showed it.
    pub channel: &'a str,
    /// From trigger to delivery, in milliseconds.
    pub latency_ms: i64,
    /// When it was delivered.
    pub at: DateTime<Utc>,
    /// The state it must be in (normally [`State::Firing`]).
    pub from: State,
    /// The state it moves to (normally [`State::Delivered`]).
    pub to: State,
    /// Why, for the audit row of the transition (e.g. "delivered on_time").
    pub reason: &'a str,
}

impl Tx<'_> {
    /// [`Tx::transition`] for many keys at once: each key in one of `from`
    /// moves to `to`, with one audit row each (`reason`, the old state), all
    /// in two set-based statements. Returns the keys that moved; a key whose
    /// guard did not match (another engine got there first, or it does not
    /// exist) is left alone and not returned.
    ///
    /// The audit rows are written first, from exactly the rows the guarded
    /// `UPDATE` then changes: both statements have the same `WHERE`, and
    /// inside `BEGIN IMMEDIATE` nothing else can change a row in between.
    /// (`OR FAIL`: see [`Tx::record_delivered`]; an error rolls back the
    /// whole transaction.)
    pub fn transition_many(
        &self,
        keys: &[&str],
        from: &[State],
        to: State,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<Vec<String>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let keys = array(keys.iter().copied());
        let from = array(from.iter().map(|s| s.as_str()));
        let now_ms = ms(now);
        self.conn
            .prepare_cached(
                "INSERT OR FAIL INTO audit (at, key, from_state, to_state, reason)
                 SELECT ?1, key, state, ?2, ?3 FROM instances
                 WHERE key IN rarray(?4) AND state IN rarray(?5)",
            )
            .and_then(|mut s| s.execute(params![now_ms, to.as_str(), reason, keys, from]))
            .at(self.ctx)?;
        self.conn
            .prepare_cached(
                "UPDATE OR FAIL instances
                 SET state = ?1, updated_at = ?2, next_attempt_at = NULL,
                     attempts = attempts + (?1 = 'firing')
                 WHERE key IN rarray(?3) AND state IN rarray(?4)
                 RETURNING key",
            )
            .and_then(|mut s| {
                s.query_map(params![to.as_str(), now_ms, keys, from], |r| r.get(0))?
                    .collect()
            })
            .at(self.ctx)
    }

    /// Records successful deliveries ([`Tx::record_delivery`] with
    /// [`crate::Outcome::Delivered`]) and settles each instance (`from →
    /// to`, guarded), with one audit row for both: the transition, naming
    /// the channel and the latency. (The attempt itself is the `deliveries`
    /// row, which `kairos why` lists.) Returns what happened to each, in
    /// order.
    ///
    /// Set-based: the items go into a temporary table and three statements
    /// do the rest, so SQLite's per-statement work is
    /// paid once per batch, not per reminder. If any item would not simply
    /// be inserted — the unique index would refuse a second successful
    /// delivery, or the instance does not exist — every item goes through
    /// [`Tx::record_delivery`] and
    /// [`Tx::transition`] one by one, with their exact semantics (the
    /// refusal audited, [`Recorded::AlreadyDelivered`]; `NotFound`).
    ///
    /// # Errors
    /// [`crate::ErrorKind::NotFound`] if an instance does not exist.
    pub fn record_delivered(&self, items: &[Delivered<'_>]) -> Result<Vec<Recorded>> {
        if items.is_empty() {
            return Ok(Vec::new());
        }
        self.conn
            .prepare_cached("DELETE FROM temp.kairos_settle")
            .and_then(|mut s| s.execute([]))
            .at(self.ctx)?;
        let mut put = self
            .conn
            .prepare_cached(
                "INSERT INTO temp.kairos_settle
                     (key, channel, latency_ms, at, from_state, to_state, reason)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )
            .at(self.ctx)?;
        for d in items {
            put.execute(params![
                d.key,
                d.channel,
                d.latency_ms,
                ms(d.at),
                d.from.as_str(),
                d.to.as_str(),
                d.reason
            ])
            .at(self.ctx)?;
        }
        // Would every item simply be inserted? (It exists, and has no
        // successful delivery on that channel yet.) Under BEGIN IMMEDIATE
        // the answer cannot change before the INSERT below.
        let clean: i64 = self
            .conn
            .prepare_cached(
                "SELECT count(*) FROM temp.kairos_settle s, instances i
                 WHERE i.key = s.key AND NOT EXISTS (
                     SELECT 1 FROM deliveries d
                     WHERE d.instance_id = i.id AND d.channel = s.channel
                       AND d.outcome = 'delivered')",
            )
            .and_then(|mut s| s.query_row([], |r| r.get(0)))
            .at(self.ctx)?;
        if usize::try_from(clean).ok() != Some(items.len()) {
            return items.iter().map(|d| self.record_one(d)).collect();
        }
        self.settle_set(items.len())?;
        Ok(vec![Recorded::Recorded; items.len()])
    }

    /// The set-based path over `temp.kairos_settle` (`n` rows, each known to
    /// be insertable). `OR FAIL`: a failing row stops the statement without
    /// undoing the rows before it, so SQLite needs no statement journal (a
    /// copy of every page touched); the error then rolls back the whole
    /// transaction, as any error in [`crate::Store::write`] does.
    fn settle_set(&self, n: usize) -> Result<()> {
        // `WHERE` (not `JOIN … ON`) keeps the upsert clause unambiguous. The
        // unique index still has the last word: a conflict is not inserted.
        let inserted = self
            .conn
            .prepare_cached(
                "INSERT OR FAIL INTO deliveries (instance_id, channel, outcome, latency_ms, at)
                 SELECT i.id, s.channel, 'delivered', s.latency_ms, s.at
                 FROM temp.kairos_settle s, instances i WHERE i.key = s.key ORDER BY s.rowid
                 ON CONFLICT DO NOTHING",
            )
            .and_then(|mut s| s.execute([]))
            .at(self.ctx)?;
        if inserted != n {
            // Checked just above inside the same write transaction: unreachable
            // unless the database changed under the lock. Refuse to go on.
            return Err(self.ctx.corrupt(format!(
                "{inserted} of {n} deliveries recorded where all {n} were insertable"
            )));
        }
        // Audit first, from exactly the rows the guarded UPDATE then changes.
        self.conn
            .prepare_cached(
                "INSERT OR FAIL INTO audit
                     (at, key, from_state, to_state, reason, channel, latency_ms)
                 SELECT s.at, s.key, s.from_state, s.to_state, s.reason, s.channel, s.latency_ms
                 FROM temp.kairos_settle s, instances i
                 WHERE i.key = s.key AND i.state = s.from_state ORDER BY s.rowid",
            )
            .and_then(|mut s| s.execute([]))
            .at(self.ctx)?;
        self.conn
            .prepare_cached(
                "UPDATE OR FAIL instances
                 SET state = s.to_state, updated_at = s.at, next_attempt_at = NULL
                 FROM temp.kairos_settle s
                 WHERE instances.key = s.key AND instances.state = s.from_state",
            )
            .and_then(|mut s| s.execute([]))
            .at(self.ctx)?;
        Ok(())
    }

    /// One item with the general calls (the exact old semantics).
    fn record_one(&self, d: &Delivered<'_>) -> Result<Recorded> {
        let rec = self.record_delivery(
            d.key,
            d.channel,
            crate::Outcome::Delivered,
            None,
            Some(d.latency_ms),
            d.at,
        )?;
        self.transition(d.key, &[d.from], d.to, d.reason, d.at)?;
        Ok(rec)
    }
}
