//! Why a subscription could not be refreshed, in words that say what is
//! wrong. Each is recorded as the subscription's last error, and the
//! calendar keeps its last good copy.

use kairos_engine::engine::EngineError;
use kairos_store::StoreError;

/// A refresh (or subscribe) that failed.
#[derive(Debug, thiserror::Error)]
pub enum FeedError {
    /// The URL is not one Kairos can fetch.
    #[error("{url:?} is not a feed URL: {why}")]
    Url {
        /// As given.
        url: String,
        /// What is wrong.
        why: String,
    },
    /// A refresh interval out of range.
    #[error("refresh interval of {minutes} min is out of range (5 min to 7 days)")]
    Every {
        /// As asked, in minutes.
        minutes: i64,
    },
    /// The HTTP client could not be built.
    #[error("cannot start the HTTP client: {0}")]
    Client(String),
    /// The server answered with an error status.
    #[error("the server answered HTTP {status} {reason}")]
    Status {
        /// The status code.
        status: u16,
        /// Its reason phrase.
        reason: String,
    },
    /// Redirects went round or were too many.
    #[error("too many redirects (more than {max}; a redirect loop?)")]
    Redirects {
        /// The limit.
        max: usize,
    },
    /// No complete answer in time.
    #[error("no complete answer within {secs} s (timed out)")]
    Timeout {
        /// The limit.
        secs: f64,
    },
    /// The server could not be reached.
    #[error("cannot connect: {0}")]
    Connect(String),
    /// The body could not be read or decoded (e.g. broken gzip).
    #[error("cannot read the answer: {0}")]
    Body(String),
    /// Another transport failure.
    #[error("HTTP request failed: {0}")]
    Transport(String),
    /// The body is over the size limit (reading stopped there).
    #[error("the feed is larger than the {} MiB limit (reading stopped there)", limit >> 20)]
    TooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// An empty body.
    #[error("the server sent an empty body, not a calendar")]
    Empty,
    /// An HTML page where a calendar was expected.
    #[error("the server sent a web page (HTML), not a calendar{}", type_note(.content_type.as_deref()))]
    Html {
        /// The `Content-Type` it declared.
        content_type: Option<String>,
    },
    /// Not iCalendar, or nothing in it could be read.
    #[error("not a calendar: {0}")]
    NotCalendar(String),
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Storing the events failed.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// No subscription of that name.
    #[error("no subscription called {0:?} (see `kairos subscriptions`)")]
    Unknown(String),
    /// The calendar holds events that did not come from a feed.
    #[error(
        "calendar {0:?} already has events of its own; a subscription replaces a calendar's \
         content: choose another --calendar"
    )]
    CalendarInUse(String),
}

fn type_note(t: Option<&str>) -> String {
    t.map(|t| format!(" (Content-Type: {t})"))
        .unwrap_or_default()
}
