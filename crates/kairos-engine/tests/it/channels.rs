//! Channels deliver, flush, and classify failures the way the retry policy
//! needs.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kairos_engine::channel::{Channel, CommandChannel, Reminder, StdoutChannel};
use kairos_engine::policy::FailureKind;

fn reminder() -> Reminder {
    Reminder {
        key: "work/standup/2026-03-10T08:00:00Z/#0".into(),
        uid: "standup".into(),
        occurrence_start: "2026-03-10T09:00:00+01:00".into(),
        trigger: "2026-03-10T07:55:00Z".into(),
        fired_at: "2026-03-10T07:55:00Z".into(),
        summary: Some("Stand-up".into()),
        location: None,
        calendar: "work".into(),
        status: "on_time",
        repeat: false,
    }
}

#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("lock").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn stdout_writes_one_json_line_per_reminder() {
    let buf = Shared::default();
    let ch = StdoutChannel::to(Box::new(buf.clone()));
    ch.deliver(&reminder()).await.expect("delivered");
    ch.deliver(&reminder()).await.expect("delivered");
    let text = String::from_utf8(buf.0.lock().expect("lock").clone()).expect("utf8");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2);
    let v: serde_json::Value = serde_json::from_str(lines[0]).expect("json");
    assert_eq!(v["key"], "work/standup/2026-03-10T08:00:00Z/#0");
    assert_eq!(v["status"], "on_time");
}

// `cat` and sh quoting: the command line is the platform's shell's.
#[cfg(unix)]
#[tokio::test]
async fn command_gets_the_reminder_on_stdin() {
    let dir = tempfile::tempdir().expect("tmp");
    let out = dir.path().join("got.json");
    let ch = CommandChannel::new(
        format!("cat > '{}'", out.display()),
        Duration::from_secs(10),
    );
    ch.deliver(&reminder()).await.expect("delivered");
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&out).expect("written")).expect("json");
    assert_eq!(v["summary"], "Stand-up");
}

#[tokio::test]
async fn command_failures_are_classified() {
    let cases = [
        ("exit 75", FailureKind::Retryable),
        ("exit 65", FailureKind::Permanent),
        ("no-such-command-kairos", FailureKind::Permanent),
        ("exit 1", FailureKind::Unknown),
        // Killed by a signal (Unix only; `cmd` has no such thing).
        #[cfg(unix)]
        ("kill -9 $$", FailureKind::Unknown),
    ];
    for (cmd, kind) in cases {
        let ch = CommandChannel::new(cmd, Duration::from_secs(10));
        let err = ch.deliver(&reminder()).await.expect_err(cmd);
        assert_eq!(err.kind, kind, "{cmd}: {}", err.message);
    }
}

// `sleep` is a Unix command (`cmd` has no portable sleep).
#[cfg(unix)]
#[tokio::test]
async fn a_hanging_command_times_out_as_retryable() {
    let ch = CommandChannel::new("sleep 30", Duration::from_millis(200));
    let started = std::time::Instant::now();
    let err = ch.deliver(&reminder()).await.expect_err("times out");
    assert_eq!(err.kind, FailureKind::Retryable);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "bounded by the timeout"
    );
}
