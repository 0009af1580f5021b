//! The IPC types of CalDAV accounts ("Add calendar → CalDAV account…":
//! sign in, choose calendars; the account's status beside its calendars).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where and as whom to look for calendars (the dialog's first step).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct CaldavLogin {
    /// `https://host/…`, `http://…`, a bare host or an e-mail address
    /// (its domain is looked up: `/.well-known/caldav`, DNS `SRV`).
    pub url: String,
    /// The user name.
    pub user: String,
    /// The password or app password. Never stored in the database: it
    /// goes to the OS secret store (or a 0600 file beside the database
    /// when there is none).
    pub password: String,
    /// A CA certificate (PEM) to trust for this server besides the web's
    /// roots: a self-hosted server whose certificate a private CA signed.
    /// Kept with the account. `null` or absent: the web's roots only.
    #[serde(default)]
    #[ts(optional)]
    pub ca_pem: Option<String>,
}

/// One calendar found on the server, to choose from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct RemoteCalendarView {
    /// Its name on the server (`displayname`, else its path's last part).
    pub name: String,
    /// `#rrggbb` when the server gives a colour.
    pub color: Option<String>,
    /// It holds events (`VEVENT`).
    pub events: bool,
    /// It holds tasks (`VTODO`).
    pub tasks: bool,
}

/// What discovery found: the calendars of the account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct CaldavDiscovery {
    /// The calendar home found (absolute URL).
    pub home: String,
    /// The calendars there, in the server's order.
    pub calendars: Vec<RemoteCalendarView>,
}

/// "Add account": the login and the calendars chosen (by name, at least
/// one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct CaldavAddRequest {
    /// As for [`CaldavLogin`].
    pub url: String,
    /// As for [`CaldavLogin`].
    pub user: String,
    /// As for [`CaldavLogin`].
    pub password: String,
    /// As for [`CaldavLogin`].
    #[serde(default)]
    #[ts(optional)]
    pub ca_pem: Option<String>,
    /// Names of the calendars to sync.
    pub calendars: Vec<String>,
}

/// "Edit account": what to change (each part optional; the checks all
/// pass before anything changes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct CaldavEditRequest {
    /// The account.
    pub id: i64,
    /// The background sync's interval in seconds (2 to 86 400, as
    /// `kairos caldav edit --every`); `null`: unchanged.
    pub every_seconds: Option<i64>,
    /// Calendars to sync from now on (by name).
    pub choose: Vec<String>,
    /// Calendars to stop syncing (by name): their events stay in Kairos,
    /// as ordinary calendars; nothing on the server changes.
    pub unchoose: Vec<String>,
    /// A new password, checked with the server before it replaces the
    /// old one; `null`: unchanged.
    pub password: Option<String>,
    /// A new CA certificate (PEM; a self-hosted server's own self-signed
    /// certificate works too), checked with the server (with the new
    /// password, if one is given) before it replaces the account's;
    /// absent or `null`: unchanged.
    #[serde(default)]
    #[ts(optional)]
    pub ca_pem: Option<String>,
    /// Drop the account's CA certificate: trust the public authorities
    /// only (checked with the server first, as `kairos caldav edit
    /// --no-ca`). Not with `ca_pem`.
    #[serde(default)]
    #[ts(optional)]
    pub no_ca: Option<bool>,
}

/// A calendar of an account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct CaldavCalendarView {
    /// Its name on the server.
    pub name: String,
    /// `#rrggbb` when the server gives one.
    pub color: Option<String>,
    /// The Kairos calendar it syncs into; `null`: not chosen.
    pub calendar_id: Option<i64>,
    /// When it last synced, instant; `null` if never.
    pub synced_at: Option<String>,
}

/// Why an account's sync failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct CaldavProblem {
    /// `caldav_*` (or `internal`), for the UI's words.
    pub kind: super::ErrorKind,
    /// The detail, in English (the server, the status, the step).
    pub message: String,
}

/// One CalDAV account with its calendars and its background sync's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct CaldavAccountView {
    /// The account's id (for "Sync now" and "Remove account").
    pub id: i64,
    /// The URL given when it was added.
    pub url: String,
    /// The user name.
    pub user: String,
    /// Its calendars, chosen or not.
    pub calendars: Vec<CaldavCalendarView>,
    /// The last sync of all chosen calendars that went well, instant;
    /// `null` if none yet (the first one runs in the background).
    pub synced_at: Option<String>,
    /// The last sync's failure (`null` after a success).
    pub last_error: Option<CaldavProblem>,
    /// When it failed, instant.
    pub error_at: Option<String>,
    /// When the background sync runs next, instant; `null` before the
    /// first.
    pub next_sync: Option<String>,
    /// The background sync's interval, seconds.
    pub every_seconds: i64,
    /// It trusts a CA of its own (added with one).
    pub private_ca: bool,
}
