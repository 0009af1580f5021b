//! The calendars sidebar: list, create, change, delete.

use chrono::{DateTime, Utc};
use kairos_store::CalendarId;

use crate::App;
use crate::api::{AlarmSpec, ApiError, CalendarInfo, CalendarInput};
use crate::convert::MAX_ALARMS;
use crate::error::ApiResult;

/// Colours given to calendars that have none, in order.
const PALETTE: [&str; 8] = [
    "#3465a4", "#c4432b", "#4e9a06", "#b5830f", "#75507b", "#0f8a8a", "#c05c9a", "#5c6b7a",
];

fn is_colour(c: &str) -> bool {
    c.len() == 7 && c.starts_with('#') && c[1..].chars().all(|x| x.is_ascii_hexdigit())
}

impl App {
    /// Every calendar, by name.
    ///
    /// # Errors
    /// Store failures.
    pub fn list_calendars(&self) -> ApiResult<Vec<CalendarInfo>> {
        let rows = self.store.read(|r| r.calendar_settings())?;
        let work = self.store.work_settings()?;
        Ok(rows
            .into_iter()
            .map(|c| {
                let w = work.iter().find(|w| w.id == c.id);
                (
                    c,
                    w.map_or(kairos_core::workdays::MON_FRI, |w| w.week),
                    w.is_some_and(|w| w.holidays),
                )
            })
            .map(|(c, work_week, holidays)| CalendarInfo {
                color: c.color.filter(|x| is_colour(x)).unwrap_or_else(|| {
                    PALETTE[usize::try_from(c.id.0).unwrap_or(0) % PALETTE.len()].to_owned()
                }),
                default_alarms: serde_json::from_str::<Vec<AlarmSpec>>(&c.default_alarms)
                    .unwrap_or_default(),
                id: c.id.0,
                name: c.name,
                visible: c.visible,
                events: c.series,
                work_week,
                holidays,
            })
            .collect())
    }

    /// Creates (`id: null`) or changes a calendar.
    ///
    /// # Errors
    /// An empty or taken name, a bad colour, too many default reminders,
    /// an unknown id.
    pub fn save_calendar(
        &mut self,
        input: CalendarInput,
        now: DateTime<Utc>,
    ) -> ApiResult<CalendarInfo> {
        let name = input.name.trim().to_owned();
        if name.is_empty() || name.chars().count() > 200 {
            return Err(ApiError::invalid("name: 1–200 characters are needed"));
        }
        if !is_colour(&input.color) {
            return Err(ApiError::invalid(format!(
                "colour: {:?} is not #rrggbb",
                input.color
            )));
        }
        if input.default_alarms.len() > MAX_ALARMS {
            return Err(ApiError::invalid(format!(
                "default reminders: more than {MAX_ALARMS}"
            )));
        }
        if input.work_week == 0 || input.work_week > 127 {
            return Err(ApiError::invalid(format!(
                "working week: {} names no weekday (at least one is needed)",
                input.work_week
            )));
        }
        let taken = self
            .list_calendars()?
            .into_iter()
            .any(|c| c.name == name && Some(c.id) != input.id);
        if taken {
            return Err(ApiError::invalid(format!(
                "name: a calendar called {name:?} exists already"
            )));
        }
        let id = match input.id {
            Some(id) => self.calendar(id)?.id,
            None => self.store.ensure_calendar(&name, now)?,
        };
        let alarms = serde_json::to_string(&input.default_alarms)
            .map_err(|e| ApiError::internal(e.to_string()))?;
        let row = kairos_store::CalendarSettings {
            id,
            name,
            color: Some(input.color),
            visible: input.visible,
            default_alarms: alarms,
            series: 0,
        };
        self.store
            .write(|tx| -> Result<(), kairos_store::StoreError> {
                tx.update_calendar(&row)?;
                // Recorded for sync in the same transaction.
                if let Some(c) = tx.calendars()?.into_iter().find(|c| c.id == id) {
                    let body = kairos_proto::Body::CalendarPut {
                        calendar: c.uid,
                        name: c.name,
                        color: c.color,
                    };
                    kairos_engine::sync::record(tx, body, now)?;
                }
                Ok(())
            })?;
        let saved = self
            .list_calendars()?
            .into_iter()
            .find(|c| c.id == id.0)
            .ok_or_else(|| ApiError::internal("calendar vanished after saving"))?;
        if (saved.work_week, saved.holidays) == (input.work_week, input.holidays) {
            return Ok(saved);
        }
        // Working-day reminders move at once (same keys).
        let tz = self.display_tz();
        kairos_engine::workdays::set_work_time(
            &mut self.store,
            &saved.name,
            Some(input.work_week),
            Some(input.holidays),
            now,
            tz,
        )?;
        Ok(CalendarInfo {
            work_week: input.work_week,
            holidays: input.holidays,
            ..saved
        })
    }

    /// Deletes a calendar, its events and their pending reminders. The last
    /// calendar cannot be deleted (new events need somewhere to go).
    ///
    /// # Errors
    /// Unknown id, the last calendar.
    pub fn delete_calendar(&mut self, id: i64, now: DateTime<Utc>) -> ApiResult<()> {
        self.calendar(id)?;
        if self.list_calendars()?.len() <= 1 {
            return Err(ApiError::invalid("the last calendar cannot be deleted"));
        }
        self.store
            .write(|tx| -> Result<(), kairos_store::StoreError> {
                let uid = tx
                    .calendars()?
                    .into_iter()
                    .find(|c| c.id.0 == id)
                    .map(|c| c.uid);
                tx.delete_calendar(CalendarId(id))?;
                if let Some(calendar) = uid {
                    let body = kairos_proto::Body::CalendarDelete { calendar };
                    kairos_engine::sync::record(tx, body, now)?;
                }
                Ok(())
            })?;
        Ok(())
    }
}
