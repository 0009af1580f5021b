//! The one error type of the core, and the explicit limits that bound every input.

/// Everything that can go wrong reading or expanding a calendar.
///
/// Messages are written for the person who has to fix the file: they name the
/// line, the property and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A content line or component structure that is not iCalendar.
    #[error("line {line}: {message}")]
    Syntax {
        /// 1-based line in the input.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A property whose value or parameters are wrong.
    #[error("line {line}: {property}: {message}")]
    Property {
        /// 1-based line in the input.
        line: usize,
        /// The property at fault, e.g. `DTSTART`.
        property: String,
        /// What is wrong.
        message: String,
    },
    /// An input or result larger than [`Limits`] allows.
    #[error("limit exceeded: {0}")]
    Limit(String),
    /// A query argument that cannot be answered (e.g. an inverted window).
    #[error("invalid query: {0}")]
    Query(String),
}

impl Error {
    pub(crate) fn syntax(line: usize, message: impl Into<String>) -> Self {
        Self::Syntax {
            line,
            message: message.into(),
        }
    }

    pub(crate) fn property(line: usize, property: &str, message: impl Into<String>) -> Self {
        Self::Property {
            line,
            property: property.to_owned(),
            message: message.into(),
        }
    }
}

/// Bounds on input size and query work. Every bound, when hit, gives an
/// [`Error::Limit`] that names it; nothing is silently truncated.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest accepted file.
    pub max_file_bytes: usize,
    /// Longest unfolded content line (attachments inline are the long ones).
    pub max_line_bytes: usize,
    /// Most components (`BEGIN`s) in one file.
    pub max_components: usize,
    /// Deepest component nesting (VCALENDAR > VEVENT > VALARM is 3).
    pub max_depth: usize,
    /// Most results one query may return.
    pub max_results: usize,
    /// Most recurrence candidates one event may generate while answering one query
    /// (guards `FREQ=SECONDLY` and huge `COUNT`s far from the window).
    pub max_steps_per_event: usize,
    /// Largest `REPEAT` of an alarm.
    pub max_alarm_repeat: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_file_bytes: 64 << 20,
            max_line_bytes: 16 << 20,
            max_components: 500_000,
            max_depth: 16,
            max_results: 200_000,
            max_steps_per_event: 2_000_000,
            max_alarm_repeat: 1_000,
        }
    }
}
