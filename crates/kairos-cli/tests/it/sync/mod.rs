//! Sync between real processes: a real `kairos-server` on 127.0.0.1 (port
//! 0, its address read from the line it prints) and devices that are real
//! `kairos` processes on their own databases. No sleeps: every wait is for
//! a line or a state, with a deadline.

mod escalation;
mod faults;
mod feeds;
mod tasks;
mod two_devices;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use crate::daemon::{Daemon, kairos};

/// The `kairos-server` binary beside `kairos` (built here if a partial
/// build left it out).
fn server_bin() -> PathBuf {
    let kairos = PathBuf::from(env!("CARGO_BIN_EXE_kairos"));
    let bin = kairos.with_file_name(format!("kairos-server{}", std::env::consts::EXE_SUFFIX));
    if !bin.exists() {
        let ok = Command::new(env!("CARGO"))
            .args(["build", "-p", "kairos-server"])
            .status()
            .expect("cargo build -p kairos-server");
        assert!(ok.success(), "building kairos-server failed");
    }
    bin
}

/// A running server; killed on drop.
pub struct Server {
    child: Child,
    pub url: String,
    pub data: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts a server on `data`, listening on `listen`, and waits (20 s at
    /// most) for its `{"listening": URL}` line.
    pub fn start(data: &Path, listen: &str) -> Server {
        Self::start_with(data, listen, &[])
    }

    /// As [`Server::start`], with extra (test) flags.
    pub fn start_with(data: &Path, listen: &str, extra: &[&str]) -> Server {
        let mut child = Command::new(server_bin())
            .arg("--data")
            .arg(data)
            .args(["--listen", listen])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn kairos-server");
        let out = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(out).lines();
            if let Some(Ok(l)) = lines.next() {
                let _ = tx.send(l);
            }
            for _ in lines {}
        });
        let line = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("the server announces its address");
        let v: serde_json::Value = serde_json::from_str(&line).expect("json line");
        let url = v["listening"].as_str().expect("listening").to_owned();
        Server {
            child,
            url,
            data: data.to_owned(),
        }
    }

    /// `host:port` of the running server (to restart on the same port).
    pub fn addr(&self) -> String {
        self.url.trim_start_matches("ws://").to_owned()
    }

    /// SIGKILL, no goodbye.
    pub fn kill9(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// A pairing code for `account`.
    pub fn invite(&self, account: &str) -> String {
        let out = Command::new(server_bin())
            .arg("--data")
            .arg(&self.data)
            .args(["invite", account])
            .output()
            .expect("invite");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        v["code"].as_str().expect("code").to_owned()
    }
}

/// One device: a database, the `kairos` command on it, maybe a daemon.
pub struct Device {
    pub db: PathBuf,
    pub id: String,
    /// Seconds this device's clock is ahead.
    pub offset: i64,
}

/// Runs `kairos` on `db` with args; panics with stderr on failure.
pub fn run(db: &Path, offset: i64, args: &[&str]) -> Output {
    let out = kairos(db)
        .arg(format!("--clock-offset={offset}"))
        .args(args)
        .output()
        .expect("run kairos");
    assert!(
        out.status.success(),
        "kairos {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The JSON lines of stdout.
pub fn lines(out: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect()
}

impl Device {
    /// A new database in `dir` joined to the account with `code`.
    pub fn join(dir: &Path, name: &str, server: &Server, code: &str) -> Device {
        Self::join_ahead(dir, name, server, code, 0)
    }

    /// As [`Device::join`], with a clock `offset` seconds ahead.
    pub fn join_ahead(dir: &Path, name: &str, server: &Server, code: &str, offset: i64) -> Device {
        let db = dir.join(format!("{name}.db"));
        let out = run(
            &db,
            offset,
            &["sync", "join", &server.url, code, "--name", name],
        );
        let v = &lines(&out)[0];
        Device {
            db,
            id: v["device"].as_str().expect("device").to_owned(),
            offset,
        }
    }

    /// `kairos ARGS` on this device.
    pub fn run(&self, args: &[&str]) -> Output {
        run(&self.db, self.offset, args)
    }

    /// A code for another device of this account.
    pub fn pair(&self) -> String {
        lines(&self.run(&["sync", "pair"]))[0]["code"]
            .as_str()
            .expect("code")
            .to_owned()
    }

    /// Imports `ics` (written to a file beside the database).
    pub fn import(&self, ics: &str) {
        let file = self.db.with_extension("import.ics");
        std::fs::write(&file, ics).expect("write ics");
        self.run(&["import", file.to_str().expect("utf-8 path"), "--tz", "UTC"]);
    }

    /// Imports `ics` into calendar `name`.
    pub fn run_import_named(&self, ics: &str, name: &str) {
        let file = self.db.with_extension("import.ics");
        std::fs::write(&file, ics).expect("write ics");
        let path = file.to_str().expect("utf-8 path");
        self.run(&["import", path, "--tz", "UTC", "--calendar", name]);
    }

    /// `kairos ARGS` on this device, running in the background.
    pub fn spawn(&self, args: &[&str]) -> Child {
        kairos(&self.db)
            .arg(format!("--clock-offset={}", self.offset))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn kairos")
    }

    /// How many reminders are pending (the tests give each event one,
    /// within the horizon).
    pub fn events(&self) -> usize {
        self.upcoming().len()
    }

    /// Pending reminders: (key, trigger).
    pub fn upcoming(&self) -> Vec<(String, String)> {
        lines(&self.run(&["upcoming", "--limit", "100000"]))
            .iter()
            .map(|v| {
                (
                    v["key"].as_str().expect("key").to_owned(),
                    v["trigger"].as_str().expect("trigger").to_owned(),
                )
            })
            .collect()
    }

    /// `kairos sync status`.
    pub fn status(&self) -> serde_json::Value {
        lines(&self.run(&["sync", "status"]))[0].clone()
    }

    /// A daemon on this device (stdout lines on a channel).
    pub fn daemon(&self) -> Daemon {
        crate::daemon::start_with(&self.db, &format!("--clock-offset={}", self.offset))
    }

    /// Waits until `check` holds for this device's pending reminders.
    pub fn wait_upcoming(&self, what: &str, check: impl Fn(&[(String, String)]) -> bool) {
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            let now = self.upcoming();
            if check(&now) {
                return;
            }
            assert!(Instant::now() < until, "{what}: still {now:?}");
            std::thread::yield_now();
        }
    }
}

/// Waits until the device's daemon holds a live session.
pub fn wait_connected(d: &Device) {
    let until = Instant::now() + Duration::from_secs(20);
    while d.status()["connected"] != true {
        assert!(Instant::now() < until, "{} never connected", d.id);
        std::thread::yield_now();
    }
}

/// A server, and devices A and B of one account.
pub fn pair_of(dir: &Path) -> (Server, Device, Device) {
    let server = Server::start(&dir.join("server"), "127.0.0.1:0");
    let a = Device::join(dir, "a", &server, &server.invite("alice"));
    let b = Device::join(dir, "b", &server, &a.pair());
    (server, a, b)
}

/// An instant `secs` from now, as iCalendar UTC.
pub fn in_secs(secs: i64) -> String {
    let at: DateTime<Utc> = Utc::now() + chrono::Duration::seconds(secs);
    at.format("%Y%m%dT%H%M%SZ").to_string()
}

/// A calendar of one-alarm events: (uid, trigger as iCalendar UTC).
/// Each event starts 15 minutes after its trigger.
pub fn calendar(events: &[(&str, &str)]) -> String {
    let mut s = String::from("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\n");
    for (uid, trigger) in events {
        let t = DateTime::parse_from_str(&format!("{trigger} +0000"), "%Y%m%dT%H%M%SZ %z")
            .expect("trigger");
        let start = (t + chrono::Duration::minutes(15)).format("%Y%m%dT%H%M%SZ");
        s.push_str(&format!(
            "BEGIN:VEVENT\r\nUID:{uid}\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:{start}\r\n\
             SUMMARY:{uid}\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:x\r\n\
             TRIGGER:-PT15M\r\nEND:VALARM\r\nEND:VEVENT\r\n"
        ));
    }
    s.push_str("END:VCALENDAR\r\n");
    s
}

/// The next line from a daemon, within `secs`.
pub fn next_line(d: &Daemon, secs: u64) -> Option<serde_json::Value> {
    d.lines
        .recv_timeout(Duration::from_secs(secs))
        .ok()
        .map(|l| serde_json::from_str(&l).expect("json line"))
}

/// Lines until one matches `pred` (returned) or `secs` pass (panics).
pub fn until_line(
    d: &Daemon,
    secs: u64,
    what: &str,
    pred: impl Fn(&serde_json::Value) -> bool,
) -> (serde_json::Value, Vec<serde_json::Value>) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut before = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(line) = d.lines.recv_timeout(left) else {
            panic!("{what}: no such line within {secs} s; saw {before:?}");
        };
        let v: serde_json::Value = serde_json::from_str(&line).expect("json line");
        if pred(&v) {
            return (v, before);
        }
        before.push(v);
    }
}
