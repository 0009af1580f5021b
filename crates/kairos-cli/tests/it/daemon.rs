//! The real daemon, killed with SIGKILL at several moments while thousands of
//! reminders fall due: nothing is lost, a key is printed twice only when the
//! kill came while printing it (the delivery journal records every other
//! printing at once: at most one key per kill), and the second printing says
//! `"repeat":true`.

// Elsewhere the SIGKILL test (Unix only) is the only user of some helpers.
#![cfg_attr(not(unix), allow(dead_code, unused_imports))]

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use chrono::Utc;

pub(crate) fn kairos(db: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kairos"));
    c.arg("--db").arg(db);
    c
}

/// A daemon whose stdout lines arrive on a channel.
pub(crate) struct Daemon {
    pub(crate) child: Child,
    pub(crate) lines: mpsc::Receiver<String>,
}

/// A failing test must not leave a daemon behind: it would hold the test's
/// stderr open and keep `cargo test` waiting for it.
impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn start(db: &Path, offset: i64) -> Daemon {
    start_with(db, &format!("--clock-offset={offset}"))
}

/// A daemon on `db` with one extra global argument (its clock).
pub(crate) fn start_with(db: &Path, clock_arg: &str) -> Daemon {
    let mut cmd = kairos(db);
    cmd.args(["daemon", "--sink", "stdout", "--tz", "UTC", clock_arg]);
    spawn(cmd)
}

/// Starts `cmd` (a `kairos … daemon`), its stdout lines sent to
/// [`Daemon::lines`] by a thread, its stderr inherited.
pub(crate) fn spawn(mut cmd: Command) -> Daemon {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn daemon");
    let out = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    Daemon { child, lines: rx }
}

/// Waits (at most 20 s, yielding) until `path` exists; returns that deadline.
pub(crate) fn wait_for_file(path: &Path) -> Instant {
    let until = Instant::now() + Duration::from_secs(20);
    while !path.exists() && Instant::now() < until {
        std::thread::yield_now();
    }
    until
}

/// Reads lines until `n` more arrived or `deadline` passed; returns keys.
pub(crate) fn read(
    d: &Daemon,
    n: usize,
    deadline: Instant,
    seen: &mut HashMap<String, usize>,
    statuses: &mut Vec<String>,
) -> usize {
    read_each(d, n, deadline, |v| {
        *seen
            .entry(v["key"].as_str().expect("key").to_owned())
            .or_default() += 1;
        statuses.push(v["status"].as_str().unwrap_or_default().to_owned());
    })
}

/// Reads lines until `n` more arrived or `deadline` passed, handing each
/// (parsed) to `each`; returns how many.
pub(crate) fn read_each(
    d: &Daemon,
    n: usize,
    deadline: Instant,
    mut each: impl FnMut(&serde_json::Value),
) -> usize {
    let mut got = 0;
    while got < n {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(line) = d.lines.recv_timeout(left) else {
            break;
        };
        let v: serde_json::Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("bad line {line:?}: {e}"));
        each(&v);
        got += 1;
    }
    got
}

/// Every printing of each key: whether it said `"repeat":true`.
#[derive(Default)]
struct Prints {
    by_key: HashMap<String, Vec<bool>>,
    statuses: Vec<String>,
}

impl Prints {
    fn read(&mut self, d: &Daemon, n: usize, deadline: Instant) -> usize {
        read_each(d, n, deadline, |v| {
            self.by_key
                .entry(v["key"].as_str().expect("key").to_owned())
                .or_default()
                .push(v.get("repeat").is_some_and(|r| r == true));
            self.statuses
                .push(v["status"].as_str().unwrap_or_default().to_owned());
        })
    }
}

// SIGKILL, then SIGTERM for a clean exit: Unix signals.
#[cfg(unix)]
#[test]
fn sigkill_and_restart_lose_nothing_and_repeat_only_in_flight_keys_marked_repeat() {
    const N: usize = 1500;
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("k.db");
    // N reminders due over 3 seconds starting 3 s from now (whole seconds,
    // many sharing one second).
    let t0 = Utc::now() + chrono::Duration::seconds(3);
    let mut ics = String::from("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\n");
    for i in 0..N {
        let at = (t0 + chrono::Duration::seconds((i % 3) as i64)).format("%Y%m%dT%H%M%SZ");
        ics.push_str(&format!(
            "BEGIN:VEVENT\r\nUID:r{i}\r\nDTSTART:{at}\r\nSUMMARY:R{i}\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:PT0S\r\nEND:VALARM\r\nEND:VEVENT\r\n"
        ));
    }
    ics.push_str("END:VCALENDAR\r\n");
    let file = dir.path().join("r.ics");
    std::fs::write(&file, ics).expect("write ics");
    let st = kairos(&db)
        .args(["import"])
        .arg(&file)
        .args(["--calendar", "burst", "--tz", "UTC"])
        .status()
        .expect("import");
    assert!(st.success());

    let mut p = Prints::default();
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut kills = 0;
    let mut in_flight: HashSet<String> = HashSet::new();
    // Run 1: killed after 200 lines. Run 2: killed after 400 more.
    for n in [200, 400] {
        let mut d = start(&db, 0);
        let got = p.read(&d, n, deadline);
        assert_eq!(
            got, n,
            "the daemon printed {got} of {n} lines before the deadline"
        );
        d.child.kill().expect("SIGKILL");
        d.child.wait().expect("reaped");
        kills += 1;
        // What the dead daemon had claimed but not recorded: the only keys
        // allowed to come out twice.
        let store = kairos_store::Store::open(&db).expect("open after kill");
        in_flight.extend(
            store
                .in_state(kairos_store::State::Firing, 100_000)
                .expect("firing")
                .into_iter()
                .map(|i| i.key),
        );
        // Whatever it printed before dying is still in the pipe.
        p.read(&d, usize::MAX, Instant::now() + Duration::from_millis(500));
    }
    // Run 3: restarted "10 minutes later" (clock offset): the rest fell due
    // while it was down and must all come out, marked missed.
    let mut d = start(&db, 600);
    while p.by_key.len() < N && Instant::now() < deadline {
        p.read(&d, N - p.by_key.len(), deadline);
    }
    // A graceful stop (SIGTERM) finishes the batch in hand, so the database
    // can be checked below; the SIGKILLs above are the crash test.
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
    // A repeat printed after the last new key is still in the pipe.
    p.read(&d, usize::MAX, Instant::now() + Duration::from_millis(500));
    assert_eq!(p.by_key.len(), N, "every due key printed at least once");
    let repeated: Vec<&String> = p
        .by_key
        .iter()
        .filter(|(_, prints)| prints.len() > 1)
        .map(|(k, _)| k)
        .collect();
    for k in &repeated {
        assert!(
            in_flight.contains(*k),
            "{k} was printed twice but was not in flight at a kill"
        );
        assert!(
            p.by_key[*k][1..].iter().all(|r| *r),
            "{k}: a second printing must say \"repeat\":true: {:?}",
            p.by_key[*k]
        );
    }
    // The delivery journal: only the attempt in flight at a kill is made
    // again (one channel here), so at most one key per kill.
    assert!(
        repeated.len() <= kills,
        "{} keys repeated after {kills} kills: {repeated:?}",
        repeated.len()
    );
    // And "repeat" is not said of keys never shown before, except the one
    // in flight if the kill came before it reached the pipe.
    let first_marked = p.by_key.values().filter(|prints| prints[0]).count();
    assert!(
        first_marked <= kills,
        "{first_marked} keys said \"repeat\" on their first printing"
    );
    assert!(
        p.statuses.iter().any(|s| s == "missed"),
        "the ones that fell due while down are marked missed"
    );

    // And the database agrees: all delivered, none pending or firing.
    let out = kairos(&db)
        .args(["log", "--since", "2100-01-01"])
        .output()
        .expect("log");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("delivered={N}")), "{text}");
    assert!(
        text.contains("pending=0") && text.contains("firing=0"),
        "{text}"
    );
}
