//! How a reminder firing now is to be shown, as one plain value: the
//! notification service's abilities, pop-ups paused, quiet hours, the
//! default snooze. The desktop channel reads it on the engine's thread
//! without taking the app's lock, so firing never waits for the UI (an IPC
//! import holds that lock for a whole file); the app refreshes it after
//! every change ([`App::delivery_policy`]).

use chrono::{DateTime, Timelike, Utc};
use chrono_tz::Tz;

use crate::api::NotifierState;
use crate::error::ApiResult;
use crate::service::App;
use crate::settings::quiet_window;

/// What decides how a reminder is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryPolicy {
    /// What the notification service can do.
    pub notifier: NotifierState,
    /// Pop-ups paused until then.
    pub paused_until: Option<DateTime<Utc>>,
    /// Quiet hours, minutes of the day `[start, end)` (may wrap midnight).
    pub quiet: Option<(u32, u32)>,
    /// The display zone quiet hours are read in.
    pub tz: Tz,
    /// Minutes a notification's Snooze button snoozes for.
    pub default_snooze: u32,
}

impl Default for DeliveryPolicy {
    fn default() -> Self {
        Self {
            notifier: NotifierState::Unavailable,
            paused_until: None,
            quiet: None,
            tz: Tz::UTC,
            default_snooze: 10,
        }
    }
}

impl DeliveryPolicy {
    /// Whether a reminder firing at `now` stays silent (paused, or in the
    /// quiet hours): it then goes to the reminder window only.
    #[must_use]
    pub fn is_quiet(&self, now: DateTime<Utc>) -> bool {
        if self.paused_until.is_some_and(|t| t > now) {
            return true;
        }
        let Some((start, end)) = self.quiet else {
            return false;
        };
        let local = now.with_timezone(&self.tz);
        let m = local.hour() * 60 + local.minute();
        if start <= end {
            start <= m && m < end
        } else {
            m >= start || m < end
        }
    }
}

impl App {
    /// The policy in effect now.
    ///
    /// # Errors
    /// Store failures; quiet hours that do not read.
    pub fn delivery_policy(&self, now: DateTime<Utc>) -> ApiResult<DeliveryPolicy> {
        let settings = self.get_settings()?;
        Ok(DeliveryPolicy {
            notifier: self.notifier,
            paused_until: self.paused_until(now)?,
            quiet: settings
                .quiet_hours
                .as_ref()
                .map(quiet_window)
                .transpose()?,
            tz: self.display_tz(),
            default_snooze: settings.default_snooze,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s)
            .expect("instant")
            .with_timezone(&Utc)
    }

    #[test]
    fn quiet_hours_wrap_midnight_in_the_display_zone_and_a_pause_ends() {
        let p = DeliveryPolicy {
            quiet: Some((22 * 60, 7 * 60)),
            tz: Tz::Asia__Shanghai,
            ..DeliveryPolicy::default()
        };
        assert!(p.is_quiet(at("2026-12-05T15:30:00Z")), "23:30 in Shanghai");
        assert!(p.is_quiet(at("2026-12-05T22:59:00Z")), "06:59 in Shanghai");
        assert!(!p.is_quiet(at("2026-12-05T23:00:00Z")), "07:00 in Shanghai");
        let paused = DeliveryPolicy {
            paused_until: Some(at("2026-12-05T12:00:00Z")),
            ..DeliveryPolicy::default()
        };
        assert!(paused.is_quiet(at("2026-12-05T11:59:59Z")));
        assert!(!paused.is_quiet(at("2026-12-05T12:00:00Z")));
    }
}
