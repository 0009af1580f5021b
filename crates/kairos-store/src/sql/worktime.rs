//! Working time per calendar (schema 0006): the working week and whether a
//! calendar is a holiday feed; and moving a pending instance whose trigger a
//! working-day rule moved (same key, so it is still one reminder).

use chrono::{DateTime, Utc};
use rusqlite::params;

use super::{REMOVED, ms};
use crate::error::{At, Result};
use crate::store::{Reader, Tx};
use crate::types::{CalendarId, State, WorkSettings};

impl Reader<'_> {
    /// Every calendar's working time, by name.
    pub fn work_settings(&self) -> Result<Vec<WorkSettings>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id, uid, name, work_week, is_holidays FROM calendars ORDER BY name",
            )
            .at(self.ctx)?;
        stmt.query_map([], |r| {
            Ok(WorkSettings {
                id: CalendarId(r.get(0)?),
                uid: r.get(1)?,
                name: r.get(2)?,
                week: r.get(3)?,
                holidays: r.get(4)?,
            })
        })
        .and_then(Iterator::collect)
        .at(self.ctx)
    }
}

impl Tx<'_> {
    /// Sets a calendar's working week (1–127, Monday = bit 0) and holiday
    /// flag. Returns false when no such calendar exists.
    ///
    /// # Errors
    /// A constraint error for a week outside 1–127.
    pub fn set_work_settings(&self, id: CalendarId, week: u8, holidays: bool) -> Result<bool> {
        let n = self
            .conn
            .prepare_cached("UPDATE calendars SET work_week = ?2, is_holidays = ?3 WHERE id = ?1")
            .and_then(|mut s| s.execute(params![id.0, week, holidays]))
            .at(self.ctx)?;
        Ok(n > 0)
    }

    /// Moves the *pending* instance `key` to `trigger_at` (an audit row
    /// says why). Returns false when it is not pending or already there.
    pub fn move_pending(
        &self,
        key: &str,
        trigger_at: DateTime<Utc>,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<bool> {
        let n = self
            .conn
            .prepare_cached(
                "UPDATE instances SET trigger_at = ?2, updated_at = ?3
                 WHERE key = ?1 AND state = 'pending' AND trigger_at <> ?2",
            )
            .and_then(|mut s| s.execute(params![key, ms(trigger_at), ms(now)]))
            .at(self.ctx)?;
        if n > 0 {
            let pending = State::Pending;
            let reason = format!("{reason}: now due {}", trigger_at.to_rfc3339());
            self.audit(
                now,
                key,
                Some(pending),
                pending.as_str(),
                &reason,
                None,
                None,
            )?;
        }
        Ok(n > 0)
    }

    /// Removes the *pending* instance `key` (an audit row says why).
    /// Returns false when it is not pending.
    pub fn delete_pending(&self, key: &str, reason: &str, now: DateTime<Utc>) -> Result<bool> {
        let n = self
            .conn
            .prepare_cached("DELETE FROM instances WHERE key = ?1 AND state = 'pending'")
            .and_then(|mut s| s.execute([key]))
            .at(self.ctx)?;
        if n > 0 {
            self.audit(now, key, Some(State::Pending), REMOVED, reason, None, None)?;
        }
        Ok(n > 0)
    }
}
