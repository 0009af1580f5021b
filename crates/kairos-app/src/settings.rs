//! User settings, one JSON value in the store's `meta` table: validated on
//! save, and read back leniently (a value from an older or newer Kairos
//! falls back to the defaults field by field, never to an error).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use kairos_core::model::{Event, Zone};
use kairos_engine::engine::FLOATING_ZONE;
use kairos_engine::import::replace_series;

use crate::App;
use crate::api::{ApiError, QuietHours, Settings};
use crate::convert::zone;
use crate::error::ApiResult;

const KEY: &str = "app.settings";
/// `meta` key: the zone every floating series' reminders are planned in.
const ZONE_PLANNED: &str = "app.floating_zone_planned";

/// Most snooze choices offered.
pub const MAX_SNOOZE_CHOICES: usize = 12;
/// Longest snooze, minutes (a week).
pub const MAX_SNOOZE_MINUTES: u32 = 7 * 24 * 60;

/// Settings of a new database.
#[must_use]
pub fn defaults() -> Settings {
    Settings {
        language: "auto".into(),
        theme: "system".into(),
        time_zone: None,
        week_start: 1,
        snooze_choices: vec![5, 10, 15, 30, 60, 1440],
        default_snooze: 10,
        quiet_hours: None,
        start_at_login: false,
        default_calendar: None,
    }
}

fn hhmm(s: &str, field: &str) -> ApiResult<(u32, u32)> {
    let bad = || ApiError::invalid(format!("{field}: {s:?} is not a time HH:MM"));
    let (h, m) = s.split_once(':').ok_or_else(bad)?;
    let (h, m): (u32, u32) = (h.parse().map_err(|_| bad())?, m.parse().map_err(|_| bad())?);
    if h > 23 || m > 59 {
        return Err(bad());
    }
    Ok((h, m))
}

/// Minutes after midnight of a quiet window's ends.
pub fn quiet_window(q: &QuietHours) -> ApiResult<(u32, u32)> {
    let (sh, sm) = hhmm(&q.start, "quiet hours start")?;
    let (eh, em) = hhmm(&q.end, "quiet hours end")?;
    Ok((sh * 60 + sm, eh * 60 + em))
}

fn validate(s: &Settings) -> ApiResult<()> {
    if !["auto", "en", "zh-CN"].contains(&s.language.as_str()) {
        return Err(ApiError::invalid(format!(
            "language: {:?} is not auto, en or zh-CN",
            s.language
        )));
    }
    if !["system", "light", "dark"].contains(&s.theme.as_str()) {
        return Err(ApiError::invalid(format!(
            "theme: {:?} is not system, light or dark",
            s.theme
        )));
    }
    if let Some(tz) = &s.time_zone {
        zone(tz, "time zone")?;
    }
    if s.week_start > 1 {
        return Err(ApiError::invalid("week start: 0 (Sunday) or 1 (Monday)"));
    }
    if s.snooze_choices.is_empty() || s.snooze_choices.len() > MAX_SNOOZE_CHOICES {
        return Err(ApiError::invalid(format!(
            "snooze choices: 1 to {MAX_SNOOZE_CHOICES} are needed"
        )));
    }
    for m in s.snooze_choices.iter().chain([&s.default_snooze]) {
        if *m == 0 || *m > MAX_SNOOZE_MINUTES {
            return Err(ApiError::invalid(format!(
                "snooze: {m} minutes is not between 1 and {MAX_SNOOZE_MINUTES}"
            )));
        }
    }
    if let Some(q) = &s.quiet_hours {
        quiet_window(q)?;
    }
    Ok(())
}

impl App {
    pub(crate) fn load_settings(&self) -> ApiResult<Settings> {
        let Some(text) = self.store.meta_get(KEY)? else {
            return Ok(defaults());
        };
        let stored: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        let mut merged = serde_json::to_value(defaults()).unwrap_or_default();
        if let (Some(m), Some(s)) = (merged.as_object_mut(), stored.as_object()) {
            for (k, v) in s {
                if m.contains_key(k) {
                    m.insert(k.clone(), v.clone());
                }
            }
        }
        Ok(serde_json::from_value(merged)
            .ok()
            .filter(|s| validate(s).is_ok())
            .unwrap_or_else(defaults))
    }

    /// The settings in effect.
    ///
    /// # Errors
    /// Never, today; kept fallible for the IPC shape.
    pub fn get_settings(&self) -> ApiResult<Settings> {
        Ok(self.settings.clone())
    }

    /// Validates and stores `s`.
    ///
    /// # Errors
    /// A field out of range (named), store failures.
    pub fn save_settings(&mut self, s: Settings, now: DateTime<Utc>) -> ApiResult<Settings> {
        validate(&s)?;
        if let Some(id) = s.default_calendar {
            self.calendar(id)?;
        }
        let text = serde_json::to_string(&s).map_err(|e| ApiError::internal(e.to_string()))?;
        self.store.meta_set(KEY, &text)?;
        self.settings = s.clone();
        self.follow_zone(now)?;
        Ok(s)
    }

    /// Floating times ("09:00", no zone) mean the display zone's wall clock:
    /// when that zone is not the one the pending reminders were planned in
    /// (changed in the settings, or the system's since the last run), every
    /// series with a floating start is planned again, and the engine is told
    /// the zone ([`FLOATING_ZONE`]). Returns how many series were replanned.
    ///
    /// # Errors
    /// Store failures; a stored calendar that no longer reads.
    pub fn follow_zone(&mut self, now: DateTime<Utc>) -> ApiResult<usize> {
        let tz = self.display_tz();
        if self.store.meta_get(ZONE_PLANNED)?.as_deref() == Some(tz.name()) {
            return Ok(0);
        }
        // The engine first: from now on it plans (and inserts) in the new
        // zone only, so nothing it adds meanwhile is stale. The series are
        // then replanned one transaction each; `ZONE_PLANNED` is written
        // last, so a failure half-way is finished on the next call.
        self.store.meta_set(FLOATING_ZONE, tz.name())?;
        let mut n = 0;
        for cal in self.store.calendars()? {
            // Only the floating series are kept, read a chunk at a time
            // (chunks.rs): most calendars have none.
            let mut series: BTreeMap<String, Vec<Event>> = BTreeMap::new();
            self.for_each_chunk(cal.id.0, |parsed| {
                let mut here: BTreeMap<&str, Vec<&Event>> = BTreeMap::new();
                for ev in &parsed.events {
                    here.entry(ev.uid.as_str()).or_default().push(ev);
                }
                for (uid, comps) in here {
                    if comps.iter().any(|e| e.start.zone() == Zone::Floating) {
                        series.insert(uid.to_owned(), comps.into_iter().cloned().collect());
                    }
                }
                Ok(())
            })?;
            for (uid, comps) in series {
                replace_series(
                    &mut self.store,
                    &cal.name,
                    &uid,
                    &comps,
                    now,
                    self.horizon,
                    tz,
                )?;
                n += 1;
            }
        }
        self.store.meta_set(ZONE_PLANNED, tz.name())?;
        Ok(n)
    }

    /// The zone the views show, and floating times follow.
    #[must_use]
    pub fn display_tz(&self) -> Tz {
        self.settings
            .time_zone
            .as_deref()
            .and_then(|z| z.parse().ok())
            .unwrap_or(self.system_tz)
    }

    /// Every IANA zone name, for the settings and editor pickers.
    ///
    /// # Errors
    /// Never.
    pub fn time_zones(&self) -> ApiResult<Vec<String>> {
        Ok(chrono_tz::TZ_VARIANTS
            .iter()
            .map(|t| t.name().to_owned())
            .collect())
    }
}
