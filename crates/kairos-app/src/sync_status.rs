//! The sync indicator: the live connection's state (`kairos_sync`'s
//! [`LinkState`], pushed by the host) as the status bar and the tray show
//! it. The shell hands each new state to [`App::set_sync`] and forwards
//! what it returns; the words of the tray's tooltip are made here too, so
//! the shell decides nothing.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use kairos_sync::{LinkState, Phase};

use crate::App;
use crate::api::{SyncState, SyncStatus};

fn rfc(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

impl From<&LinkState> for SyncStatus {
    fn from(s: &LinkState) -> Self {
        let (state, since, reason) = match &s.phase {
            Phase::NotPaired | Phase::Stopped => (SyncState::Off, None, None),
            Phase::Connecting => (SyncState::Syncing, None, None),
            // Connected with changes still waiting: they are being sent.
            Phase::Connected if s.outbox > 0 => (SyncState::Syncing, None, None),
            Phase::Connected => (SyncState::Synced, None, None),
            Phase::Offline { since, reason } => {
                (SyncState::Offline, Some(rfc(*since)), Some(reason.clone()))
            }
            Phase::Error { since, reason } => {
                (SyncState::Error, Some(rfc(*since)), Some(reason.clone()))
            }
        };
        Self {
            state,
            last_sync_at: s.last_sync_at.map(rfc),
            since,
            reason,
            waiting: u32::try_from(s.outbox).unwrap_or(u32::MAX),
        }
    }
}

impl App {
    /// The live connection's new state; returns it as the UI gets it.
    pub fn set_sync(&mut self, state: &LinkState) -> SyncStatus {
        self.sync = SyncStatus::from(state);
        self.sync.clone()
    }

    /// The tray icon's tooltip: "Kairos", then the sync state when the
    /// database is paired (times in the display zone).
    #[must_use]
    pub fn tray_tooltip(&self, now: DateTime<Utc>) -> String {
        tooltip(&self.sync, self.display_tz(), now)
    }
}

/// `HH:MM` in `tz`, with the weekday when it is not today.
fn clock(instant: Option<&str>, tz: Tz, now: DateTime<Utc>) -> String {
    let Some(t) = instant.and_then(|t| DateTime::parse_from_rfc3339(t).ok()) else {
        return "?".into();
    };
    let local = t.with_timezone(&tz);
    if local.date_naive() == now.with_timezone(&tz).date_naive() {
        local.format("%H:%M").to_string()
    } else {
        local.format("%a %H:%M").to_string()
    }
}

/// What [`App::tray_tooltip`] says.
#[must_use]
pub(crate) fn tooltip(s: &SyncStatus, tz: Tz, now: DateTime<Utc>) -> String {
    let waiting = if s.waiting > 0 {
        format!(" ({} waiting)", s.waiting)
    } else {
        String::new()
    };
    let reason = s.reason.as_deref().unwrap_or("unknown");
    let line = match s.state {
        SyncState::Off => return "Kairos".into(),
        SyncState::Syncing => format!("syncing…{waiting}"),
        SyncState::Synced => match s.last_sync_at {
            Some(_) => format!("synced {}", clock(s.last_sync_at.as_deref(), tz, now)),
            None => "synced".into(),
        },
        SyncState::Offline => format!(
            "offline since {}{waiting}",
            clock(s.since.as_deref(), tz, now)
        ),
        SyncState::Error => format!("sync error: {reason}{waiting}"),
    };
    format!("Kairos — {line}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().expect("time")
    }

    fn link(phase: Phase, outbox: u64) -> LinkState {
        LinkState {
            phase,
            last_sync_at: Some(at("2026-12-06T08:05:00Z")),
            outbox,
        }
    }

    #[test]
    fn each_link_state_maps_to_what_the_indicator_shows() {
        let off = SyncStatus::from(&LinkState::not_paired());
        assert_eq!(off, SyncStatus::off());
        let synced = SyncStatus::from(&link(Phase::Connected, 0));
        assert_eq!(synced.state, SyncState::Synced);
        assert_eq!(synced.last_sync_at.as_deref(), Some("2026-12-06T08:05:00Z"));
        assert_eq!(
            SyncStatus::from(&link(Phase::Connected, 2)).state,
            SyncState::Syncing
        );
        let offline = SyncStatus::from(&link(
            Phase::Offline {
                since: at("2026-12-06T09:00:00Z"),
                reason: "connection refused".into(),
            },
            3,
        ));
        assert_eq!(
            (offline.state, offline.since.as_deref(), offline.waiting),
            (SyncState::Offline, Some("2026-12-06T09:00:00Z"), 3)
        );
        assert_eq!(offline.reason.as_deref(), Some("connection refused"));
    }

    #[test]
    fn the_tooltip_gives_times_in_the_display_zone_and_what_waits() {
        let tz: Tz = "Europe/Berlin".parse().expect("zone");
        let now = at("2026-12-06T12:00:00Z");
        let show = |phase, outbox| tooltip(&SyncStatus::from(&link(phase, outbox)), tz, now);
        assert_eq!(show(Phase::NotPaired, 0), "Kairos");
        assert_eq!(show(Phase::Connected, 0), "Kairos — synced 09:05");
        assert_eq!(show(Phase::Connecting, 0), "Kairos — syncing…");
        let since = at("2026-12-05T20:30:00Z");
        let offline = Phase::Offline {
            since,
            reason: "x".into(),
        };
        assert_eq!(
            show(offline, 4),
            "Kairos — offline since Sat 21:30 (4 waiting)"
        );
        let refused = Phase::Error {
            since,
            reason: "refused (HTTP 401): device revoked".into(),
        };
        assert_eq!(
            show(refused, 0),
            "Kairos — sync error: refused (HTTP 401): device revoked"
        );
    }
}
