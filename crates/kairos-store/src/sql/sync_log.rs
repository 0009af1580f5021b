//! `outbox`, `registers` and `acks` (schema 0005): what a paired device
//! owes the server, and the merge state of what it synced. The values are
//! opaque text here (ops and ack records are kairos-proto's JSON, stamps
//! its HLC text); the engine decides, the store keeps.

use chrono::{DateTime, Utc};
use rusqlite::{OptionalExtension, params};

use super::{SYNC_NOTE, limit, ms};
use crate::error::{At, Result};
use crate::store::{Reader, Tx};

/// One op waiting in the outbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxRow {
    /// Position (ascending = the order the changes were made).
    pub seq: i64,
    /// The op's id.
    pub op_id: String,
    /// The op, as JSON.
    pub op: String,
}

/// A last-writer-wins register: the stamp of the version held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Register {
    /// HLC stamp text.
    pub hlc: String,
    /// A tombstone.
    pub deleted: bool,
    /// The stamp of the version this one was made on top of.
    pub base: Option<String>,
}

impl Tx<'_> {
    /// Appends an op (idempotent by `op_id`).
    pub fn outbox_push(&self, op_id: &str, op: &str, now: DateTime<Utc>) -> Result<()> {
        self.conn
            .prepare_cached(
                "INSERT INTO outbox (op_id, op, created_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT (op_id) DO NOTHING",
            )
            .and_then(|mut s| s.execute(params![op_id, op, ms(now)]))
            .at(self.ctx)?;
        Ok(())
    }

    /// Removes ops the server confirmed; returns how many went.
    pub fn outbox_remove(&self, op_ids: &[String]) -> Result<usize> {
        let mut stmt = self
            .conn
            .prepare_cached("DELETE FROM outbox WHERE op_id = ?1")
            .at(self.ctx)?;
        let mut n = 0;
        for id in op_ids {
            n += stmt.execute([id]).at(self.ctx)?;
        }
        Ok(n)
    }

    /// Empties the outbox (leaving an account).
    pub fn outbox_clear(&self) -> Result<usize> {
        self.conn.execute("DELETE FROM outbox", []).at(self.ctx)
    }

    /// Sets `entity`'s register: stamp `hlc`, made on top of `base`.
    pub fn register_set(
        &self,
        entity: &str,
        hlc: &str,
        deleted: bool,
        base: Option<&str>,
    ) -> Result<()> {
        self.conn
            .prepare_cached(
                "INSERT INTO registers (entity, hlc, deleted, base) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (entity) DO UPDATE
                 SET hlc = excluded.hlc, deleted = excluded.deleted, base = excluded.base",
            )
            .and_then(|mut s| s.execute(params![entity, hlc, deleted, base]))
            .at(self.ctx)?;
        Ok(())
    }

    /// Sets the acknowledgement record of reminder `key`.
    pub fn ack_set(&self, key: &str, state: &str) -> Result<()> {
        self.conn
            .prepare_cached(
                "INSERT INTO acks (key, state) VALUES (?1, ?2)
                 ON CONFLICT (key) DO UPDATE SET state = excluded.state",
            )
            .and_then(|mut s| s.execute(params![key, state]))
            .at(self.ctx)?;
        Ok(())
    }

    /// Writes a sync note to the audit log under `key` (e.g. an entity):
    /// `kairos log` shows it with the other history.
    pub fn sync_note(&self, key: &str, reason: &str, now: DateTime<Utc>) -> Result<()> {
        self.audit(now, key, None, SYNC_NOTE, reason, None, None)
    }

    /// Forgets every register and ack record (leaving an account).
    pub fn sync_state_clear(&self) -> Result<()> {
        self.conn
            .execute_batch("DELETE FROM registers; DELETE FROM acks;")
            .at(self.ctx)
    }
}

impl Reader<'_> {
    /// The oldest `n` ops of the outbox.
    pub fn outbox_peek(&self, n: usize) -> Result<Vec<OutboxRow>> {
        self.outbox_after(0, n)
    }

    /// The oldest `n` ops of the outbox after position `seq` (past ops a
    /// client holds back for a server that does not take them yet).
    pub fn outbox_after(&self, seq: i64, n: usize) -> Result<Vec<OutboxRow>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT seq, op_id, op FROM outbox WHERE seq > ?1 ORDER BY seq LIMIT ?2",
            )
            .at(self.ctx)?;
        stmt.query_map(params![seq, limit(n)], |r| {
            Ok(OutboxRow {
                seq: r.get(0)?,
                op_id: r.get(1)?,
                op: r.get(2)?,
            })
        })
        .and_then(Iterator::collect)
        .at(self.ctx)
    }

    /// How many ops wait.
    pub fn outbox_len(&self) -> Result<u64> {
        let n: i64 = self
            .conn
            .query_row("SELECT count(*) FROM outbox", [], |r| r.get(0))
            .at(self.ctx)?;
        Ok(n.unsigned_abs())
    }

    /// `entity`'s register, if it has one.
    pub fn register(&self, entity: &str) -> Result<Option<Register>> {
        self.conn
            .prepare_cached("SELECT hlc, deleted, base FROM registers WHERE entity = ?1")
            .and_then(|mut s| {
                s.query_row([entity], |r| {
                    Ok(Register {
                        hlc: r.get(0)?,
                        deleted: r.get(1)?,
                        base: r.get(2)?,
                    })
                })
                .optional()
            })
            .at(self.ctx)
    }

    /// Whether any acknowledgement record exists (most databases that never
    /// synced have none, and skip every lookup).
    pub fn any_acks(&self) -> Result<bool> {
        self.conn
            .query_row("SELECT EXISTS (SELECT 1 FROM acks)", [], |r| r.get(0))
            .at(self.ctx)
    }

    /// Reminder `key`'s acknowledgement record, if any.
    pub fn ack(&self, key: &str) -> Result<Option<String>> {
        self.conn
            .prepare_cached("SELECT state FROM acks WHERE key = ?1")
            .and_then(|mut s| s.query_row([key], |r| r.get(0)).optional())
            .at(self.ctx)
    }
}
