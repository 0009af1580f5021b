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

/// The database's sync account, as Settings → Sync shows it. Read from the
/// database alone (no network).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SyncAccount {
    /// Joined an account (the fields below are set).
    pub paired: bool,
    /// The server, `ws://HOST:PORT` or `wss://…`.
    pub server: Option<String>,
    /// The account's id.
    pub account: Option<String>,
    /// This device's id on the account.
    pub device: Option<String>,
    /// The name this device joined with in the app; `null` when it joined
    /// from the CLI (the device list has it then).
    pub device_name: Option<String>,
}

/// Settings → Sync → Join.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct JoinRequest {
    /// `ws://HOST:PORT` or `wss://HOST:PORT` (a bare `HOST:PORT` is taken
    /// as `ws://`).
    pub server: String,
    /// The one-time pairing code (`kairos-server invite`, or "Add a
    /// device" on a paired device); case and dashes do not matter.
    pub code: String,
    /// This device's name on the account; empty: the computer's name.
    pub device_name: String,
}

/// A new one-time code for another device ("Add a device").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct PairingCode {
    /// The code, as the other device types it.
    pub code: String,
    /// When it stops working, instant.
    pub expires_at: String,
    /// The server and code in one link (`kairos://join?server=…&code=…`),
    /// what the QR code holds.
    pub link: String,
    /// The QR code of `link`, an SVG document.
    pub qr_svg: String,
}

/// One device of the account (the device list).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct DeviceView {
    /// Its id (for revoke).
    pub device: String,
    /// The name it joined with.
    pub name: String,
    /// When it joined, instant.
    pub created_at: String,
    /// When it last opened a session, instant; `null`: never.
    pub last_seen: Option<String>,
    /// It has a session open now.
    pub connected: bool,
    /// Revoked: its token no longer works.
    pub revoked: bool,
    /// This device.
    pub this_device: bool,
}
