//! Reminders later than the materialised horizon, computed on the fly and
//! read-only (`kairos upcoming --until`).
//!
//! The engine stores instances only up to a short horizon (about two days),
//! so a list of stored instances says nothing about next month. This module
//! plans the stretch between the horizon and a given instant from the stored
//! calendars with [`crate::materialise::plan`] — the function the engine
//! materialises with — so every key shown is the key the engine will store
//! when the time comes. Nothing is written.

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use kairos_core::Limits;
use kairos_proto::Effective;
use kairos_store::{Store, StoreError};

use crate::error::EngineError;
use crate::materialise::{CalendarLabel, Planned, plan_with};
use crate::meta::{database_zone, materialised_until};
use crate::reminder::base_key;

/// How far ahead a preview may look, in days: a bound on the work one
/// `upcoming --until` can ask for (a year of a minutely alarm is already
/// half a million instances).
pub const MAX_DAYS_AHEAD: i64 = 366;

/// Why a preview could not be computed.
#[derive(Debug, thiserror::Error)]
pub enum PreviewError {
    /// `until` is further ahead than [`MAX_DAYS_AHEAD`].
    #[error(
        "--until {until} is more than {MAX_DAYS_AHEAD} days ahead of now ({now}); the limit is {MAX_DAYS_AHEAD} days"
    )]
    TooFar {
        /// What was asked for.
        until: String,
        /// Now.
        now: String,
    },
    /// The store or a stored calendar failed.
    #[error(transparent)]
    Engine(#[from] EngineError),
}

impl From<StoreError> for PreviewError {
    fn from(e: StoreError) -> Self {
        Self::Engine(e.into())
    }
}

/// The reminders with a trigger in `[max(horizon, now), until)` that are not
/// stored yet and not already acknowledged (a dismissal or snooze that
/// arrived before the instance exists), soonest first, at most `limit`.
/// `horizon` is where the engine's materialisation stopped; floating times
/// are planned in the database's zone, else `fallback`, as the engine does.
///
/// # Errors
/// `until` more than [`MAX_DAYS_AHEAD`] days after `now`; store failures; a
/// stored calendar that no longer reads or expands.
pub fn beyond_horizon(
    store: &Store,
    now: DateTime<Utc>,
    until: DateTime<Utc>,
    fallback: Tz,
    limit: usize,
) -> Result<Vec<Planned>, PreviewError> {
    if until > now + Duration::days(MAX_DAYS_AHEAD) {
        return Err(PreviewError::TooFar {
            until: until.to_rfc3339(),
            now: now.to_rfc3339(),
        });
    }
    let from = materialised_until(store)?.unwrap_or(now).max(now);
    if until <= from || limit == 0 {
        return Ok(Vec::new());
    }
    let floating = database_zone(store, fallback)?;
    let limits = Limits::default();
    let mut out = Vec::new();
    // Holidays once for every calendar (as `Engine::materialise` does).
    let holidays = store.read(|r| crate::workdays::holiday_dates(r, from, until))?;
    let weeks = store.work_settings()?;
    for cal in store.calendars()? {
        let parsed = crate::tasks::stored(store, cal.id, &cal.name)?;
        let label = CalendarLabel {
            uid: &cal.uid,
            name: &cal.name,
        };
        let work = kairos_core::workdays::WorkTime {
            week: crate::workdays::week_of(&weeks, cal.id),
            holidays: holidays.clone(),
        };
        let planned =
            plan_with(label, &parsed, from, until, floating, &limits, &work).map_err(|source| {
                EngineError::Calendar {
                    calendar: cal.name.clone(),
                    uid: "(calendar)".into(),
                    source,
                }
            })?;
        for p in planned {
            if store.get(&p.key)?.is_none() && !acknowledged(store, &p.key)? {
                out.push(p);
            }
        }
    }
    out.sort_by(|a, b| (a.trigger, &a.key).cmp(&(b.trigger, &b.key)));
    out.truncate(limit);
    Ok(out)
}

/// Whether the reminder `key` belongs to was already dismissed or snoozed
/// (here or on another device; for an escalation's repetition, also its
/// base acknowledged here), so its instance will be quiet when stored.
fn acknowledged(store: &Store, key: &str) -> Result<bool, StoreError> {
    store.read(|r| {
        let recorded = r
            .ack(base_key(key))?
            .is_some_and(|t| crate::sync::decode_ack(&t).effective() != Effective::Open);
        Ok(recorded || crate::escalate::base_acknowledged(r, key)?)
    })
}
