//! What can go wrong, in words that say how to fix it.

use kairos_engine::engine::EngineError;
use kairos_store::StoreError;

/// A CalDAV failure.
#[derive(Debug, thiserror::Error)]
pub enum CaldavError {
    /// 401/403: the server refused the credentials.
    #[error(
        "the server at {url} refused user {user:?} ({status}): check the user name and the \
         password (an app password if the account uses two-step sign-in)"
    )]
    Unauthorized {
        /// The URL asked.
        url: String,
        /// The user name sent.
        user: String,
        /// The HTTP status.
        status: u16,
    },
    /// The server answered, but nothing there speaks CalDAV.
    #[error("{url} is not a CalDAV server: {why}")]
    NotCaldav {
        /// The URL given.
        url: String,
        /// What was tried and what came back.
        why: String,
    },
    /// No connection, a timeout, or a TLS failure.
    #[error("cannot reach {url}: {reason}")]
    Network {
        /// The URL asked.
        url: String,
        /// The underlying failure.
        reason: String,
    },
    /// The server's TLS certificate is not one Kairos can trust.
    #[error(
        "the server at {url} sent a TLS certificate Kairos does not trust: {problem}. Kairos \
         trusts certificates from the public authorities and the account's own CA: if the \
         server's certificate comes from a private CA or is self-signed (a self-hosted server), \
         give that CA's certificate or the server's own (PEM) with `kairos caldav add … --ca FILE.pem` (in the app: \"CA \
         certificate\"); else fix the server's certificate or use its public address"
    )]
    Certificate {
        /// The URL asked.
        url: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A CA certificate given with `--ca` that cannot be used.
    #[error("--ca: {0}")]
    BadCa(String),
    /// The server answered a request with something unusable.
    #[error("{what} at {url} failed: {reason}")]
    Protocol {
        /// The request.
        what: &'static str,
        /// The URL asked.
        url: String,
        /// What came back.
        reason: String,
    },
    /// A URL that cannot be used.
    #[error("bad URL {url:?}: {reason}")]
    BadUrl {
        /// The text given.
        url: String,
        /// Why it is not usable.
        reason: String,
    },
    /// The secret store failed.
    #[error("secret store: {0}")]
    Secret(String),
    /// Something the user named does not exist.
    #[error("{0}")]
    NotFound(String),
    /// A sync interval out of bounds.
    #[error("--every: {0}")]
    BadInterval(String),
    /// The local database.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The reminder engine (applying a server change).
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// Acknowledging a reminder (an `ACKNOWLEDGED` from the server).
    #[error(transparent)]
    Action(#[from] kairos_engine::actions::ActionError),
}

impl CaldavError {
    /// Whether trying again later may work (network trouble), as opposed to
    /// something the person must change.
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        matches!(self, CaldavError::Network { .. })
    }
}

/// This crate's `Result`.
pub type Result<T, E = CaldavError> = std::result::Result<T, E>;
