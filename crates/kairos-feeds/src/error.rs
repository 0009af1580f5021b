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

/// What kind of problem a [`FeedError`] is, for a person (the desktop
/// words each kind in its languages; the message keeps the detail).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Not an address Kairos can fetch (scheme, host).
    Url,
    /// The server could not be reached (name, connection, TLS).
    Unreachable,
    /// No complete answer in time.
    Timeout,
    /// The server answered with an error status, or redirects went round.
    Http,
    /// The body is over the size limit.
    TooLarge,
    /// Empty, an HTML page, garbage, or unreadable.
    NotCalendar,
    /// The calendar has events of its own.
    CalendarInUse,
    /// Anything else (the interval, the database, a bug).
    Other,
}

/// The start of each kind's message, as `Display` above writes it: a
/// recorded last error (text in the store) is classified by it. Writer
/// and reader of that text sit side by side here, and a test checks every
/// variant round-trips.
const PREFIXES: [(&str, Kind); 11] = [
    ("cannot connect:", Kind::Unreachable),
    ("HTTP request failed:", Kind::Unreachable),
    ("the server answered HTTP", Kind::Http),
    ("too many redirects", Kind::Http),
    ("no complete answer within", Kind::Timeout),
    ("the feed is larger than", Kind::TooLarge),
    ("cannot read the answer:", Kind::NotCalendar),
    ("the server sent an empty body", Kind::NotCalendar),
    ("the server sent a web page", Kind::NotCalendar),
    ("not a calendar:", Kind::NotCalendar),
    ("calendar ", Kind::CalendarInUse),
];

impl Kind {
    /// The kind of a recorded last error (the text a [`FeedError`] wrote).
    #[must_use]
    pub fn of_message(text: &str) -> Self {
        if text.starts_with('"') && text.contains("is not a feed URL") {
            return Self::Url;
        }
        PREFIXES
            .iter()
            .find(|(p, k)| {
                text.starts_with(p)
                    && (*k != Self::CalendarInUse || text.contains("events of its own"))
            })
            .map_or(Self::Other, |(_, k)| *k)
    }
}

impl FeedError {
    /// Its [`Kind`].
    #[must_use]
    pub fn kind(&self) -> Kind {
        match self {
            Self::Url { .. } => Kind::Url,
            Self::Connect(_) | Self::Transport(_) => Kind::Unreachable,
            Self::Timeout { .. } => Kind::Timeout,
            Self::Status { .. } | Self::Redirects { .. } => Kind::Http,
            Self::TooLarge { .. } => Kind::TooLarge,
            Self::Empty | Self::Html { .. } | Self::NotCalendar(_) | Self::Body(_) => {
                Kind::NotCalendar
            }
            Self::CalendarInUse(_) => Kind::CalendarInUse,
            Self::Every { .. }
            | Self::Client(_)
            | Self::Store(_)
            | Self::Engine(_)
            | Self::Unknown(_) => Kind::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{FeedError, Kind};

    /// A recorded message is classified as the error that wrote it.
    #[test]
    fn every_message_reads_back_as_its_kind() {
        let all = [
            FeedError::Url {
                url: "ftp://x".into(),
                why: "scheme".into(),
            },
            FeedError::Every { minutes: 1 },
            FeedError::Client("x".into()),
            FeedError::Status {
                status: 500,
                reason: "Internal Server Error".into(),
            },
            FeedError::Redirects { max: 5 },
            FeedError::Timeout { secs: 60.0 },
            FeedError::Connect("refused".into()),
            FeedError::Body("gzip".into()),
            FeedError::Transport("reset".into()),
            FeedError::TooLarge { limit: 32 << 20 },
            FeedError::Empty,
            FeedError::Html { content_type: None },
            FeedError::NotCalendar("no VCALENDAR".into()),
            FeedError::Unknown("Team".into()),
            FeedError::CalendarInUse("Team".into()),
        ];
        for e in all {
            assert_eq!(Kind::of_message(&e.to_string()), e.kind(), "{e}");
        }
        assert_eq!(Kind::of_message("calendar \"x\" is odd"), Kind::Other);
    }
}
