//! Turning every lower-level error into an [`ApiError`] `{kind, message}`.

use kairos_store::StoreError;

use crate::api::{ApiError, ErrorKind};

/// Result of every [`crate::App`] method.
pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    /// A request field is wrong; `message` names it.
    #[must_use]
    pub fn invalid(message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Invalid,
            message: message.into(),
        }
    }

    /// What the request names does not exist.
    #[must_use]
    pub fn not_found(message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::NotFound,
            message: message.into(),
        }
    }

    /// A file could not be read or written.
    #[must_use]
    pub fn io(message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Io,
            message: message.into(),
        }
    }

    /// Unexpected.
    #[must_use]
    pub fn internal(message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Internal,
            message: message.into(),
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        let kind = match e.kind() {
            kairos_store::ErrorKind::NotFound => ErrorKind::NotFound,
            _ => ErrorKind::Store,
        };
        Self {
            kind,
            message: e.to_string(),
        }
    }
}

impl From<kairos_engine::engine::EngineError> for ApiError {
    fn from(e: kairos_engine::engine::EngineError) -> Self {
        match e {
            kairos_engine::engine::EngineError::Store(s) => s.into(),
            other => Self::invalid(other.to_string()),
        }
    }
}
