//! The sync indicator: the live connection's state (`kairos_sync`'s
//! [`LinkState`], pushed by the host) as the status bar and the tray show
//! it. The shell hands each new state to [`App::set_sync`] and forwards
//! what it returns; the tray's words (its tooltip, and a line in its menu:
//! Linux's AppIndicator shows no tooltip) are made here too, so the shell
//! decides nothing.

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

    /// The tray's line about sync ("Synced 09:05", "Offline since 09:05
    /// (3 waiting)", "Sync error: …"), times in the display zone; `None`
    /// when the database is not paired.
    #[must_use]
    pub fn tray_sync_line(&self, now: DateTime<Utc>) -> Option<String> {
        line(&self.sync, self.display_tz(), now)
    }

    /// The tray icon's tooltip: "Kairos", and the sync line when paired.
    #[must_use]
    pub fn tray_tooltip(&self, now: DateTime<Utc>) -> String {
        self.tray_sync_line(now)
            .map_or_else(|| "Kairos".into(), |l| format!("Kairos — {l}"))
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

/// Longest reason the tray shows (a menu item is one line).
const MAX_REASON: usize = 80;

/// What [`App::tray_sync_line`] says.
fn line(s: &SyncStatus, tz: Tz, now: DateTime<Utc>) -> Option<String> {
    let waiting = if s.waiting > 0 {
        format!(" ({} waiting)", s.waiting)
    } else {
        String::new()
    };
    let reason = s.reason.as_deref().unwrap_or("unknown");
    let reason = match reason.char_indices().nth(MAX_REASON) {
        Some((cut, _)) => format!("{}…", &reason[..cut]),
        None => reason.to_owned(),
    };
    Some(match s.state {
        SyncState::Off => return None,
        SyncState::Syncing => format!("Syncing…{waiting}"),
        SyncState::Synced => match s.last_sync_at {
            Some(_) => format!("Synced {}", clock(s.last_sync_at.as_deref(), tz, now)),
            None => "Synced".into(),
        },
        SyncState::Offline => format!(
            "Offline since {}{waiting}",
            clock(s.since.as_deref(), tz, now)
        ),
        SyncState::Error => format!("Sync error: {reason}{waiting}"),
    })
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
    fn the_tray_line_gives_times_in_the_display_zone_and_what_waits() {
        let tz: Tz = "Europe/Berlin".parse().expect("zone");
        let now = at("2026-12-06T12:00:00Z");
        let show = |phase, outbox| {
            line(&SyncStatus::from(&link(phase, outbox)), tz, now).unwrap_or_else(|| "-".into())
        };
        assert_eq!(show(Phase::NotPaired, 0), "-");
        assert_eq!(show(Phase::Connected, 0), "Synced 09:05");
        assert_eq!(show(Phase::Connecting, 0), "Syncing…");
        let since = at("2026-12-05T20:30:00Z");
        let offline = Phase::Offline {
            since,
            reason: "x".into(),
        };
        assert_eq!(show(offline, 4), "Offline since Sat 21:30 (4 waiting)");
        let refused = Phase::Error {
            since,
            reason: "refused (HTTP 401): device revoked".into(),
        };
        assert_eq!(
            show(refused, 0),
            "Sync error: refused (HTTP 401): device revoked"
        );
        let long = Phase::Error {
            since,
            reason: "é".repeat(200),
        };
        assert_eq!(show(long, 0).chars().count(), "Sync error: ".len() + 81);
    }

    #[test]
    fn the_tooltip_is_the_name_then_the_line() {
        let dir = tempfile::tempdir().expect("tmp");
        let now = at("2026-12-06T12:00:00Z");
        let mut app = App::open(&dir.path().join("k.db"), "Europe/Berlin", now).expect("open");
        assert_eq!(app.tray_tooltip(now), "Kairos");
        app.set_sync(&link(Phase::Connected, 0));
        assert_eq!(app.tray_tooltip(now), "Kairos — Synced 09:05");
    }
}
