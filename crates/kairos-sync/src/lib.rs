//! The device's sync client: pairs a database with an account on a
//! `kairos-server`, pushes its outbox, pulls what other devices did from its
//! cursor, and — in a daemon — keeps a live connection that applies ops the
//! moment they arrive (`docs/sync-protocol.md`).
//!
//! It owns the connection and nothing else: what an op *means* is
//! `kairos-engine`'s ([`kairos_engine::sync`]), what is on the wire is
//! `kairos-proto`'s. The store is blocking, so the live client runs on its
//! own thread with its own runtime ([`live::spawn`]), and publishes what
//! it is doing ([`LinkState`]: connecting, connected, offline since,
//! refused; the outbox's length) on a `watch` for hosts to show.
//!
//! The cursor is the truth; a live push is a fast path: every session
//! starts with a catch-up from the cursor, so a device that missed pushes
//! (offline for weeks, or killed) gets everything at its next connection.

pub mod commands;
mod conn;
pub mod live;
mod session;
pub mod state;

use kairos_engine::engine::EngineError;
use kairos_store::StoreError;

pub use commands::{Status, devices, join, leave, now, pair, push_outbox, revoke, status};
pub use conn::{CA_META, Tls};
pub use session::Applier;
pub use state::{LinkState, Phase};

/// Why a sync step failed.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// The database has not joined an account.
    #[error(
        "this database is not paired with a sync account: run `kairos sync join URL CODE` first"
    )]
    NotPaired,
    /// The server URL is not `ws://HOST[:PORT]` or `wss://…`.
    #[error("bad server URL {0:?}: expected ws://HOST:PORT or wss://HOST:PORT")]
    BadUrl(String),
    /// The server refused the request before the WebSocket upgrade (a
    /// wrong, expired or used code; a wrong or revoked token).
    #[error("{url}: refused (HTTP {status}): {message}")]
    Refused {
        /// What was asked.
        url: String,
        /// The HTTP status (401, 404, …).
        status: u16,
        /// The server's reason.
        message: String,
    },
    /// The connection failed or broke.
    #[error("{url}: {message}")]
    Connection {
        /// The server.
        url: String,
        /// What happened.
        message: String,
    },
    /// The server closed the session with a code and reason.
    #[error("the server closed the connection ({code}): {reason}")]
    Closed {
        /// WebSocket close code (see the protocol's table).
        code: u16,
        /// Its reason.
        reason: String,
    },
    /// The server sent something the protocol does not allow here.
    #[error("protocol error: {0}")]
    Protocol(String),
    /// No answer in time.
    #[error("no answer from the server within {0} s")]
    Timeout(u64),
    /// The server answered with an error message.
    #[error("the server says {code}: {message}")]
    Server {
        /// Its code.
        code: String,
        /// Its words.
        message: String,
    },
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Applying ops failed.
    #[error(transparent)]
    Engine(#[from] EngineError),
}

impl SyncError {
    /// Whether trying again later may work (a network problem, a restart of
    /// the server) — as opposed to a refusal that needs the person.
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Connection { .. } | Self::Timeout(_) | Self::Store(_) => true,
            Self::Closed { code, .. } => !matches!(code, 4400 | 4401 | 4409),
            Self::Server { .. } => self.is_rate_limited(),
            _ => false,
        }
    }

    /// The server refused more for now (over its rate limit: the `error`
    /// message `rate_limited`, or the close 4429 that follows it).
    #[must_use]
    pub fn is_rate_limited(&self) -> bool {
        match self {
            Self::Closed { code, .. } => *code == 4429,
            Self::Server { code, .. } => code == "rate_limited",
            _ => false,
        }
    }
}
