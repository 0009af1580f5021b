//! Importing and exporting `.ics` files: further `impl App` methods behind
//! the IPC commands of the same names.

use chrono::{DateTime, Utc};
use kairos_core::Limits;
use kairos_core::model::Calendar;

use crate::App;
use crate::api::{ApiError, ExportIcs, ImportIcs, ImportSummary};
use crate::error::ApiResult;

/// Largest `.ics` file the app imports (the core's own limit is larger; a
/// desktop import past this is almost surely the wrong file).
pub const MAX_IMPORT_BYTES: u64 = 64 * 1024 * 1024;

impl App {
    /// Imports an `.ics` file into the calendar named `calendar`.
    ///
    /// # Errors
    /// The file cannot be read or is too large, the text is malformed
    /// (the message names the line and property), store failures.
    pub fn import_ics(&mut self, req: &ImportIcs, now: DateTime<Utc>) -> ApiResult<ImportSummary> {
        let name = req.calendar.trim();
        if name.is_empty() || name.chars().count() > 200 {
            return Err(ApiError::invalid(
                "calendar: a name of 1–200 characters is needed",
            ));
        }
        let meta =
            std::fs::metadata(&req.path).map_err(|e| ApiError::io(format!("{}: {e}", req.path)))?;
        if meta.len() > MAX_IMPORT_BYTES {
            return Err(ApiError::invalid(format!(
                "{}: {} bytes is over the import limit of 64 MiB",
                req.path,
                meta.len()
            )));
        }
        let bytes =
            std::fs::read(&req.path).map_err(|e| ApiError::io(format!("{}: {e}", req.path)))?;
        // What cannot be read is skipped or repaired, and said (issue #11).
        let (cal, warnings) = kairos_core::ics::parse_calendar_lenient(&bytes, &Limits::default())
            .map_err(|e| ApiError::invalid(format!("{}: {e}", req.path)))?;
        if cal.events.is_empty()
            && let Some(first) = warnings.first()
        {
            return Err(ApiError::invalid(format!(
                "{}: nothing could be imported ({} problems; the first: {first})",
                req.path,
                warnings.len()
            )));
        }
        let floating = self.display_tz();
        let report = kairos_engine::import::import(
            &mut self.store,
            name,
            &cal,
            now,
            self.horizon,
            floating,
        )?;
        let id = self.store.ensure_calendar(name, now)?;
        Ok(ImportSummary {
            calendar_id: id.0,
            events: u32::try_from(report.events).unwrap_or(u32::MAX),
            changed: u32::try_from(report.changed).unwrap_or(u32::MAX),
            scheduled: u32::try_from(report.scheduled).unwrap_or(u32::MAX),
            warnings: warnings.iter().map(ToString::to_string).collect(),
        })
    }

    /// Writes one calendar (or all) as an `.ics` file; returns the number of
    /// components written.
    ///
    /// # Errors
    /// Unknown calendar, the file cannot be written.
    pub fn export_ics(&self, req: &ExportIcs, now: DateTime<Utc>) -> ApiResult<u32> {
        let cals = match req.calendar_id {
            Some(id) => vec![self.calendar(id)?],
            None => self.store.read(|r| r.calendar_settings())?,
        };
        let mut cal = Calendar {
            name: None,
            events: Vec::new(),
            extra: Vec::new(),
        };
        for c in &cals {
            cal.events.extend(self.read_calendar(c.id.0, None)?.events);
        }
        if let [one] = cals.as_slice() {
            cal.name = Some(one.name.clone());
        }
        let out = kairos_core::ics::write_calendar(&Calendar { ..cal.clone() }, now);
        std::fs::write(&req.path, out).map_err(|e| ApiError::io(format!("{}: {e}", req.path)))?;
        Ok(u32::try_from(cal.events.len()).unwrap_or(u32::MAX))
    }
}
