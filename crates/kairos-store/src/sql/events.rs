//! `calendars` and `events`: what the user wrote, kept verbatim.

use chrono::{DateTime, Utc};
use rusqlite::ffi::{ErrorCode, SQLITE_CONSTRAINT_FOREIGNKEY};
use rusqlite::{OptionalExtension, Row, params};

use super::{ms, time_at};
use crate::error::{At, Result, StoreError};
use crate::store::{Reader, Tx};
use crate::types::{Calendar, CalendarId, Form, StoredEvent};

const EVENT_COLS: &str = "calendar_id, uid, recurrence_id, body, form, rule_version, updated_at";

fn event(row: &Row<'_>) -> rusqlite::Result<StoredEvent> {
    let form: String = row.get(4)?;
    Ok(StoredEvent {
        calendar: CalendarId(row.get(0)?),
        uid: row.get(1)?,
        recurrence_id: row.get(2)?,
        body: row.get(3)?,
        // The column's CHECK allows only these two.
        form: if form == "ics" {
            Form::Ics
        } else {
            Form::Typed
        },
        rule_version: row.get(5)?,
        updated_at: time_at(row, 6)?,
    })
}

fn calendar(row: &Row<'_>) -> rusqlite::Result<Calendar> {
    Ok(Calendar {
        id: CalendarId(row.get(0)?),
        name: row.get(1)?,
        color: row.get(2)?,
        created_at: time_at(row, 3)?,
        uid: row.get(4)?,
    })
}

const CALENDAR_COLS: &str = "id, name, color, created_at, uid";

impl Tx<'_> {
    /// The id of the calendar called `name`, creating it (at `now`, with a
    /// new random uid) if needed.
    pub fn ensure_calendar(&self, name: &str, now: DateTime<Utc>) -> Result<CalendarId> {
        self.conn
            .prepare_cached(
                "INSERT INTO calendars (uid, name, created_at)
                 VALUES (lower(hex(randomblob(16))), ?1, ?2)
                 ON CONFLICT (name) DO NOTHING",
            )
            .and_then(|mut s| s.execute(params![name, ms(now)]))
            .at(self.ctx)?;
        let id = self
            .conn
            .query_row("SELECT id FROM calendars WHERE name = ?1", [name], |r| {
                r.get(0)
            })
            .at(self.ctx)?;
        Ok(CalendarId(id))
    }

    /// Inserts or replaces one component (`recurrence_id` `""` for the
    /// master), its `body` in the engine's typed form ([`Form::Typed`]: the
    /// only form written). Returns whether anything changed: writing the
    /// same body and version again is a no-op (and keeps `updated_at`).
    ///
    /// # Errors
    /// [`crate::ErrorKind::NotFound`] if the calendar does not exist.
    pub fn put_event(
        &self,
        calendar: CalendarId,
        uid: &str,
        recurrence_id: &str,
        body: &str,
        rule_version: u32,
        now: DateTime<Utc>,
    ) -> Result<bool> {
        let res = self
            .conn
            .prepare_cached(
                "INSERT INTO events (calendar_id, uid, recurrence_id, body, form, rule_version,
                                     updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT (calendar_id, uid, recurrence_id) DO UPDATE
                 SET body = excluded.body, form = excluded.form,
                     rule_version = excluded.rule_version, updated_at = excluded.updated_at
                 WHERE body IS NOT excluded.body OR form IS NOT excluded.form
                    OR rule_version IS NOT excluded.rule_version",
            )
            .and_then(|mut s| {
                s.execute(params![
                    calendar.0,
                    uid,
                    recurrence_id,
                    body,
                    Form::Typed.as_sql(),
                    rule_version,
                    ms(now)
                ])
            });
        match res {
            Ok(n) => Ok(n > 0),
            Err(e)
                if e.sqlite_error().is_some_and(|f| {
                    f.code == ErrorCode::ConstraintViolation
                        && f.extended_code == SQLITE_CONSTRAINT_FOREIGNKEY
                }) =>
            {
                Err(self.ctx.not_found(format!("calendar {}", calendar.0)))
            }
            Err(e) => Err(self.ctx.err(e)),
        }
    }

    /// Replaces the body of one [`Form::Ics`] component with its typed form
    /// `body` (the engine's conversion of rows written before schema 9),
    /// keeping its `rule_version` and `updated_at`: nothing about the event
    /// changed, only how it is kept. Returns false when the row is gone or
    /// already typed (someone converted or rewrote it meanwhile).
    pub fn convert_event(
        &self,
        calendar: CalendarId,
        uid: &str,
        recurrence_id: &str,
        body: &str,
    ) -> Result<bool> {
        self.conn
            .prepare_cached(
                "UPDATE events SET body = ?4, form = 'typed'
                 WHERE calendar_id = ?1 AND uid = ?2 AND recurrence_id = ?3 AND form = 'ics'",
            )
            .and_then(|mut s| s.execute(params![calendar.0, uid, recurrence_id, body]))
            .map(|n| n > 0)
            .at(self.ctx)
    }

    /// Deletes one VEVENT (`Some(recurrence_id)`, `""` = master) or, with
    /// `None`, the whole series: master and overrides. Returns how many rows
    /// went. Instances are not touched: call
    /// [`Tx::delete_pending_for_event`] in the same transaction.
    pub fn delete_event(
        &self,
        calendar: CalendarId,
        uid: &str,
        recurrence_id: Option<&str>,
    ) -> Result<usize> {
        self.conn
            .prepare_cached(
                "DELETE FROM events WHERE calendar_id = ?1 AND uid = ?2
                 AND (?3 IS NULL OR recurrence_id = ?3)",
            )
            .and_then(|mut s| s.execute(params![calendar.0, uid, recurrence_id]))
            .at(self.ctx)
    }

    /// The calendar with identity `uid` (another device's), creating it if
    /// needed under `name`, or under `name (N)` when this device already has
    /// a different calendar called `name` (names are unique per device).
    /// An existing calendar keeps its name: see [`Tx::rename_calendar`].
    pub fn ensure_calendar_uid(
        &self,
        uid: &str,
        name: &str,
        now: DateTime<Utc>,
    ) -> Result<CalendarId> {
        if let Some(c) = self.calendar_by_uid(uid)? {
            return Ok(c.id);
        }
        let free = self.free_name(name, None)?;
        self.conn
            .prepare_cached("INSERT INTO calendars (uid, name, created_at) VALUES (?1, ?2, ?3)")
            .and_then(|mut s| s.execute(params![uid, free, ms(now)]))
            .at(self.ctx)?;
        Ok(CalendarId(self.conn.last_insert_rowid()))
    }

    /// Renames calendar `id` to `name`, or to `name (N)` when another
    /// calendar of this device has that name, and sets its colour.
    pub fn rename_calendar(&self, id: CalendarId, name: &str, color: Option<&str>) -> Result<()> {
        let free = self.free_name(name, Some(id))?;
        self.conn
            .prepare_cached(
                "UPDATE calendars SET name = ?2, color = coalesce(?3, color) WHERE id = ?1",
            )
            .and_then(|mut s| s.execute(params![id.0, free, color]))
            .at(self.ctx)?;
        Ok(())
    }

    /// `name`, or the first of `name (2)`, `name (3)`, … no calendar other
    /// than `except` has.
    fn free_name(&self, name: &str, except: Option<CalendarId>) -> Result<String> {
        let mut n = 1;
        loop {
            let candidate = if n == 1 {
                name.to_owned()
            } else {
                format!("{name} ({n})")
            };
            let taken: Option<i64> = self
                .conn
                .query_row(
                    "SELECT id FROM calendars WHERE name = ?1",
                    [&candidate],
                    |r| r.get(0),
                )
                .optional()
                .at(self.ctx)?;
            match taken {
                Some(id) if Some(CalendarId(id)) != except => n += 1,
                _ => return Ok(candidate),
            }
        }
    }
}

impl Reader<'_> {
    /// Every calendar, by name.
    pub fn calendars(&self) -> Result<Vec<Calendar>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {CALENDAR_COLS} FROM calendars ORDER BY name"
            ))
            .at(self.ctx)?;
        stmt.query_map([], calendar)
            .and_then(Iterator::collect)
            .at(self.ctx)
    }

    /// The calendar with identity `uid`, if this device has it.
    pub fn calendar_by_uid(&self, uid: &str) -> Result<Option<Calendar>> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {CALENDAR_COLS} FROM calendars WHERE uid = ?1"
            ))
            .and_then(|mut s| s.query_row([uid], calendar).optional())
            .at(self.ctx)
    }

    /// One VEVENT (`recurrence_id` `""` for the master).
    pub fn get_event(
        &self,
        calendar: CalendarId,
        uid: &str,
        recurrence_id: &str,
    ) -> Result<Option<StoredEvent>> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {EVENT_COLS} FROM events
                 WHERE calendar_id = ?1 AND uid = ?2 AND recurrence_id = ?3"
            ))
            .and_then(|mut s| {
                s.query_row(params![calendar.0, uid, recurrence_id], event)
                    .optional()
            })
            .at(self.ctx)
    }

    /// The VEVENTs of one calendar, by UID then master first.
    pub fn events_of(&self, calendar: CalendarId) -> Result<Vec<StoredEvent>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {EVENT_COLS} FROM events WHERE calendar_id = ?1
                 ORDER BY uid, recurrence_id"
            ))
            .at(self.ctx)?;
        stmt.query_map([calendar.0], event)
            .and_then(Iterator::collect)
            .at(self.ctx)
    }

    /// The rows [`Reader::events_of`] returns, in the same order, handed
    /// to `f` as they are read in runs of about `size` rows that never
    /// split one UID's components (a run is longer by the rest of the
    /// series it ends in). Only one run is held at a time, so a whole-
    /// calendar walk costs a run's memory, not the calendar's. One
    /// statement reads them all: one snapshot, as `events_of`.
    ///
    /// # Errors
    /// Store failures; the first error `f` returns (nothing is read after it).
    pub fn events_of_in_runs<E: From<StoreError>>(
        &self,
        calendar: CalendarId,
        size: usize,
        mut f: impl FnMut(&[StoredEvent]) -> Result<(), E>,
    ) -> Result<(), E> {
        let size = size.max(1);
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {EVENT_COLS} FROM events WHERE calendar_id = ?1
                 ORDER BY uid, recurrence_id"
            ))
            .at(self.ctx)?;
        let mut rows = stmt.query([calendar.0]).at(self.ctx)?;
        let mut run: Vec<StoredEvent> = Vec::with_capacity(size);
        while let Some(row) = rows.next().at(self.ctx)? {
            let ev = event(row).at(self.ctx)?;
            if run.len() >= size && run.last().is_some_and(|l| l.uid != ev.uid) {
                f(&run)?;
                run.clear();
            }
            run.push(ev);
        }
        if !run.is_empty() {
            f(&run)?;
        }
        Ok(())
    }

    /// The VEVENTs of series `uid` in one calendar, master first.
    pub fn series_events(&self, calendar: CalendarId, uid: &str) -> Result<Vec<StoredEvent>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {EVENT_COLS} FROM events WHERE calendar_id = ?1 AND uid = ?2
                 ORDER BY recurrence_id"
            ))
            .at(self.ctx)?;
        stmt.query_map(params![calendar.0, uid], event)
            .and_then(Iterator::collect)
            .at(self.ctx)
    }

    /// Whether series `uid` of `calendar` has any component stored (a
    /// reminder shown for a series deleted since is taken back).
    pub fn series_exists(&self, calendar: CalendarId, uid: &str) -> Result<bool> {
        self.conn
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM events WHERE calendar_id = ?1 AND uid = ?2)",
            )
            .and_then(|mut s| s.query_row(params![calendar.0, uid], |r| r.get(0)))
            .at(self.ctx)
    }

    /// The components still in [`Form::Ics`] (written before schema 9 and
    /// not converted), by calendar, UID, then master first.
    pub fn legacy_events(&self) -> Result<Vec<StoredEvent>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {EVENT_COLS} FROM events WHERE form = 'ics'
                 ORDER BY calendar_id, uid, recurrence_id"
            ))
            .at(self.ctx)?;
        stmt.query_map([], event)
            .and_then(Iterator::collect)
            .at(self.ctx)
    }

    /// Every VEVENT of every calendar.
    pub fn all_events(&self) -> Result<Vec<StoredEvent>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {EVENT_COLS} FROM events ORDER BY calendar_id, uid, recurrence_id"
            ))
            .at(self.ctx)?;
        stmt.query_map([], event)
            .and_then(Iterator::collect)
            .at(self.ctx)
    }
}
