//! Why the engine stopped or failed: the one error type of this crate,
//! depending on nothing else in it (every module may use it).

use kairos_store::StoreError;

/// Why the engine stopped or failed.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The store failed (locked, full, corrupt, …).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A stored event no longer parses or expands.
    #[error("event {uid:?} in calendar {calendar:?}: {source}")]
    Calendar {
        /// Calendar name.
        calendar: String,
        /// Event UID.
        uid: String,
        /// What the core said.
        source: kairos_core::Error,
    },
    /// A stored component that does not read back: a form of a newer
    /// Kairos, or a damaged row. Nothing was changed.
    #[error("stored event {uid:?} in calendar {calendar:?} does not read back: {message}")]
    Stored {
        /// Calendar name.
        calendar: String,
        /// Event UID.
        uid: String,
        /// What is wrong with it.
        message: String,
    },
    /// The wall-clock timer failed.
    #[error("wall-clock timer: {0}")]
    Timer(String),
    /// Recorded outcomes could not be made durable (the log flush failed).
    #[error("making delivery records durable: {0}")]
    Durability(String),
}
