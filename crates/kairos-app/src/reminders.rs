//! The reminder window and the tray: what fired and is not dismissed,
//! what comes next, snooze, dismiss, and pausing pop-ups.

use chrono::{DateTime, Duration, NaiveTime, Utc};
use kairos_engine::actions::{self, ActionError};
use kairos_engine::materialise::Payload;
use kairos_store::State;

use crate::App;
use crate::api::{
    ApiError, AppStatus, EventRef, Pause, ShownReminder, SnoozeRequest, UpcomingReminder,
};
use crate::convert::instant;
use crate::error::ApiResult;
use crate::settings::MAX_SNOOZE_MINUTES;

/// Meta key: pop-ups paused until this instant (RFC 3339).
const PAUSED_UNTIL: &str = "app.paused_until";
/// Most rows the reminder window lists.
pub const MAX_SHOWN: usize = 500;
/// Fired reminders older than this leave the reminder window (still in the
/// audit log).
pub const SHOWN_FOR: Duration = Duration::days(7);
/// Fired this much after its trigger, a reminder is shown as missed
/// (the engine's own "late" grace).
const MISSED_AFTER: Duration = Duration::minutes(2);

impl From<ActionError> for ApiError {
    fn from(e: ActionError) -> Self {
        match e {
            ActionError::Store(s) => s.into(),
            ActionError::NotFound(_) => ApiError::not_found(e.to_string()),
            other => ApiError::invalid(other.to_string()),
        }
    }
}

fn rfc(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

impl App {
    /// Reminders that fired and are not dismissed or snoozed, newest first;
    /// one row per reminder (an escalating one's newest repetition). A
    /// reminder of an event deleted since (here or elsewhere) is not listed:
    /// its delivered instance outlives the event, its notification does not.
    ///
    /// # Errors
    /// Store failures.
    pub fn shown_reminders(&self, now: DateTime<Utc>) -> ApiResult<Vec<ShownReminder>> {
        let cals = self.list_calendars()?;
        let live = self.store.read(|r| {
            let mut live = Vec::new();
            for i in r.in_state(State::Delivered, 100_000)? {
                if i.trigger_at > now - SHOWN_FOR && r.series_exists(i.calendar, &i.event_uid)? {
                    live.push(i);
                }
            }
            Ok::<_, kairos_store::StoreError>(live)
        })?;
        let mut rows: Vec<ShownReminder> = live
            .into_iter()
            .map(|i| {
                let p: Option<Payload> = serde_json::from_str(&i.payload).ok();
                let cal = cals.iter().find(|c| c.id == i.calendar.0);
                ShownReminder {
                    event: EventRef {
                        calendar_id: i.calendar.0,
                        uid: i.event_uid.clone(),
                        recurrence_id: None,
                    },
                    title: p
                        .as_ref()
                        .and_then(|p| p.summary.clone())
                        .unwrap_or_else(|| "(no title)".into()),
                    location: p.as_ref().and_then(|p| p.location.clone()),
                    color: cal.map_or_else(|| "#5c6b7a".into(), |c| c.color.clone()),
                    occurrence_start: p
                        .map_or_else(|| i.occurrence.clone(), |p| p.occurrence_start),
                    trigger: rfc(i.trigger_at),
                    missed: i.updated_at - i.trigger_at > MISSED_AFTER,
                    key: i.key,
                }
            })
            .collect();
        rows.reverse();
        // An escalating reminder's repetitions (`~again@k`) are one
        // reminder: its newest shown instance stands for it.
        let mut seen = std::collections::HashSet::new();
        rows.retain(|r| seen.insert(kairos_engine::sync::acks::base_key(&r.key).to_owned()));
        rows.truncate(MAX_SHOWN);
        Ok(rows)
    }

    /// Snoozes a reminder for `minutes`.
    ///
    /// # Errors
    /// Unknown key, a reminder already dismissed, minutes out of range.
    pub fn snooze(&mut self, req: &SnoozeRequest, now: DateTime<Utc>) -> ApiResult<()> {
        if req.minutes == 0 || req.minutes > MAX_SNOOZE_MINUTES {
            return Err(ApiError::invalid(format!(
                "snooze: {} minutes is not between 1 and {MAX_SNOOZE_MINUTES}",
                req.minutes
            )));
        }
        self.snooze_for(&req.key, Duration::minutes(i64::from(req.minutes)), now)
    }

    /// Snoozes for any length (the shell's test clock uses seconds).
    ///
    /// # Errors
    /// As [`App::snooze`].
    pub fn snooze_for(&mut self, key: &str, length: Duration, now: DateTime<Utc>) -> ApiResult<()> {
        actions::snooze(&mut self.store, key, length, now)?;
        Ok(())
    }

    /// Dismisses a reminder (RFC 9074 acknowledged).
    ///
    /// # Errors
    /// Unknown key, a reminder already dismissed.
    pub fn dismiss(&mut self, key: &str, now: DateTime<Utc>) -> ApiResult<()> {
        actions::dismiss(&mut self.store, key, now)?;
        Ok(())
    }

    /// Dismisses a reminder on this device only ("Dismiss here only", the
    /// same path as `kairos dismiss --here`): it is acknowledged here, and
    /// nothing is recorded for sync, so the account's other devices still
    /// remind.
    ///
    /// # Errors
    /// Unknown key, a reminder already dismissed.
    pub fn dismiss_here(&mut self, key: &str, now: DateTime<Utc>) -> ApiResult<()> {
        actions::dismiss_here(&mut self.store, key, now)?;
        Ok(())
    }

    /// Dismisses every shown reminder; returns how many.
    ///
    /// # Errors
    /// Store failures.
    pub fn dismiss_all(&mut self, now: DateTime<Utc>) -> ApiResult<u32> {
        let mut n = 0;
        for r in self.shown_reminders(now)? {
            match actions::dismiss(&mut self.store, &r.key, now) {
                Ok(()) => n += 1,
                // Dismissed elsewhere meanwhile: nothing to do.
                Err(ActionError::NotApplicable { .. } | ActionError::NotFound(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(n)
    }

    /// The next pending reminders, soonest first.
    ///
    /// # Errors
    /// Store failures.
    pub fn upcoming(&self, now: DateTime<Utc>, n: usize) -> ApiResult<Vec<UpcomingReminder>> {
        Ok(self
            .store
            .due(now + Duration::days(366), n)?
            .into_iter()
            .map(|i| UpcomingReminder {
                title: serde_json::from_str::<Payload>(&i.payload)
                    .ok()
                    .and_then(|p| p.summary)
                    .unwrap_or_else(|| "(no title)".into()),
                trigger: rfc(i.trigger_at),
                key: i.key,
            })
            .collect())
    }

    /// Pauses pop-ups (reminders still reach the reminder window).
    ///
    /// # Errors
    /// Store failures.
    pub fn pause_reminders(&mut self, pause: Pause, now: DateTime<Utc>) -> ApiResult<AppStatus> {
        let tz = self.display_tz();
        let until = match pause {
            Pause::Hour => Some(now + Duration::hours(1)),
            Pause::UntilTomorrow => {
                let tomorrow = now.with_timezone(&tz).date_naive() + Duration::days(1);
                Some(instant(
                    tomorrow.and_time(NaiveTime::from_hms_opt(8, 0, 0).unwrap_or(NaiveTime::MIN)),
                    tz,
                ))
            }
            Pause::Off => None,
        };
        self.store
            .meta_set(PAUSED_UNTIL, &until.map(rfc).unwrap_or_default())?;
        self.app_status(now)
    }

    /// Until when pop-ups are paused, if they are now.
    ///
    /// # Errors
    /// Store failures.
    pub fn paused_until(&self, now: DateTime<Utc>) -> ApiResult<Option<DateTime<Utc>>> {
        Ok(self
            .store
            .meta_get(PAUSED_UNTIL)?
            .and_then(|v| DateTime::parse_from_rfc3339(&v).ok())
            .map(|t| t.with_timezone(&Utc))
            .filter(|t| *t > now))
    }

    /// Whether a reminder firing now should stay silent (paused, or in the
    /// quiet hours): it then goes to the reminder window only.
    ///
    /// # Errors
    /// Store failures.
    pub fn is_quiet(&self, now: DateTime<Utc>) -> ApiResult<bool> {
        Ok(self.delivery_policy(now)?.is_quiet(now))
    }

    /// The status bar and tray.
    ///
    /// # Errors
    /// Store failures.
    pub fn app_status(&self, now: DateTime<Utc>) -> ApiResult<AppStatus> {
        Ok(AppStatus {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            time_zone: self.display_tz().name().to_owned(),
            system_time_zone: self.system_tz.name().to_owned(),
            database: self.path.display().to_string(),
            notifier: self.notifier,
            paused_until: self.paused_until(now)?.map(rfc),
            next: self.upcoming(now, 5)?,
            shown: u32::try_from(self.shown_reminders(now)?.len()).unwrap_or(u32::MAX),
            sync: self.sync.clone(),
        })
    }
}
