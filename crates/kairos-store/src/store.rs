//! The handle ([`Store`]), its transactions ([`Tx`], [`Reader`]), and one-call
//! shorthands for callers that do a single thing at a time.

use std::collections::BTreeMap;
use std::ops::Deref;

use chrono::{DateTime, TimeDelta, Utc};
use rusqlite::{Connection, Transaction, TransactionBehavior};

use crate::error::{At, Ctx, Result, StoreError};
use crate::types::{
    AuditRow, Calendar, CalendarId, Delivery, Instance, Lease, NewInstance, Outcome, Recorded,
    State, StoredEvent,
};

/// One connection to one database file. Blocking: keep it on a dedicated
/// thread (or in `spawn_blocking`), never on an async worker. `Send`, not
/// `Sync`; open one per thread that needs one, they coordinate through SQLite.
pub struct Store {
    conn: Connection,
    /// File name and busy timeout, for error messages.
    ctx: Ctx,
}

/// Read access inside a transaction (a consistent snapshot).
pub struct Reader<'c> {
    pub(crate) conn: &'c Connection,
    pub(crate) ctx: &'c Ctx,
}

/// A write transaction: everything done through it commits together or not at
/// all. It holds SQLite's write lock (`BEGIN IMMEDIATE`) from the start, so
/// what it reads cannot change under it. Reads are available through `Deref`.
pub struct Tx<'c> {
    r: Reader<'c>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.ctx.path)
            .finish()
    }
}

impl<'c> Deref for Tx<'c> {
    type Target = Reader<'c>;
    fn deref(&self) -> &Reader<'c> {
        &self.r
    }
}

impl Store {
    pub(crate) fn from_parts(conn: Connection, ctx: Ctx) -> Store {
        Store { conn, ctx }
    }

    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }

    pub(crate) fn ctx(&self) -> &Ctx {
        &self.ctx
    }

    /// The database file, as shown in error messages.
    pub fn path(&self) -> &str {
        &self.ctx.path
    }

    /// Runs `f` in a write transaction (`BEGIN IMMEDIATE`) and commits if it
    /// returns `Ok`; an `Err` (or a panic) rolls everything back. The closure
    /// may use its own error type as long as a [`StoreError`] converts into it.
    ///
    /// # Errors
    /// Busy if another connection holds the write lock past the busy timeout;
    /// whatever `f` returns; Full/ReadOnly/… from the commit.
    pub fn write<T, E>(&mut self, f: impl FnOnce(&Tx<'_>) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        let ctx = &self.ctx;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .at(ctx)?;
        let out = f(&Tx {
            r: Reader { conn: &tx, ctx },
        })?;
        // On failure, dropping the transaction inside `commit` rolls it back.
        tx.commit().at(ctx)?;
        Ok(out)
    }

    /// [`Self::write`], committed without waiting for the disk
    /// (`synchronous=NORMAL` for this one commit; WAL keeps it atomic and
    /// consistent, but a power cut may undo it). Only for changes whose loss
    /// is harmless — the engine's claim of due instances, which a restart
    /// simply claims again — never for recording a delivery.
    ///
    /// # Errors
    /// As [`Self::write`].
    pub fn write_unsynced<T, E>(&mut self, f: impl FnOnce(&Tx<'_>) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        // Cached statements: this runs twice per engine wake-up.
        self.conn
            .prepare_cached("PRAGMA synchronous = NORMAL")
            .and_then(|mut s| s.execute([]))
            .at(&self.ctx)?;
        let out = self.write(f);
        // Back to FULL whatever happened: every other commit must be durable.
        let restored = self
            .conn
            .prepare_cached("PRAGMA synchronous = FULL")
            .and_then(|mut s| s.execute([]))
            .map(|_| ())
            .at(&self.ctx);
        let out = out?;
        restored?;
        Ok(out)
    }

    /// Copies the write-ahead log back into the database file if no reader
    /// is in the way (`wal_checkpoint(PASSIVE)`). Cheap when there is little
    /// to copy; meant for idle moments, so commits on the hot path do not
    /// pay for it.
    ///
    /// # Errors
    /// I/O failures.
    pub fn checkpoint(&mut self) -> Result<()> {
        self.conn
            .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
            .at(&self.ctx)
    }

    /// Runs `f` against one consistent snapshot of the database.
    pub fn read<T, E>(&self, f: impl FnOnce(&Reader<'_>) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        // No transaction can be open here: `write` needs `&mut self`.
        let tx =
            Transaction::new_unchecked(&self.conn, TransactionBehavior::Deferred).at(&self.ctx)?;
        let out = f(&Reader {
            conn: &tx,
            ctx: &self.ctx,
        })?;
        tx.commit().at(&self.ctx)?;
        Ok(out)
    }

    /// Reads outside an explicit transaction: each call sees the latest commit.
    fn now_reader(&self) -> Reader<'_> {
        Reader {
            conn: &self.conn,
            ctx: &self.ctx,
        }
    }

    /// Runs SQLite's `quick_check` (a full pass over the file: call it at
    /// start-up or on demand, not per operation).
    ///
    /// # Errors
    /// [`crate::ErrorKind::Corrupt`] naming the first problem found.
    pub fn check(&self) -> Result<()> {
        let first: String = self
            .conn
            .query_row("PRAGMA quick_check(1)", [], |r| r.get(0))
            .at(&self.ctx)?;
        if first == "ok" {
            Ok(())
        } else {
            Err(self.ctx.corrupt(first))
        }
    }
}

/// One-transaction shorthands: each is `write(|tx| tx.same(…))` or a plain read.
/// Use [`Store::write`] to combine several in one transaction.
impl Store {
    /// See [`Tx::ensure_calendar`].
    pub fn ensure_calendar(&mut self, name: &str, now: DateTime<Utc>) -> Result<CalendarId> {
        self.write(|tx| tx.ensure_calendar(name, now))
    }
    /// See [`Reader::calendars`].
    pub fn calendars(&self) -> Result<Vec<Calendar>> {
        self.now_reader().calendars()
    }
    /// See [`Reader::work_settings`].
    pub fn work_settings(&self) -> Result<Vec<crate::WorkSettings>> {
        self.now_reader().work_settings()
    }
    /// See [`Tx::put_event`].
    pub fn put_event(
        &mut self,
        calendar: CalendarId,
        uid: &str,
        recurrence_id: &str,
        ics: &str,
        rule_version: u32,
        now: DateTime<Utc>,
    ) -> Result<bool> {
        self.write(|tx| tx.put_event(calendar, uid, recurrence_id, ics, rule_version, now))
    }
    /// See [`Tx::delete_event`].
    pub fn delete_event(
        &mut self,
        calendar: CalendarId,
        uid: &str,
        recurrence_id: Option<&str>,
    ) -> Result<usize> {
        self.write(|tx| tx.delete_event(calendar, uid, recurrence_id))
    }
    /// See [`Reader::get_event`].
    pub fn get_event(
        &self,
        calendar: CalendarId,
        uid: &str,
        recurrence_id: &str,
    ) -> Result<Option<StoredEvent>> {
        self.now_reader().get_event(calendar, uid, recurrence_id)
    }
    /// See [`Reader::events_of`].
    pub fn events_of(&self, calendar: CalendarId) -> Result<Vec<StoredEvent>> {
        self.now_reader().events_of(calendar)
    }
    /// See [`Reader::events_of_in_runs`].
    ///
    /// # Errors
    /// Store failures; the first error `f` returns.
    pub fn events_of_in_runs<E: From<StoreError>>(
        &self,
        calendar: CalendarId,
        size: usize,
        f: impl FnMut(&[StoredEvent]) -> Result<(), E>,
    ) -> Result<(), E> {
        self.now_reader().events_of_in_runs(calendar, size, f)
    }
    /// See [`Reader::all_events`].
    pub fn all_events(&self) -> Result<Vec<StoredEvent>> {
        self.now_reader().all_events()
    }
    /// See [`Tx::insert_instances`].
    pub fn insert_instances(&mut self, new: &[NewInstance], now: DateTime<Utc>) -> Result<usize> {
        self.write(|tx| tx.insert_instances(new, now))
    }
    /// See [`Tx::delete_pending_for_event`].
    pub fn delete_pending_for_event(
        &mut self,
        calendar: CalendarId,
        uid: &str,
        keep_rule_version: Option<u32>,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<usize> {
        self.write(|tx| tx.delete_pending_for_event(calendar, uid, keep_rule_version, reason, now))
    }
    /// See [`Reader::get`].
    pub fn get(&self, key: &str) -> Result<Option<Instance>> {
        self.now_reader().get(key)
    }
    /// See [`Reader::instances_of_event`].
    pub fn instances_of_event(&self, calendar: CalendarId, uid: &str) -> Result<Vec<Instance>> {
        self.now_reader().instances_of_event(calendar, uid)
    }
    /// See [`Reader::earliest_pending`].
    pub fn earliest_pending(&self) -> Result<Option<(String, DateTime<Utc>)>> {
        self.now_reader().earliest_pending()
    }
    /// See [`Reader::due`].
    pub fn due(&self, now: DateTime<Utc>, limit: usize) -> Result<Vec<Instance>> {
        self.now_reader().due(now, limit)
    }
    /// See [`Reader::in_state`].
    pub fn in_state(&self, state: State, limit: usize) -> Result<Vec<Instance>> {
        self.now_reader().in_state(state, limit)
    }
    /// See [`Reader::earliest_retry`].
    pub fn earliest_retry(&self) -> Result<Option<(String, DateTime<Utc>)>> {
        self.now_reader().earliest_retry()
    }
    /// See [`Reader::retries_due`].
    pub fn retries_due(&self, now: DateTime<Utc>, limit: usize) -> Result<Vec<Instance>> {
        self.now_reader().retries_due(now, limit)
    }
    /// See [`Tx::transition`].
    pub fn transition(
        &mut self,
        key: &str,
        from: &[State],
        to: State,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<bool> {
        self.write(|tx| tx.transition(key, from, to, reason, now))
    }
    /// See [`Tx::set_next_attempt`].
    pub fn set_next_attempt(&mut self, key: &str, at: Option<DateTime<Utc>>) -> Result<bool> {
        self.write(|tx| tx.set_next_attempt(key, at))
    }
    /// See [`Tx::record_delivery`].
    pub fn record_delivery(
        &mut self,
        key: &str,
        channel: &str,
        outcome: Outcome,
        error: Option<&str>,
        latency_ms: Option<i64>,
        now: DateTime<Utc>,
    ) -> Result<Recorded> {
        self.write(|tx| tx.record_delivery(key, channel, outcome, error, latency_ms, now))
    }
    /// See [`Reader::deliveries_of`].
    pub fn deliveries_of(&self, key: &str) -> Result<Vec<Delivery>> {
        self.now_reader().deliveries_of(key)
    }
    /// See [`Reader::audit_of`].
    pub fn audit_of(&self, key: &str) -> Result<Vec<AuditRow>> {
        self.now_reader().audit_of(key)
    }
    /// See [`Reader::audit_since`].
    pub fn audit_since(&self, since: DateTime<Utc>, limit: usize) -> Result<Vec<AuditRow>> {
        self.now_reader().audit_since(since, limit)
    }
    /// See [`Reader::counters`].
    pub fn counters(&self) -> Result<BTreeMap<State, u64>> {
        self.now_reader().counters()
    }
    /// See [`Reader::meta_get`].
    pub fn meta_get(&self, k: &str) -> Result<Option<String>> {
        self.now_reader().meta_get(k)
    }
    /// See [`Tx::meta_set`].
    pub fn meta_set(&mut self, k: &str, v: &str) -> Result<()> {
        self.write(|tx| tx.meta_set(k, v))
    }
    /// See [`Reader::lease`].
    pub fn lease(&self) -> Result<Option<Lease>> {
        self.now_reader().lease()
    }
    /// See [`Tx::try_acquire_lease`].
    pub fn try_acquire_lease(
        &mut self,
        owner: &str,
        now: DateTime<Utc>,
        ttl: TimeDelta,
    ) -> Result<Lease> {
        self.write(|tx| tx.try_acquire_lease(owner, now, ttl))
    }
    /// See [`Tx::renew_lease`].
    pub fn renew_lease(
        &mut self,
        owner: &str,
        now: DateTime<Utc>,
        ttl: TimeDelta,
    ) -> Result<Lease> {
        self.write(|tx| tx.renew_lease(owner, now, ttl))
    }
    /// See [`Tx::release_lease`].
    pub fn release_lease(&mut self, owner: &str) -> Result<bool> {
        self.write(|tx| tx.release_lease(owner))
    }
}
