//! What the live connection is doing, published as it changes (a
//! `tokio::sync::watch`): hosts subscribe and show it (the desktop app's
//! status bar and tray), nobody polls the database for it.
//!
//! A failure is published the moment the client sees it; a connection that
//! dies silently (no close, no reset: a lost network) is seen within
//! [`crate::live::SILENCE`], because the server pings every 30 s.

use chrono::{DateTime, Utc};
use kairos_store::Store;
use tokio::sync::watch;

use crate::SyncError;

/// Where the live connection is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phase {
    /// No live connection runs: the database is not paired (or left its
    /// account while the client ran).
    NotPaired,
    /// Opening the first session, catching up and pushing.
    Connecting,
    /// A session is open and caught up: changes travel both ways at once.
    Connected,
    /// The last attempt failed in a way that retrying may fix (network,
    /// server down); the client keeps retrying. `since` is when the
    /// connection was first lost, not the last attempt: it stays put
    /// through the retries.
    Offline {
        /// When the connection was lost.
        since: DateTime<Utc>,
        /// The failure, one line.
        reason: String,
    },
    /// The server refused (revoked device, wrong token, another protocol
    /// version): the person must act. The client still tries every 30 s.
    Error {
        /// When it started.
        since: DateTime<Utc>,
        /// The refusal, one line.
        reason: String,
    },
    /// The host stopped the client.
    Stopped,
}

/// The live connection's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkState {
    /// Where the connection is.
    pub phase: Phase,
    /// Last time this device and the server agreed (a session opened and
    /// caught up, a push confirmed, live ops applied).
    pub last_sync_at: Option<DateTime<Utc>>,
    /// Local changes waiting in the outbox.
    pub outbox: u64,
}

impl LinkState {
    /// The state of a host that runs no live connection.
    #[must_use]
    pub fn not_paired() -> Self {
        Self {
            phase: Phase::NotPaired,
            last_sync_at: None,
            outbox: 0,
        }
    }
}

/// The sending side: every change goes through here, and subscribers are
/// woken only when something they can see changed.
pub(crate) struct Publisher(pub watch::Sender<LinkState>);

impl Publisher {
    fn update(&self, f: impl FnOnce(&mut LinkState)) {
        self.0.send_if_modified(|s| {
            let before = s.clone();
            f(s);
            *s != before
        });
    }

    /// What the database remembers from before (the last sync, which may
    /// be from an earlier run; the outbox).
    pub fn load(&self, store: &Store) {
        let last = store
            .meta_get(kairos_engine::sync::keys::LAST_SYNC_AT)
            .ok()
            .flatten()
            .and_then(|t| DateTime::parse_from_rfc3339(&t).ok())
            .map(|t| t.with_timezone(&Utc));
        let outbox = outbox_len(store);
        self.update(|s| {
            s.last_sync_at = last.or(s.last_sync_at);
            s.outbox = outbox.unwrap_or(s.outbox);
        });
    }

    /// A session is being opened: `Connecting` the first time; after a
    /// failure the failure stays shown until a session is open again.
    pub fn connecting(&self) {
        self.update(|s| {
            if matches!(s.phase, Phase::NotPaired | Phase::Stopped) {
                s.phase = Phase::Connecting;
            }
        });
    }

    /// A session is open and caught up.
    pub fn connected(&self, now: DateTime<Utc>, store: &Store) {
        let outbox = outbox_len(store);
        self.update(|s| {
            s.phase = Phase::Connected;
            s.last_sync_at = Some(now);
            s.outbox = outbox.unwrap_or(s.outbox);
        });
    }

    /// Ops were exchanged on the open session.
    pub fn synced(&self, now: DateTime<Utc>, store: &Store) {
        let outbox = outbox_len(store);
        self.update(|s| {
            s.last_sync_at = Some(now);
            s.outbox = outbox.unwrap_or(s.outbox);
        });
    }

    /// The outbox may have changed (a local change while offline).
    pub fn recount(&self, store: &Store) {
        if let Some(n) = outbox_len(store) {
            self.update(|s| s.outbox = n);
        }
    }

    /// A session failed (or could not be opened).
    pub fn failed(&self, e: &SyncError, now: DateTime<Utc>, store: Option<&Store>) {
        let outbox = store.and_then(outbox_len);
        let reason = e.to_string();
        self.update(|s| {
            s.outbox = outbox.unwrap_or(s.outbox);
            s.phase = match (&s.phase, e) {
                (_, SyncError::NotPaired) => Phase::NotPaired,
                // Lost before: keep when, take the newest reason.
                (Phase::Offline { since, .. } | Phase::Error { since, .. }, _) => {
                    failure(e, *since, reason)
                }
                _ => failure(e, now, reason),
            };
        });
    }

    /// The client ended.
    pub fn stopped(&self) {
        self.update(|s| {
            if !matches!(s.phase, Phase::NotPaired) {
                s.phase = Phase::Stopped;
            }
        });
    }
}

fn failure(e: &SyncError, since: DateTime<Utc>, reason: String) -> Phase {
    if e.is_retryable() {
        Phase::Offline { since, reason }
    } else {
        Phase::Error { since, reason }
    }
}

fn outbox_len(store: &Store) -> Option<u64> {
    store.read(|r| r.outbox_len()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().expect("time")
    }

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path().join("k.db")).expect("store");
        (dir, store)
    }

    #[test]
    fn offline_keeps_the_time_it_was_first_lost_through_retries() {
        let (_dir, store) = store();
        let (tx, rx) = watch::channel(LinkState::not_paired());
        let p = Publisher(tx);
        p.connecting();
        assert_eq!(rx.borrow().phase, Phase::Connecting);
        p.connected(at("2026-12-06T09:00:00Z"), &store);
        let down = SyncError::Connection {
            url: "ws://x".into(),
            message: "connection closed".into(),
        };
        p.failed(&down, at("2026-12-06T09:05:00Z"), Some(&store));
        p.connecting();
        let again = SyncError::Timeout(10);
        p.failed(&again, at("2026-12-06T09:06:00Z"), Some(&store));
        let s = rx.borrow().clone();
        assert_eq!(
            s.phase,
            Phase::Offline {
                since: at("2026-12-06T09:05:00Z"),
                reason: again.to_string()
            }
        );
        assert_eq!(s.last_sync_at, Some(at("2026-12-06T09:00:00Z")));
        p.connected(at("2026-12-06T09:07:00Z"), &store);
        assert_eq!(rx.borrow().phase, Phase::Connected);
    }

    #[test]
    fn a_refusal_is_an_error_and_not_paired_is_its_own_state() {
        let (_dir, store) = store();
        let (tx, rx) = watch::channel(LinkState::not_paired());
        let p = Publisher(tx);
        p.connecting();
        let refused = SyncError::Refused {
            url: "ws://x/v1/sync".into(),
            status: 401,
            message: "device revoked".into(),
        };
        p.failed(&refused, at("2026-12-06T09:00:00Z"), Some(&store));
        assert!(matches!(rx.borrow().phase, Phase::Error { .. }));
        p.failed(&SyncError::NotPaired, at("2026-12-06T09:01:00Z"), None);
        assert_eq!(rx.borrow().phase, Phase::NotPaired);
        p.stopped();
        assert_eq!(rx.borrow().phase, Phase::NotPaired);
    }

    #[test]
    fn subscribers_are_not_woken_when_nothing_changed() {
        let (_dir, store) = store();
        let (tx, mut rx) = watch::channel(LinkState::not_paired());
        let p = Publisher(tx);
        rx.borrow_and_update();
        p.recount(&store);
        assert!(!rx.has_changed().expect("open"));
        p.connecting();
        assert!(rx.has_changed().expect("open"));
    }
}
