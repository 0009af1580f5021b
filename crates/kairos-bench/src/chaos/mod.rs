//! `chaos-bench`'s one run: the real `kairos daemon --sink stdout` on a real
//! SQLite file, killed with SIGKILL in the middle of a burst, restarted, and
//! every printed line accounted for.
//!
//! 1. A fresh database with `n` pending instances (the engine bench's
//!    [`populate`]), triggers spread over `spread` starting `ahead` from
//!    now: either whole seconds (`Shape::Seconds`, many due at the same
//!    instant, as an imported calendar gives) or evenly to the millisecond
//!    (`Shape::Even`).
//! 2. `kairos --db FILE daemon --sink stdout --tz UTC`; its stdout is read
//!    line by line on a thread.
//! 3. When `n / 2` distinct keys have been received: SIGKILL. Whatever it
//!    printed before dying is still read (up to end of file).
//! 4. Down for `down` (the one sleep: the time it stays dead), then
//!    restarted; read until every key has come out or the deadline.
//! 5. SIGTERM; then the database's counters are read.
//!
//! Counted: **lost** keys (never printed), **repeated** keys (printed more
//! than once), repeated lines without `"repeat":true` (must be 0), and
//! first printings that say `repeat` (harmless: claimed, not printed,
//! before the kill).

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use chrono::Duration as ChronoDuration;
use kairos_store::{State, Store};
use nix::sys::signal::Signal;

use crate::engine::procs::{Guard, signal};
use crate::engine::{now, populate, whole_ms};

/// How the triggers are laid out over the burst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Shape {
    /// Whole seconds: `n / spread` reminders due at each second.
    Seconds,
    /// Evenly spread, to the millisecond.
    Even,
}

/// What one run is asked to do.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Reminders.
    pub n: usize,
    /// The burst starts this far ahead.
    pub ahead: Duration,
    /// And lasts this long.
    pub spread: Duration,
    /// Time down between the SIGKILL and the restart.
    pub down: Duration,
    /// Trigger layout.
    pub shape: Shape,
    /// Give up waiting for lines after this long (per phase).
    pub patience: Duration,
}

/// What one run found.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Distinct keys received when the SIGKILL was sent.
    pub at_kill: usize,
    /// Lines read after the kill from the dead daemon's pipe.
    pub drained: usize,
    /// Keys never printed.
    pub lost: usize,
    /// Keys printed more than once.
    pub repeated: usize,
    /// Second (or later) printings without `"repeat":true`.
    pub unmarked: usize,
    /// First printings that said `repeat` (claimed but not printed before).
    pub marked_first: usize,
    /// Restart → every key received.
    pub catch_up: Option<Duration>,
    /// The database afterwards, `state=n` words.
    pub counters: String,
}

/// One line the daemon printed.
struct Line {
    key: String,
    repeat: bool,
}

/// A running daemon and its stdout, line by line.
struct Daemon {
    guard: Guard,
    lines: Receiver<Line>,
}

fn start(kairos: &Path, db: &Path, stderr: &Path) -> Result<Daemon> {
    let mut cmd = Command::new(kairos);
    cmd.arg("--db")
        .arg(db)
        .args(["daemon", "--sink", "stdout", "--tz", "UTC"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(
            File::options().create(true).append(true).open(stderr)?,
        ));
    let mut guard = Guard::spawn(&mut cmd, "kairos daemon")?;
    let out = guard.take_stdout().context("no stdout pipe")?;
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out)
            .lines()
            .map_while(std::result::Result::ok)
        {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else {
                eprintln!("chaos-bench: not JSON: {line}");
                continue;
            };
            let Some(key) = v["key"].as_str() else {
                continue; // a withdrawal line; none expected here
            };
            let l = Line {
                key: key.to_owned(),
                repeat: v["repeat"].as_bool() == Some(true),
            };
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    Ok(Daemon { guard, lines })
}

/// Everything printed, per key: how many times, and whether each said repeat.
#[derive(Default)]
struct Seen(HashMap<String, Vec<bool>>);

impl Seen {
    fn add(&mut self, l: Line) {
        self.0.entry(l.key).or_default().push(l.repeat);
    }
}

/// Reads until `want` distinct keys were seen, the pipe closes, or `until`.
/// Returns whether the pipe closed.
fn read_until(d: &Daemon, seen: &mut Seen, want: usize, until: Instant) -> bool {
    while seen.0.len() < want {
        let left = until.saturating_duration_since(Instant::now());
        match d.lines.recv_timeout(left) {
            Ok(l) => seen.add(l),
            Err(RecvTimeoutError::Timeout) => return false,
            Err(RecvTimeoutError::Disconnected) => return true,
        }
    }
    false
}

/// One kill-and-restart run in `dir` (fresh database).
///
/// # Errors
/// The database cannot be made, the daemon cannot start or dies by itself,
/// or a deadline passes before the kill.
pub fn run(kairos: &Path, dir: &Path, plan: &Plan) -> Result<Outcome> {
    let db = dir.join("chaos.db");
    let stderr = dir.join("daemon.stderr");
    let start_at = whole_ms(now()) + ChronoDuration::from_std(plan.ahead)?;
    let span_ms = i64::try_from(plan.spread.as_millis())?.max(1);
    let n = plan.n;
    let triggers = (0..n).map(|i| {
        let i = i64::try_from(i).unwrap_or(i64::MAX);
        let n = i64::try_from(n).unwrap_or(i64::MAX).max(1);
        let off = match plan.shape {
            // Whole seconds of the burst, round robin.
            Shape::Seconds => (i % (span_ms / 1000).max(1)) * 1000,
            Shape::Even => i * span_ms / n,
        };
        start_at + ChronoDuration::milliseconds(off)
    });
    let (store, _) = populate(&db, triggers)?;
    drop(store);

    let mut seen = Seen::default();
    let mut out = Outcome::default();
    let mut d = start(kairos, &db, &stderr)?;
    let until = Instant::now() + plan.ahead + plan.spread + plan.patience;
    read_until(&d, &mut seen, n / 2, until);
    if seen.0.len() < n / 2 {
        let err = std::fs::read_to_string(&stderr).unwrap_or_default();
        bail!(
            "only {} of {} lines before the deadline; daemon stderr: {}",
            seen.0.len(),
            n / 2,
            err.trim()
        );
    }
    out.at_kill = seen.0.len();
    signal(d.guard.pid(), Signal::SIGKILL);
    let lines_before: usize = seen.0.values().map(Vec::len).sum();
    // What it printed before dying is still in the pipe: read to its end.
    let closed = read_until(&d, &mut seen, usize::MAX, Instant::now() + plan.patience);
    if !closed {
        bail!(
            "the killed daemon's stdout did not close within {:?}",
            plan.patience
        );
    }
    if d.guard.wait_for(plan.patience)?.is_none() {
        bail!("the daemon survived SIGKILL for {:?}", plan.patience);
    }
    out.drained = seen.0.values().map(Vec::len).sum::<usize>() - lines_before;
    // The specified time down.
    std::thread::sleep(plan.down);
    d = start(kairos, &db, &stderr)?;
    let t = Instant::now();
    read_until(&d, &mut seen, n, t + plan.spread + plan.patience);
    if seen.0.len() >= n {
        out.catch_up = Some(t.elapsed());
    }
    d.guard.stop(Duration::from_secs(5))?;
    // A repeat that arrives after the last new key is still in the pipe.
    read_until(&d, &mut seen, usize::MAX, Instant::now() + plan.patience);

    out.lost = n.saturating_sub(seen.0.len());
    for prints in seen.0.values() {
        if prints.len() > 1 {
            out.repeated += 1;
            out.unmarked += prints[1..].iter().filter(|r| !**r).count();
        }
        if prints.first() == Some(&true) {
            out.marked_first += 1;
        }
    }
    let counts = Store::open(&db)?.counters()?;
    out.counters = counts
        .iter()
        .filter(|(_, v)| **v > 0)
        .map(|(s, v)| format!("{s}={v}"))
        .collect::<Vec<_>>()
        .join(" ");
    if counts.get(&State::Delivered).copied() != Some(n as u64) {
        eprintln!("chaos-bench: database says {} after the run", out.counters);
    }
    Ok(out)
}
