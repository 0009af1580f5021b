//! The desktop app's per-calendar settings (schema 0002): colour,
//! visibility, default reminders; renaming and deleting calendars.

use rusqlite::{OptionalExtension, params};

use crate::error::{At, Result};
use crate::store::{Reader, Tx};
use crate::types::{CalendarId, CalendarSettings};

fn settings(row: &rusqlite::Row<'_>) -> rusqlite::Result<CalendarSettings> {
    Ok(CalendarSettings {
        id: CalendarId(row.get(0)?),
        name: row.get(1)?,
        color: row.get(2)?,
        visible: row.get(3)?,
        default_alarms: row.get(4)?,
        series: row.get(5)?,
    })
}

const SELECT: &str = "SELECT c.id, c.name, c.color, c.visible, c.default_alarms,
        (SELECT count(*) FROM events e WHERE e.calendar_id = c.id AND e.recurrence_id = '')
     FROM calendars c";

impl Tx<'_> {
    /// Changes a calendar's name, colour, visibility and default reminders
    /// (`default_alarms` must be a JSON array). Returns false when no such
    /// calendar exists.
    ///
    /// # Errors
    /// [`crate::ErrorKind::Constraint`]-class errors when the name is taken
    /// or the JSON is invalid.
    pub fn update_calendar(&self, c: &CalendarSettings) -> Result<bool> {
        let n = self
            .conn
            .prepare_cached(
                "UPDATE calendars SET name = ?2, color = ?3, visible = ?4, default_alarms = ?5
                 WHERE id = ?1",
            )
            .and_then(|mut s| {
                s.execute(params![
                    c.id.0,
                    c.name,
                    c.color,
                    c.visible,
                    c.default_alarms
                ])
            })
            .at(self.ctx)?;
        Ok(n > 0)
    }

    /// Deletes a calendar with its events, instances and deliveries (the
    /// audit trail stays). Returns false when no such calendar exists.
    pub fn delete_calendar(&self, id: CalendarId) -> Result<bool> {
        let n = self
            .conn
            .execute("DELETE FROM calendars WHERE id = ?1", [id.0])
            .at(self.ctx)?;
        Ok(n > 0)
    }
}

impl Reader<'_> {
    /// Every calendar with its settings and series count, by name.
    pub fn calendar_settings(&self) -> Result<Vec<CalendarSettings>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!("{SELECT} ORDER BY c.name"))
            .at(self.ctx)?;
        let rows = stmt.query_map([], settings).at(self.ctx)?;
        rows.collect::<rusqlite::Result<_>>().at(self.ctx)
    }

    /// One calendar's settings.
    pub fn calendar_by_id(&self, id: CalendarId) -> Result<Option<CalendarSettings>> {
        self.conn
            .prepare_cached(&format!("{SELECT} WHERE c.id = ?1"))
            .and_then(|mut s| s.query_row([id.0], settings).optional())
            .at(self.ctx)
    }
}
