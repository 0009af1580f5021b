//! The real daemon delivering to stdout and a command at once (Unix: a
//! shell script, a named pipe, signals): a command that hangs holds back
//! neither stdout's delivery of the same reminder nor the next reminder;
//! its timeout is recorded and the command alone is retried, marked
//! `repeat`; a SIGKILL while it hangs repeats only that attempt.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use chrono::Utc;

use crate::daemon::{Daemon, kairos, spawn};

/// A test directory with a named pipe the command writes to, and the
/// script: it reports each reminder on the pipe; the first time it is
/// given one whose summary is `Hang`, it reports `started` and hangs
/// (recording its PID, so a daemon killed with SIGKILL does not leave it
/// behind).
struct Rig {
    dir: tempfile::TempDir,
    db: PathBuf,
    /// Lines the command wrote to the pipe.
    said: mpsc::Receiver<String>,
}

impl Drop for Rig {
    fn drop(&mut self) {
        // Only our own `sleep 1000` (its PID may have been reused since).
        let Ok(pid) = std::fs::read_to_string(self.dir.path().join("hung.pid")) else {
            return;
        };
        let pid = pid.trim();
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if cmdline == b"sleep\x001000\x00" {
            let _ = Command::new("kill").args(["-KILL", pid]).status();
        }
    }
}

fn rig(events: &[(&str, i64)]) -> Rig {
    let dir = tempfile::tempdir().expect("tmp");
    let d = dir.path();
    let fifo = d.join("said");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo")
            .success()
    );
    let script = format!(
        r#"input=$(cat)
case "$input" in
  *'"summary":"Hang"'*)
    if [ ! -e '{d}/hung.pid' ]; then
      echo $$ > '{d}/hung.pid'
      echo started > '{d}/said'
      exec sleep 1000
    fi ;;
esac
printf '%s\n' "$input" > '{d}/said'
"#,
        d = d.display()
    );
    std::fs::write(d.join("cmd.sh"), script).expect("script");
    // Whole seconds from now, so a trigger is never in the past.
    let base = Utc::now().timestamp() + 1;
    let mut ics = String::from("BEGIN:VCALENDAR\r\n");
    for (summary, secs) in events {
        let at = chrono::DateTime::from_timestamp(base + secs, 0)
            .expect("time")
            .format("%Y%m%dT%H%M%SZ");
        ics.push_str(&format!(
            "BEGIN:VEVENT\r\nUID:{summary}\r\nDTSTART:{at}\r\nSUMMARY:{summary}\r\n\
             BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:PT0S\r\nEND:VALARM\r\nEND:VEVENT\r\n"
        ));
    }
    ics.push_str("END:VCALENDAR\r\n");
    let file = d.join("i.ics");
    std::fs::write(&file, ics).expect("write");
    let db = d.join("k.db");
    assert!(
        kairos(&db)
            .arg("import")
            .arg(&file)
            .args(["--tz", "UTC"])
            .status()
            .expect("import")
            .success()
    );
    let (tx, said) = mpsc::channel();
    std::thread::spawn(move || {
        // Each writer's close is an end of file: open the pipe again.
        loop {
            let Ok(f) = std::fs::File::open(&fifo) else {
                return;
            };
            for line in BufReader::new(f).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        }
    });
    Rig { dir, db, said }
}

/// `kairos daemon --sink stdout --sink command:… --sink-timeout SECS`.
fn daemon(r: &Rig, timeout: &str) -> Daemon {
    let cmd = format!("command:sh '{}'", r.dir.path().join("cmd.sh").display());
    let mut c = kairos(&r.db);
    c.args(["daemon", "--sink", "stdout", "--sink", &cmd])
        .args(["--sink-timeout", timeout, "--tz", "UTC"]);
    spawn(c)
}

fn json(line: &str) -> serde_json::Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("bad line {line:?}: {e}"))
}

fn next(rx: &mpsc::Receiver<String>, what: &str) -> serde_json::Value {
    json(
        &rx.recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|e| panic!("{what}: {e}")),
    )
}

/// SIGTERM (the attempts in hand finish and are recorded), then every
/// stdout line the daemon printed after those already read.
fn stop(mut d: Daemon) -> Vec<serde_json::Value> {
    let pid = d.child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("kill")
            .success()
    );
    let status = d.child.wait().expect("reaped");
    assert!(status.success(), "SIGTERM is a clean exit: {status}");
    let until = Instant::now() + Duration::from_secs(5);
    let mut rest = Vec::new();
    // The reader ends at the pipe's end of file: `Disconnected`.
    while let Ok(l) = d
        .lines
        .recv_timeout(until.saturating_duration_since(Instant::now()))
    {
        rest.push(json(&l));
    }
    rest
}

fn why(db: &Path, key: &str) -> String {
    let out = kairos(db).args(["why", key]).output().expect("why");
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_hanging_command_holds_back_neither_stdout_nor_the_next_reminder_and_is_retried() {
    let r = rig(&[("Hang", 1), ("Next", 2)]);
    let d = daemon(&r, "4");
    let a = next(&d.lines, "stdout: Hang");
    assert_eq!(a["summary"], "Hang");
    assert_eq!(
        r.said.recv_timeout(Duration::from_secs(20)).as_deref(),
        Ok("started"),
        "the command hangs on Hang"
    );
    // Due a second after Hang, while the command still hangs (4 s): on
    // time, on both channels.
    let b = next(&d.lines, "stdout: Next");
    assert_eq!(b["summary"], "Next");
    assert_eq!(
        b["status"], "on_time",
        "not held back by the hanging command: {b}"
    );
    let b_cmd = next(&r.said, "command: Next");
    assert_eq!(b_cmd["key"], b["key"]);
    // After 4 s the hanging attempt is given up on, recorded, and retried
    // after its backoff: on the command only, marked repeat.
    let retry = next(&r.said, "command: Hang, retried");
    assert_eq!(retry["key"], a["key"]);
    assert_eq!(retry["repeat"], true, "{retry}");
    let rest = stop(d);
    assert!(
        rest.is_empty(),
        "stdout is not given anything again: {rest:?}"
    );
    let key = a["key"].as_str().expect("key");
    let story = why(&r.db, key);
    assert!(story.contains("command timed out after 4s"), "{story}");
    assert_eq!(
        story.matches("delivery via stdout: delivered").count(),
        1,
        "{story}"
    );
    assert_eq!(
        story.matches("delivery via command: delivered").count(),
        1,
        "{story}"
    );
    assert!(story.starts_with(&format!("{key}: delivered")), "{story}");
}

#[test]
fn sigkill_while_a_command_hangs_repeats_only_that_attempt() {
    let r = rig(&[("Hang", 1)]);
    let mut d = daemon(&r, "60");
    let a = next(&d.lines, "stdout: Hang");
    assert_eq!(
        r.said.recv_timeout(Duration::from_secs(20)).as_deref(),
        Ok("started")
    );
    d.child.kill().expect("SIGKILL");
    d.child.wait().expect("reaped");
    drop(d);
    // The restarted daemon gives the command the attempt it had in flight,
    // marked repeat; stdout's delivery (in the journal) is not repeated.
    let d = daemon(&r, "60");
    let again = next(&r.said, "command: Hang, again");
    assert_eq!(again["key"], a["key"]);
    assert_eq!(again["repeat"], true, "{again}");
    let rest = stop(d);
    assert!(rest.is_empty(), "stdout printed Hang once: {rest:?}");
    let story = why(&r.db, a["key"].as_str().expect("key"));
    assert_eq!(
        story.matches("delivery via stdout: delivered").count(),
        1,
        "{story}"
    );
    assert_eq!(
        story.matches("delivery via command: delivered").count(),
        1,
        "{story}"
    );
}
