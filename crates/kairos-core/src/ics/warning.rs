//! What a lenient read did instead of refusing the file, and the one switch
//! between strict and lenient reading.
//!
//! Both modes run the same code: every place that meets a problem it can
//! repair hands the error strict reading has always given to a [`Sink`]. In
//! strict mode the sink returns it (today's exact error); in lenient mode it
//! records a [`Warning`] saying what was wrong and what was done instead, and
//! the caller carries out the repair.

use std::fmt;

use crate::error::Error;

/// One problem a lenient read repaired or skipped.
///
/// Displayed as `line 12 (VEVENT uid x@y): DTEND: DTEND is before DTSTART:
/// treated as zero length`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Warning {
    /// 1-based line of the problem in the input.
    pub line: usize,
    /// The `UID` of the event it belongs to, when known.
    pub uid: Option<String>,
    /// The component it was found in (`VEVENT`, `VALARM`, `VTIMEZONE`,
    /// `VCALENDAR`).
    pub component: String,
    /// What was wrong.
    pub problem: String,
    /// What was done instead of refusing the file.
    pub action: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {} ({}", self.line, self.component)?;
        if let Some(uid) = &self.uid {
            write!(f, " uid {uid}")?;
        }
        write!(f, "): {}: {}", self.problem, self.action)
    }
}

/// Where a problem was found: the component and, inside an event, its UID.
#[derive(Debug, Clone, Copy)]
pub(crate) struct At<'a> {
    pub component: &'a str,
    pub uid: Option<&'a str>,
}

impl<'a> At<'a> {
    pub(crate) const CALENDAR: At<'static> = At {
        component: "VCALENDAR",
        uid: None,
    };

    pub(crate) fn new(component: &'a str, uid: Option<&'a str>) -> Self {
        Self { component, uid }
    }
}

/// The reading mode and the warnings collected so far.
#[derive(Debug, Default)]
pub(crate) struct Sink {
    strict: bool,
    warnings: Vec<Warning>,
}

impl Sink {
    pub(crate) fn strict() -> Self {
        Self {
            strict: true,
            warnings: Vec::new(),
        }
    }

    pub(crate) fn lenient() -> Self {
        Self::default()
    }

    pub(crate) fn is_strict(&self) -> bool {
        self.strict
    }

    pub(crate) fn into_warnings(self) -> Vec<Warning> {
        self.warnings
    }

    /// A problem strict reading rejects with `err`. Strict: `Err(err)`.
    /// Lenient: records it with `action` (what the caller does instead) and
    /// returns `Ok`. Limits are never repaired: they are errors in both modes.
    pub(crate) fn repair(&mut self, err: Error, at: At<'_>, action: &str) -> Result<(), Error> {
        if self.strict || matches!(err, Error::Limit(_) | Error::Query(_)) {
            return Err(err);
        }
        let (line, problem) = match err {
            Error::Syntax { line, message } => (line, message),
            Error::Property {
                line,
                property,
                message,
            } => (line, format!("{property}: {message}")),
            Error::Limit(m) | Error::Query(m) => (0, m),
        };
        self.push(line, at, problem, action);
        Ok(())
    }

    /// A problem strict reading has always accepted: both modes handle it the
    /// same way; lenient reading also reports it.
    /// (`problem` is only formatted when it is recorded: strict reading of a
    /// file with thousands of such notes pays nothing for them.)
    pub(crate) fn note(
        &mut self,
        line: usize,
        at: At<'_>,
        problem: impl FnOnce() -> String,
        action: &str,
    ) {
        if !self.strict {
            self.push(line, at, problem(), action);
        }
    }

    /// A problem both modes accept but must not pass over in silence (a
    /// choice the file leaves open): recorded in both modes.
    pub(crate) fn warn(&mut self, line: usize, at: At<'_>, problem: String, action: &str) {
        self.push(line, at, problem, action);
    }

    fn push(&mut self, line: usize, at: At<'_>, problem: String, action: &str) {
        self.warnings.push(Warning {
            line,
            uid: at.uid.map(str::to_owned),
            component: at.component.to_owned(),
            problem,
            action: action.to_owned(),
        });
    }
}
