//! Where a reminder goes when it fires. A [`Channel`] delivers one
//! [`Reminder`] and says how it went; the engine records the outcome and
//! decides about retries ([`crate::policy`]). Implementations here: `stdout`
//! (JSON lines) and `command` (a user command, the reminder as JSON on its
//! stdin). The desktop app's OS-notification channel implements the same trait.

use std::future::Future;
use std::io::Write;
use std::pin::Pin;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use tokio::io::AsyncWriteExt;

use crate::platform::shell;
use crate::policy::FailureKind;

/// A channel's time limit per delivery unless it sets its own
/// ([`Channel::timeout`]).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The default time limit of a [`CommandChannel`] (`kairos daemon
/// --sink-timeout` changes it).
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

/// What a channel is told about a reminder that fires.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reminder {
    /// Stable instance key: the same reminder always has the same key, so a
    /// consumer can drop a repeat delivered after a crash.
    pub key: String,
    /// Event `UID`.
    pub uid: String,
    /// Start of the occurrence, RFC 3339 in the event's zone (or a date).
    pub occurrence_start: String,
    /// When it was due, UTC.
    pub trigger: String,
    /// When it actually fired, UTC.
    pub fired_at: String,
    /// The event's summary.
    pub summary: Option<String>,
    /// The event's location.
    pub location: Option<String>,
    /// The calendar it belongs to.
    pub calendar: String,
    /// `on_time`, `late` or `missed` (fell due while Kairos was not running).
    pub status: &'static str,
    /// This channel may have been given this reminder before, by an engine
    /// that died (SIGKILL, crash) before recording the outcome: a consumer
    /// should replace what it showed for `key`, not show it again. Written
    /// only when true (`"repeat":true`); absent means a first delivery.
    #[serde(skip_serializing_if = "is_false")]
    pub repeat: bool,
}

// serde's `skip_serializing_if` passes a reference.
#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_false(b: &bool) -> bool {
    !*b
}

/// Why a reminder shown here is taken back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WithdrawReason {
    /// Dismissed (on another device, or here by another window).
    Dismissed,
    /// Snoozed: it comes back at the snooze's time.
    Snoozed,
    /// Its task was marked done (here or on another device).
    Done,
    /// Its event (the whole series) or its calendar was deleted, here or on
    /// another device.
    Deleted,
}

/// A reminder a channel showed that must be taken back: it was
/// acknowledged elsewhere.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Withdrawal {
    /// The key of the instance that was shown.
    #[serde(rename = "withdrawn")]
    pub key: String,
    /// The device that acknowledged it.
    pub by: String,
    /// Dismissed or snoozed.
    pub reason: WithdrawReason,
}

/// A failed delivery, classified.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct DeliveryError {
    /// Retry or not.
    pub kind: FailureKind,
    /// What happened, for the audit log.
    pub message: String,
}

impl DeliveryError {
    /// A failure of `kind`, saying `message`.
    pub fn new(kind: FailureKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}

/// The future a channel returns.
pub type Delivery<'a> = Pin<Box<dyn Future<Output = Result<(), DeliveryError>> + Send + 'a>>;

/// A way to tell a person.
pub trait Channel: Send + Sync {
    /// Short stable name (`stdout`, `command`, `notification`), stored with
    /// each delivery: a reminder is delivered once per channel.
    fn name(&self) -> &str;

    /// Delivers one reminder. The engine runs the deliveries of all
    /// channels, and of other reminders, concurrently, and gives up on one
    /// after [`Channel::timeout`] (a failed, retryable attempt).
    fn deliver<'a>(&'a self, reminder: &'a Reminder) -> Delivery<'a>;

    /// How long one delivery may take before the engine gives up on it and
    /// records a timeout (retried with backoff, [`crate::policy`]).
    /// [`DEFAULT_TIMEOUT`] unless the channel says otherwise.
    fn timeout(&self) -> Duration {
        DEFAULT_TIMEOUT
    }

    /// Takes back a reminder this channel delivered (a notification is
    /// closed). Best effort: what cannot be taken back (a command that ran)
    /// is left alone, which is the default.
    fn withdraw(&self, withdrawal: &Withdrawal) {
        let _ = withdrawal;
    }
}

/// One JSON object per line, flushed before `deliver` returns: once the
/// engine records the delivery, the line has left the process.
pub struct StdoutChannel {
    out: Arc<Mutex<Box<dyn Write + Send>>>,
}

impl StdoutChannel {
    /// Writes to the process's standard output.
    #[must_use]
    pub fn stdout() -> Self {
        Self::to(Box::new(std::io::stdout()))
    }

    /// Writes to any writer (tests).
    #[must_use]
    pub fn to(out: Box<dyn Write + Send>) -> Self {
        Self {
            out: Arc::new(Mutex::new(out)),
        }
    }
}

impl Channel for StdoutChannel {
    fn name(&self) -> &str {
        "stdout"
    }

    fn deliver<'a>(&'a self, reminder: &'a Reminder) -> Delivery<'a> {
        Box::pin(async move {
            let line = serde_json::to_string(reminder).map_err(|e| {
                DeliveryError::new(
                    FailureKind::Permanent,
                    format!("cannot encode reminder: {e}"),
                )
            })?;
            let mut out = self
                .out
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            // A closed stdout (EPIPE) will not come back by retrying soon,
            // but may after a restart: retryable, bounded by max_attempts.
            writeln!(out, "{line}")
                .and_then(|()| out.flush())
                .map_err(|e| {
                    DeliveryError::new(FailureKind::Retryable, format!("writing to stdout: {e}"))
                })
        })
    }

    /// One line: `{"withdrawn":KEY,"by":DEVICE,"reason":"dismissed"|"snoozed"}`.
    fn withdraw(&self, withdrawal: &Withdrawal) {
        let Ok(line) = serde_json::to_string(withdrawal) else {
            return;
        };
        let mut out = self
            .out
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let _ = writeln!(out, "{line}").and_then(|()| out.flush());
    }
}

/// Runs `sh -c COMMAND` (`cmd /C COMMAND` on Windows: [`shell`]) with the
/// reminder as JSON on stdin.
///
/// Exit 0 is delivered; exit 75 (`EX_TEMPFAIL`) and a timeout are retryable;
/// exits 64–78 (sysexits, other than 75) and a command that cannot start are
/// permanent; any other exit is unknown (retried a few times).
pub struct CommandChannel {
    command: String,
    timeout: Duration,
}

impl CommandChannel {
    /// A command with a time limit.
    #[must_use]
    pub fn new(command: impl Into<String>, timeout: Duration) -> Self {
        Self {
            command: command.into(),
            timeout,
        }
    }
}

impl Channel for CommandChannel {
    fn name(&self) -> &str {
        "command"
    }

    fn timeout(&self) -> Duration {
        self.timeout
    }

    fn deliver<'a>(&'a self, reminder: &'a Reminder) -> Delivery<'a> {
        Box::pin(async move {
            let json = serde_json::to_vec(reminder).map_err(|e| {
                DeliveryError::new(
                    FailureKind::Permanent,
                    format!("cannot encode reminder: {e}"),
                )
            })?;
            let mut child = shell::command(&self.command)
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .kill_on_drop(true)
                .spawn()
                .map_err(|e| {
                    DeliveryError::new(
                        FailureKind::Permanent,
                        format!("cannot start {}: {e}", shell::NAME),
                    )
                })?;
            let run = async {
                if let Some(mut stdin) = child.stdin.take() {
                    // A command that ignores its input closes the pipe early:
                    // that is its business, not a failure.
                    let _ = stdin.write_all(&json).await;
                    let _ = stdin.write_all(b"\n").await;
                }
                child.wait().await
            };
            let status = match tokio::time::timeout(self.timeout, run).await {
                Err(_) => {
                    return Err(DeliveryError::new(
                        FailureKind::Retryable,
                        format!("command timed out after {:?}", self.timeout),
                    ));
                }
                Ok(Err(e)) => {
                    return Err(DeliveryError::new(
                        FailureKind::Unknown,
                        format!("waiting for command: {e}"),
                    ));
                }
                Ok(Ok(status)) => status,
            };
            match status.code() {
                Some(0) => Ok(()),
                Some(75) => Err(DeliveryError::new(
                    FailureKind::Retryable,
                    "command exited 75 (temporary failure)",
                )),
                Some(c) if c == shell::NOT_FOUND => Err(DeliveryError::new(
                    FailureKind::Permanent,
                    format!("command not found (exit {c})"),
                )),
                Some(c @ 64..=78) => Err(DeliveryError::new(
                    FailureKind::Permanent,
                    format!("command exited {c}"),
                )),
                Some(c) => Err(DeliveryError::new(
                    FailureKind::Unknown,
                    format!("command exited {c}"),
                )),
                None => Err(DeliveryError::new(
                    FailureKind::Unknown,
                    "command was killed by a signal",
                )),
            }
        })
    }
}
