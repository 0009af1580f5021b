//! What can be wrong with a frame, and how the connection ends because of it.

use std::fmt;

use crate::PROTOCOL_VERSION;

/// How a connection ends: the WebSocket close codes of the protocol
/// (`docs/sync-protocol.md`, "Close codes").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Close {
    /// 1000: a normal end (`joined` sent, the device leaves).
    Normal,
    /// 1001: the server is shutting down.
    GoingAway,
    /// 1009: a frame or message over [`crate::MAX_FRAME`].
    TooBig,
    /// 4400: malformed JSON, unknown `t`, a field out of bounds, an op of
    /// another device.
    BadMessage,
    /// 4401: the device was revoked while connected.
    Revoked,
    /// 4408: no `hello` in time.
    HelloTimeout,
    /// 4409: unsupported protocol version.
    Version,
    /// 4429: over the rate limit.
    RateLimited,
}

impl Close {
    /// The numeric close code sent in the close frame.
    #[must_use]
    pub fn code(self) -> u16 {
        match self {
            Self::Normal => 1000,
            Self::GoingAway => 1001,
            Self::TooBig => 1009,
            Self::BadMessage => 4400,
            Self::Revoked => 4401,
            Self::HelloTimeout => 4408,
            Self::Version => 4409,
            Self::RateLimited => 4429,
        }
    }

    /// The close code's meaning, if it is one of ours.
    #[must_use]
    pub fn from_code(code: u16) -> Option<Self> {
        [
            Self::Normal,
            Self::GoingAway,
            Self::TooBig,
            Self::BadMessage,
            Self::Revoked,
            Self::HelloTimeout,
            Self::Version,
            Self::RateLimited,
        ]
        .into_iter()
        .find(|c| c.code() == code)
    }

    /// The `code` of the `error` message sent before closing this way.
    #[must_use]
    pub fn error_code(self) -> &'static str {
        match self {
            Self::Normal => "bye",
            Self::GoingAway => "shutting_down",
            Self::TooBig => "too_big",
            Self::BadMessage => "bad_message",
            Self::Revoked => "revoked",
            Self::HelloTimeout => "hello_timeout",
            Self::Version => "unsupported_version",
            Self::RateLimited => "rate_limited",
        }
    }

    /// Whether a device should connect again (after its backoff) when the
    /// server closed this way. 4401 and 4409 will not change by retrying;
    /// 4400 means a bug on one side, retrying would loop.
    #[must_use]
    pub fn is_retryable(self) -> bool {
        matches!(
            self,
            Self::GoingAway | Self::HelloTimeout | Self::RateLimited | Self::TooBig
        )
    }
}

/// Which side sent the frame being decoded (for messages that name it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    /// A device sent it; the server is decoding.
    Device,
    /// The server sent it; a device is decoding.
    Server,
}

impl Peer {
    fn us(self) -> &'static str {
        match self {
            Self::Device => "server",
            Self::Server => "device",
        }
    }
    fn them(self) -> &'static str {
        match self {
            Self::Device => "device",
            Self::Server => "server",
        }
    }
}

/// A frame that cannot be accepted. Each carries the close code to end the
/// connection with ([`ProtoError::close`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtoError {
    /// The frame is over [`crate::MAX_FRAME`] bytes.
    #[error("message of {len} bytes is over the limit of {max} bytes")]
    TooBig {
        /// Its length in bytes.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The peer speaks another major version.
    #[error("{}", version_message(*.ours, *.theirs, *.from))]
    Version {
        /// Ours, [`PROTOCOL_VERSION`].
        ours: u64,
        /// The frame's `v`.
        theirs: u64,
        /// Who sent the frame.
        from: Peer,
    },
    /// Not JSON, not an object, no `v`/`t`, a missing or mistyped field.
    #[error("malformed message: {0}")]
    Malformed(String),
    /// A `t` this side does not accept.
    #[error("unknown message type {0:?}")]
    UnknownType(String),
    /// A field out of the protocol's bounds; the text names the field.
    #[error("{0}")]
    Invalid(String),
}

fn version_message(ours: u64, theirs: u64, from: Peer) -> String {
    format!(
        "{} speaks sync v{ours}, {} sent v{theirs}",
        from.us(),
        from.them()
    )
}

impl ProtoError {
    /// How to close the connection because of this error.
    #[must_use]
    pub fn close(&self) -> Close {
        match self {
            Self::TooBig { .. } => Close::TooBig,
            Self::Version { .. } => Close::Version,
            Self::Malformed(_) | Self::UnknownType(_) | Self::Invalid(_) => Close::BadMessage,
        }
    }

    /// The numeric close code: `self.close().code()`.
    #[must_use]
    pub fn close_code(&self) -> u16 {
        self.close().code()
    }

    /// The version error a side reports when a peer sends `theirs`.
    #[must_use]
    pub fn version(theirs: u64, from: Peer) -> Self {
        Self::Version {
            ours: PROTOCOL_VERSION,
            theirs,
            from,
        }
    }
}

/// A close frame's reason is at most 123 bytes (RFC 6455 §5.5): `text`
/// cut at a character boundary to fit. The full text goes in the `error`
/// message sent before the close.
#[must_use]
pub fn close_reason(text: &str) -> &str {
    const MAX: usize = 123;
    if text.len() <= MAX {
        return text;
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Shown in logs: the close code and what it means.
impl fmt::Display for Close {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.code(), self.error_code())
    }
}
