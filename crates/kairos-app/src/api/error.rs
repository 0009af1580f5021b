//! Errors as they cross IPC.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// An error as it crosses IPC: what kind, and a message for a person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    /// What went wrong, for code to branch on.
    pub kind: ErrorKind,
    /// What went wrong and what to do, for a person.
    pub message: String,
}

/// Classes of [`ApiError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The request itself is wrong (a field names what).
    Invalid,
    /// What the request names does not exist (any more).
    NotFound,
    /// The database is busy, full, read-only or damaged.
    Store,
    /// A file could not be read or written.
    Io,
    /// A bug or an unexpected state.
    Internal,
    /// Sync: the server URL is not `ws://HOST:PORT` / `wss://HOST:PORT`.
    SyncBadUrl,
    /// Sync: nothing answers at that address (wrong host or port, server
    /// down, no network).
    SyncUnreachable,
    /// Sync: the server took the connection and did not answer in time.
    SyncTimeout,
    /// Sync: the server's TLS certificate is not trusted.
    SyncTls,
    /// Sync: something answered, but not a Kairos sync server.
    SyncNotKairos,
    /// Sync: a Kairos server of another protocol version.
    SyncVersion,
    /// Sync: no such pairing code.
    SyncCodeWrong,
    /// Sync: the pairing code was used already.
    SyncCodeUsed,
    /// Sync: the pairing code expired.
    SyncCodeExpired,
    /// Sync: this device was revoked (or its token is unknown).
    SyncRevoked,
    /// Sync: the database is not paired.
    SyncNotPaired,
    /// Sync: the database is paired already (leave first).
    SyncAlreadyPaired,
    /// Sync: the server refused for another reason (rate limit, its own
    /// failure): the message says.
    SyncServer,
    /// Subscription: not an `http://`, `https://` or `webcal://` address.
    FeedUrl,
    /// Subscription: the server cannot be reached (name, connection, TLS).
    FeedUnreachable,
    /// Subscription: no complete answer in time.
    FeedTimeout,
    /// Subscription: the server answered with an error status (or
    /// redirected in a loop).
    FeedHttp,
    /// Subscription: the feed is over the size limit.
    FeedTooLarge,
    /// Subscription: not a calendar (empty, a web page, unreadable).
    FeedNotCalendar,
    /// Subscription: the calendar named has events of its own.
    FeedCalendarInUse,
    /// CalDAV: the server refused the user name or password (401/403).
    CaldavUnauthorized,
    /// CalDAV: something answered, but nothing there speaks CalDAV.
    CaldavNotCaldav,
    /// CalDAV: nothing answers at that address (name, connection).
    CaldavUnreachable,
    /// CalDAV: the server's TLS certificate is not trusted.
    CaldavTls,
    /// CalDAV: the server took the connection and did not answer in time.
    CaldavTimeout,
    /// CalDAV: not a usable `http(s)://` URL, host or e-mail address.
    CaldavBadUrl,
    /// CalDAV: the password could not be kept in (or read from) the
    /// secret store.
    CaldavSecret,
    /// CalDAV: the server answered a step with something unusable.
    CaldavServer,
}
