//! The IPC type of the sync indicator (status bar, tray tooltip).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What the live sync connection is doing, for the status bar and the
/// tray. Pushed to the UI with the event `SYNC_CHANGED` whenever it
/// changes, and part of [`super::AppStatus`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SyncStatus {
    /// Where the connection is.
    pub state: SyncState,
    /// Last time this device and the server agreed (this run or an
    /// earlier one), instant; `null` if never.
    pub last_sync_at: Option<String>,
    /// `offline` / `error`: since when, instant.
    pub since: Option<String>,
    /// `offline` / `error`: why, one line (the server's words when it
    /// refused).
    pub reason: Option<String>,
    /// Local changes waiting in the outbox to be sent.
    pub waiting: u32,
}

/// The states of [`SyncStatus`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum SyncState {
    /// The database is not paired with a sync account (the indicator is
    /// hidden).
    Off,
    /// Connecting, catching up, or sending what waits.
    Syncing,
    /// Connected and caught up: changes travel at once.
    Synced,
    /// The server cannot be reached; retrying. Changes wait in the outbox.
    Offline,
    /// The server refused (this device revoked, another protocol
    /// version): the person must act.
    Error,
}

impl SyncStatus {
    /// Not paired.
    #[must_use]
    pub fn off() -> Self {
        Self {
            state: SyncState::Off,
            last_sync_at: None,
            since: None,
            reason: None,
            waiting: 0,
        }
    }
}
