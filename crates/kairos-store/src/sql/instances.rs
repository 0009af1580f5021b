//! `instances`: the reminder instances and their guarded state changes.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use rusqlite::types::ToSql;
use rusqlite::{OptionalExtension, Row, params, params_from_iter};

use super::{REMOVED, limit, ms, opt_time_at, state_at, time_at};
use crate::error::{At, Result};
use crate::store::{Reader, Tx};
use crate::types::{CalendarId, Instance, NewInstance, State};

const COLS: &str = "key, calendar_id, event_uid, occurrence, alarm, repetition, rule_version, \
                    trigger_at, state, attempts, next_attempt_at, snooze_of, payload, updated_at";

fn instance(row: &Row<'_>) -> rusqlite::Result<Instance> {
    Ok(Instance {
        key: row.get(0)?,
        calendar: CalendarId(row.get(1)?),
        event_uid: row.get(2)?,
        occurrence: row.get(3)?,
        alarm: row.get(4)?,
        repetition: row.get(5)?,
        rule_version: row.get(6)?,
        trigger_at: time_at(row, 7)?,
        state: state_at(row, 8)?,
        attempts: row.get(9)?,
        next_attempt_at: opt_time_at(row, 10)?,
        snooze_of: row.get(11)?,
        payload: row.get(12)?,
        updated_at: time_at(row, 13)?,
    })
}

fn key_and_time(row: &Row<'_>) -> rusqlite::Result<(String, DateTime<Utc>)> {
    Ok((row.get(0)?, time_at(row, 1)?))
}

impl Tx<'_> {
    /// Schedules instances (state `pending`); a key already stored, in any
    /// state, is left exactly as it is. Returns how many were new; each new
    /// one gets a "scheduled" audit row.
    ///
    /// Only a duplicate key is skipped (`ON CONFLICT (key) DO NOTHING`, not
    /// `INSERT OR IGNORE`, which would also silently drop a row whose payload
    /// is not JSON or whose calendar does not exist).
    pub fn insert_instances(&self, new: &[NewInstance], now: DateTime<Utc>) -> Result<usize> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "INSERT INTO instances (key, calendar_id, event_uid, occurrence, alarm, repetition,
                     rule_version, trigger_at, state, snooze_of, payload, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'pending', ?9, ?10, ?11)
                 ON CONFLICT (key) DO NOTHING",
            )
            .at(self.ctx)?;
        let mut added = 0;
        for i in new {
            let n = stmt
                .execute(params![
                    i.key,
                    i.calendar.0,
                    i.event_uid,
                    i.occurrence,
                    i.alarm,
                    i.repetition,
                    i.rule_version,
                    ms(i.trigger_at),
                    i.snooze_of,
                    i.payload,
                    ms(now),
                ])
                .at(self.ctx)?;
            if n > 0 {
                added += 1;
                let reason = match &i.snooze_of {
                    Some(of) => format!("snooze of {of} scheduled"),
                    None => format!("scheduled (rule version {})", i.rule_version),
                };
                self.audit(
                    now,
                    &i.key,
                    None,
                    State::Pending.as_str(),
                    &reason,
                    None,
                    None,
                )?;
            }
        }
        Ok(added)
    }

    /// Removes the *pending* instances of one event, all of them (`None`) or
    /// those computed from any `rule_version` other than the one to keep (the
    /// engine's versions are schedule fingerprints, not counters), and writes a
    /// "removed" audit row with `reason` for each. Instances in any other
    /// state stay, so one already delivered keeps its key and is never sent
    /// again when the recomputed instance (same key) is inserted.
    pub fn delete_pending_for_event(
        &self,
        calendar: CalendarId,
        uid: &str,
        keep_rule_version: Option<u32>,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<usize> {
        let keys: Vec<String> = self
            .conn
            .prepare_cached(
                "DELETE FROM instances
                 WHERE calendar_id = ?1 AND event_uid = ?2 AND state = 'pending'
                   AND (?3 IS NULL OR rule_version <> ?3)
                 RETURNING key",
            )
            .and_then(|mut s| {
                s.query_map(params![calendar.0, uid, keep_rule_version], |r| r.get(0))?
                    .collect()
            })
            .at(self.ctx)?;
        for key in &keys {
            self.audit(now, key, Some(State::Pending), REMOVED, reason, None, None)?;
        }
        Ok(keys.len())
    }

    /// Moves `key` to `to` if, and only if, it is now in one of `from`; the
    /// check and the change are one guarded `UPDATE … WHERE key = ? AND state
    /// IN (…)`, with an audit row in the same transaction. Returns `false`
    /// when the guard did not match (another engine got there first, or the
    /// key does not exist): this is how one instance cannot be fired twice.
    ///
    /// Entering [`State::Firing`] counts an attempt. Every transition clears
    /// `next_attempt_at`; set it after moving to `failed` with
    /// [`Tx::set_next_attempt`].
    pub fn transition(
        &self,
        key: &str,
        from: &[State],
        to: State,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<bool> {
        // The old state, for the audit row. With one `from` state, the
        // guarded UPDATE below says it; otherwise read it (inside BEGIN
        // IMMEDIATE nothing can change between this read and the UPDATE).
        let current = match from {
            [only] => *only,
            _ => match self.state_of(key)? {
                Some(s) if from.contains(&s) => s,
                _ => return Ok(false),
            },
        };
        let guard = (0..from.len())
            .map(|i| format!("?{}", i + 4))
            .collect::<Vec<_>>()
            .join(", ");
        let sql = format!(
            "UPDATE instances
             SET state = ?1, updated_at = ?2, next_attempt_at = NULL,
                 attempts = attempts + (?1 = 'firing')
             WHERE key = ?3 AND state IN ({guard})"
        );
        let now_ms = ms(now);
        let to_name = to.as_str();
        let names: Vec<&str> = from.iter().map(|s| s.as_str()).collect();
        let mut args: Vec<&dyn ToSql> = vec![&to_name, &now_ms, &key];
        args.extend(names.iter().map(|s| s as &dyn ToSql));
        let n = self
            .conn
            .prepare_cached(&sql)
            .and_then(|mut s| s.execute(params_from_iter(args)))
            .at(self.ctx)?;
        if n == 0 {
            return Ok(false);
        }
        self.audit(now, key, Some(current), to.as_str(), reason, None, None)?;
        Ok(true)
    }

    /// Sets (or clears) when a failed instance should be retried. Returns
    /// `false` if the key does not exist.
    pub fn set_next_attempt(&self, key: &str, at: Option<DateTime<Utc>>) -> Result<bool> {
        self.conn
            .prepare_cached("UPDATE instances SET next_attempt_at = ?2 WHERE key = ?1")
            .and_then(|mut s| s.execute(params![key, at.map(ms)]))
            .map(|n| n > 0)
            .at(self.ctx)
    }
}

impl Reader<'_> {
    /// The current state of `key`, if it exists.
    pub fn state_of(&self, key: &str) -> Result<Option<State>> {
        self.conn
            .prepare_cached("SELECT state FROM instances WHERE key = ?1")
            .and_then(|mut s| s.query_row([key], |r| state_at(r, 0)).optional())
            .at(self.ctx)
    }

    /// One instance by key.
    pub fn get(&self, key: &str) -> Result<Option<Instance>> {
        self.conn
            .prepare_cached(&format!("SELECT {COLS} FROM instances WHERE key = ?1"))
            .and_then(|mut s| s.query_row([key], instance).optional())
            .at(self.ctx)
    }

    /// A reminder's instances: the one keyed `base`, its snoozes
    /// (`base~snooze@…`) and its escalation repetitions (`base~again@k`),
    /// by key. Range scans of the key index.
    pub fn reminder_instances(&self, base: &str) -> Result<Vec<Instance>> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {COLS} FROM instances WHERE key = ?1
                 OR (key > ?1 || '~snooze@' AND key < ?1 || '~snooze@~')
                 OR (key > ?1 || '~again@' AND key < ?1 || '~again@~') ORDER BY key"
            ))
            .and_then(|mut s| s.query_map([base], instance)?.collect())
            .at(self.ctx)
    }

    /// Every instance of one event (any state), by trigger time then key.
    pub fn instances_of_event(&self, calendar: CalendarId, uid: &str) -> Result<Vec<Instance>> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {COLS} FROM instances WHERE calendar_id = ?1 AND event_uid = ?2
                 ORDER BY trigger_at, key"
            ))
            .and_then(|mut s| s.query_map(params![calendar.0, uid], instance)?.collect())
            .at(self.ctx)
    }

    /// The pending instance that fires first (ties broken by key): what the
    /// engine sleeps until. One index lookup.
    pub fn earliest_pending(&self) -> Result<Option<(String, DateTime<Utc>)>> {
        self.conn
            .prepare_cached(
                "SELECT key, trigger_at FROM instances WHERE state = 'pending'
                 ORDER BY trigger_at, key LIMIT 1",
            )
            .and_then(|mut s| s.query_row([], key_and_time).optional())
            .at(self.ctx)
    }

    /// Up to `limit` pending instances with `trigger_at <= now`, earliest
    /// first (then by key). An index range scan, in index order.
    pub fn due(&self, now: DateTime<Utc>, limit_to: usize) -> Result<Vec<Instance>> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {COLS} FROM instances WHERE state = 'pending' AND trigger_at <= ?1
                 ORDER BY trigger_at, key LIMIT ?2"
            ))
            .and_then(|mut s| {
                s.query_map(params![ms(now), limit(limit_to)], instance)?
                    .collect()
            })
            .at(self.ctx)
    }

    /// Up to `limit` instances in `state`, earliest trigger first (then by
    /// key): e.g. those left `firing` by a crash, to recover at start-up.
    pub fn in_state(&self, state: State, limit_to: usize) -> Result<Vec<Instance>> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {COLS} FROM instances WHERE state = ?1
                 ORDER BY trigger_at, key LIMIT ?2"
            ))
            .and_then(|mut s| {
                s.query_map(params![state.as_str(), limit(limit_to)], instance)?
                    .collect()
            })
            .at(self.ctx)
    }

    /// The failed instance whose retry comes first. (`INDEXED BY`: without
    /// statistics SQLite would rather walk the `state` index and sort.)
    pub fn earliest_retry(&self) -> Result<Option<(String, DateTime<Utc>)>> {
        self.conn
            .prepare_cached(
                "SELECT key, next_attempt_at FROM instances INDEXED BY instances_retry
                 WHERE state = 'failed' AND next_attempt_at IS NOT NULL
                 ORDER BY next_attempt_at, key LIMIT 1",
            )
            .and_then(|mut s| s.query_row([], key_and_time).optional())
            .at(self.ctx)
    }

    /// Up to `limit` failed instances whose `next_attempt_at <= now`, earliest first.
    pub fn retries_due(&self, now: DateTime<Utc>, limit_to: usize) -> Result<Vec<Instance>> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {COLS} FROM instances INDEXED BY instances_retry
                 WHERE state = 'failed' AND next_attempt_at <= ?1
                 ORDER BY next_attempt_at, key LIMIT ?2"
            ))
            .and_then(|mut s| {
                s.query_map(params![ms(now), limit(limit_to)], instance)?
                    .collect()
            })
            .at(self.ctx)
    }

    /// How many instances are in each state (every state present, 0 if none).
    pub fn counters(&self) -> Result<BTreeMap<State, u64>> {
        let mut counts: BTreeMap<State, u64> = State::ALL.iter().map(|&s| (s, 0)).collect();
        let rows: Vec<(State, i64)> = self
            .conn
            .prepare_cached("SELECT state, count(*) FROM instances GROUP BY state")
            .and_then(|mut s| {
                s.query_map([], |r| Ok((state_at(r, 0)?, r.get(1)?)))?
                    .collect()
            })
            .at(self.ctx)?;
        // count(*) is never negative.
        counts.extend(
            rows.into_iter()
                .map(|(s, n)| (s, u64::try_from(n).unwrap_or(0))),
        );
        Ok(counts)
    }
}
