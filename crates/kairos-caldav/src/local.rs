//! The Kairos side of a synced calendar: its series as the server should
//! see them (one `VCALENDAR` per `UID`, hashed to notice local edits), and
//! server objects applied through the engine's one import path (lenient
//! reading, keys kept, pending reminders moved in the same transaction).

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use kairos_core::Limits;
use kairos_core::ics::{Warning, parse_calendar_lenient};
use kairos_core::model::{Calendar, Event};
use kairos_store::{CalendarId, Store, StoredEvent};

use crate::error::Result;

/// One series of the local calendar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalSeries {
    /// Its `UID`.
    pub uid: String,
    /// As an iCalendar object (master first, then overrides).
    pub text: String,
    /// SHA-256 of `text`, hex.
    pub hash: String,
    /// When any of its components was last written here.
    pub updated_at: DateTime<Utc>,
}

/// One `VCALENDAR` of stored components, and the hash of a series' text:
/// the engine's, which also reads them when a device joins a Kairos sync
/// account (`kairos_engine::sync::caldav_copy`).
pub use kairos_engine::sync::caldav_copy::{hash, wrap};

/// Every series of calendar `cal`, by `UID`.
///
/// # Errors
/// Store failures.
pub fn local_series(store: &Store, cal: CalendarId) -> Result<BTreeMap<String, LocalSeries>> {
    let mut events = store.read(|r| r.events_of(cal))?;
    events.sort_by(|a, b| (&a.uid, &a.recurrence_id).cmp(&(&b.uid, &b.recurrence_id)));
    let mut out = BTreeMap::new();
    let mut i = 0;
    while i < events.len() {
        let uid = events[i].uid.clone();
        let j = events[i..]
            .iter()
            .position(|e| e.uid != uid)
            .map_or(events.len(), |k| i + k);
        let group = &events[i..j];
        let refs: Vec<&StoredEvent> = group.iter().collect();
        let text = kairos_engine::sync::caldav_copy::series_text(&refs, cal)?;
        let updated_at = group
            .iter()
            .map(|e| e.updated_at)
            .max()
            .unwrap_or(DateTime::<Utc>::UNIX_EPOCH);
        out.insert(
            uid.clone(),
            LocalSeries {
                uid,
                hash: hash(&text),
                text,
                updated_at,
            },
        );
        i = j;
    }
    Ok(out)
}

/// A server object read leniently: its components grouped by `UID` (one,
/// for an object as RFC 4791 §4.1 requires) and what was repaired.
#[derive(Debug, Default)]
pub struct RemoteObject {
    /// Components by `UID`.
    pub series: BTreeMap<String, Vec<Event>>,
    /// Lenient reading's warnings.
    pub warnings: Vec<Warning>,
}

impl RemoteObject {
    /// Reads `data`; an object that cannot be read at all has no series
    /// and one warning.
    #[must_use]
    pub fn read(data: &str) -> Self {
        match parse_calendar_lenient(data.as_bytes(), &Limits::default()) {
            Ok((cal, warnings)) => {
                let mut series: BTreeMap<String, Vec<Event>> = BTreeMap::new();
                for ev in cal.events {
                    series.entry(ev.uid.clone()).or_default().push(ev);
                }
                Self { series, warnings }
            }
            Err(e) => Self {
                series: BTreeMap::new(),
                warnings: vec![Warning {
                    line: 0,
                    uid: None,
                    component: "VCALENDAR".to_owned(),
                    problem: e.to_string(),
                    action: "object skipped".to_owned(),
                }],
            },
        }
    }

    /// The `UID` the object is filed under (its first).
    #[must_use]
    pub fn uid(&self) -> Option<&str> {
        self.series.keys().next().map(String::as_str)
    }
}

/// Where and how server objects are applied.
#[derive(Debug, Clone, Copy)]
pub struct Apply<'a> {
    /// The Kairos calendar's name.
    pub calendar: &'a str,
    /// Now.
    pub now: DateTime<Utc>,
    /// The engine's horizon.
    pub horizon: Duration,
    /// The zone for floating times.
    pub floating: Tz,
}

impl Apply<'_> {
    /// Stores series new to this calendar, fetched from the server, in one
    /// import (one transaction); their sync ops are marked as fetched
    /// (`kairos_engine::sync::caldav`).
    ///
    /// # Errors
    /// Store or engine failures.
    pub fn add_all(&self, store: &mut Store, series: Vec<Vec<Event>>) -> Result<()> {
        if series.is_empty() {
            return Ok(());
        }
        let cal = Calendar {
            name: None,
            events: series.into_iter().flatten().collect(),
            extra: Vec::new(),
        };
        kairos_engine::sync::caldav::import_fetched(
            store,
            self.calendar,
            &cal,
            self.now,
            self.horizon,
            self.floating,
        )?;
        Ok(())
    }

    /// Whether this calendar already holds series `uid` exactly as `comps`.
    ///
    /// # Errors
    /// Store failures.
    pub fn holds(&self, store: &Store, uid: &str, comps: &[Event]) -> Result<bool> {
        Ok(kairos_engine::import::holds(
            store,
            self.calendar,
            uid,
            comps,
        )?)
    }

    /// Replaces series `uid` with `comps` (empty: deletes it): the
    /// server's version, fetched (its sync op is marked as such).
    ///
    /// # Errors
    /// Store or engine failures.
    pub fn replace(&self, store: &mut Store, uid: &str, comps: &[Event]) -> Result<()> {
        kairos_engine::sync::caldav::replace_fetched(
            store,
            self.calendar,
            uid,
            comps,
            self.now,
            self.horizon,
            self.floating,
        )?;
        Ok(())
    }

    /// Replaces series `uid` with `comps` made here (RFC 9074 marks of
    /// dismissals and snoozes made in Kairos, not yet on the server): an
    /// edit like any other, applied by every device.
    ///
    /// # Errors
    /// Store or engine failures.
    pub fn edit(&self, store: &mut Store, uid: &str, comps: &[Event]) -> Result<()> {
        kairos_engine::import::replace_series(
            store,
            self.calendar,
            uid,
            comps,
            self.now,
            self.horizon,
            self.floating,
        )?;
        Ok(())
    }
}
