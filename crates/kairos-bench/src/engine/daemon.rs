//! Part 3: the real `kairos daemon` over a database of `n` pending instances
//! with triggers uniform over `[now + 1 h, now + 365 d)` (nothing due for an
//! hour), inserted with `Store::insert_instances`. The daemon runs as
//! `kairos --db FILE daemon --sink stdout`, unmodified.
//!
//! - **Database size**: the file after the inserting connection closed (WAL
//!   checkpointed and removed).
//! - **Start to armed**, untraced: from just before `spawn` (fork + exec) until
//!   `/proc/PID/fdinfo` of its `timerfd` shows a non-zero `it_value`, i.e. the
//!   daemon has done its recovery, first materialise and due scan and armed
//!   its wall timer. Polled every 200 µs, so ≤ 0.3 ms of resolution. Warm (the
//!   file was just written, so it is in the page cache) and cold (the database
//!   file and the binary dropped from the page cache with
//!   `posix_fadvise(DONTNEED)` first; shared libraries stay cached).
//! - **Start to armed under strace**: `strace -f -ttt -T`, from the `execve`
//!   to the return of the first `timerfd_settime` (strace slows each syscall).
//! - **RSS**: `VmRSS` of `/proc/PID/status` once armed and after the idle
//!   window; `VmHWM` (the peak) at the end.
//! - **Wake-ups while idle**: context switches of all its threads over the
//!   window (starting 1 s after armed), untraced; and, in the traced run, the
//!   `epoll_wait`/`epoll_pwait` calls that *returned* within `idle` after the
//!   first `timerfd_settime`, and any re-arming.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration as StdDuration, Instant};

use anyhow::{Context, Result, bail};
use chrono::Duration;

use super::procs::{
    Grandchild, Guard, child_named, ctxt_switches, evict_from_cache, status_field, timerfd_armed,
};
use super::{Rng, now, populate, whole_ms};

/// Longest wait for a daemon to arm before the bench gives up.
const ARM_LIMIT: StdDuration = StdDuration::from_secs(60);

/// One untraced daemon run.
#[derive(Debug, Clone, Default)]
pub struct Run {
    /// spawn → timer armed.
    pub armed: StdDuration,
    /// VmRSS when armed, kB.
    pub rss_armed_kb: u64,
    /// VmRSS after the idle window, kB.
    pub rss_end_kb: u64,
    /// VmHWM (peak RSS) at the end, kB.
    pub hwm_kb: u64,
    /// Threads of the process.
    pub threads: usize,
    /// Voluntary and involuntary context switches during the idle window.
    pub switches: Option<(u64, u64)>,
    /// How it ended after SIGTERM, and how long that took.
    pub exit: String,
}

/// The traced run.
#[derive(Debug, Clone, Default)]
pub struct Traced {
    /// `execve` → first `timerfd_settime` returned, seconds (strace's clock).
    pub armed: f64,
    /// `epoll_wait`-family returns within the window.
    pub epoll_returns: usize,
    /// `timerfd_settime` calls after the first one, within the window.
    pub rearms: usize,
    /// The returns themselves, as strace printed them (at most 10).
    pub detail: Vec<String>,
}

/// Part 3's results.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Time to insert them.
    pub insert: StdDuration,
    /// Database file size, bytes.
    pub db_bytes: u64,
    /// Warm, untraced, with the idle window.
    pub warm: Run,
    /// Cold start, untraced (armed time only).
    pub cold: Option<Run>,
    /// Under strace, with the idle window (or why it failed).
    pub traced: Option<Result<Traced, String>>,
}

fn daemon_cmd(kairos: &Path, db: &Path, stderr: &Path) -> Result<Command> {
    let mut cmd = Command::new(kairos);
    cmd.arg("--db")
        .arg(db)
        .args(["daemon", "--sink", "stdout"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(File::create(stderr)?));
    Ok(cmd)
}

/// Polls until `pid` has an armed timerfd; the time since `t0`.
fn wait_armed(guard: &mut Guard, pid: u32, t0: Instant, stderr: &Path) -> Result<StdDuration> {
    loop {
        if timerfd_armed(pid) == Some(true) {
            return Ok(t0.elapsed());
        }
        if let Some(status) = guard.exited()? {
            let err = std::fs::read_to_string(stderr).unwrap_or_default();
            bail!("the daemon exited before arming ({status}): {}", err.trim());
        }
        if t0.elapsed() > ARM_LIMIT {
            bail!("the daemon did not arm its timer within {ARM_LIMIT:?}");
        }
        std::thread::sleep(StdDuration::from_micros(200));
    }
}

fn stop(guard: &mut Guard) -> Result<String> {
    let t = Instant::now();
    let (status, killed) = guard.stop(StdDuration::from_secs(5))?;
    Ok(format!(
        "{status} {} after SIGTERM in {:.1} ms",
        if killed { "(needed SIGKILL)" } else { "" },
        t.elapsed().as_secs_f64() * 1000.0
    ))
}

/// One untraced run; with `idle`, watches it that long once armed.
fn plain(kairos: &Path, db: &Path, dir: &Path, idle: Option<StdDuration>) -> Result<Run> {
    let stderr = dir.join("daemon.stderr");
    let mut cmd = daemon_cmd(kairos, db, &stderr)?;
    let t0 = Instant::now();
    let mut guard = Guard::spawn(&mut cmd, "kairos daemon")?;
    let pid = guard.pid();
    let armed = wait_armed(&mut guard, pid, t0, &stderr)?;
    let status = PathBuf::from(format!("/proc/{pid}/status"));
    let mut run = Run {
        armed,
        rss_armed_kb: status_field(&status, "VmRSS").unwrap_or(0),
        ..Run::default()
    };
    if let Some(idle) = idle {
        std::thread::sleep(StdDuration::from_secs(1));
        let (v0, i0, _) = ctxt_switches(pid)?;
        std::thread::sleep(idle);
        let (v1, i1, threads) = ctxt_switches(pid)?;
        run.switches = Some((v1 - v0, i1 - i0));
        run.threads = threads;
    } else {
        run.threads = ctxt_switches(pid)?.2;
    }
    run.rss_end_kb = status_field(&status, "VmRSS").unwrap_or(0);
    run.hwm_kb = status_field(&status, "VmHWM").unwrap_or(0);
    run.exit = stop(&mut guard)?;
    Ok(run)
}

/// One line of `strace -f -ttt -T`: syscall name, when it returned, and
/// whether this line is an entry only (`<unfinished ...>`).
fn parse_line(line: &str) -> Option<(String, f64, bool)> {
    // `1709  1796227304.174128 timerfd_settime(…) = 0 <0.000084>`
    let (_pid, r) = line.trim_start().split_once(char::is_whitespace)?;
    let (ts, rest) = r.trim_start().split_once(' ')?;
    let ts: f64 = ts.parse().ok()?;
    if let Some(r) = rest.strip_prefix("<... ") {
        // Printed when the call returned.
        let name = r.split_whitespace().next()?;
        return Some((name.to_owned(), ts, false));
    }
    let name = rest.split('(').next()?;
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None; // `+++ exited …`, `--- SIGTERM …`
    }
    if rest.contains("<unfinished ...>") {
        return Some((name.to_owned(), ts, true));
    }
    let took = rest
        .rsplit_once('<')
        .and_then(|(_, d)| d.trim_end_matches('>').parse::<f64>().ok())
        .unwrap_or(0.0);
    Some((name.to_owned(), ts + took, false))
}

/// Reads the strace log: armed time from `execve`, and what returned within
/// `idle` after arming.
fn read_trace(log: &Path, idle: StdDuration) -> Result<Traced> {
    let text = std::fs::read_to_string(log)?;
    let mut execve = None;
    let mut armed_at = None;
    let mut t = Traced::default();
    for line in text.lines() {
        let Some((name, at, entry_only)) = parse_line(line) else {
            continue;
        };
        if name == "execve" && execve.is_none() {
            execve = Some(at);
            continue;
        }
        if entry_only {
            continue;
        }
        let Some(armed) = armed_at else {
            if name == "timerfd_settime" {
                armed_at = Some(at);
            }
            continue;
        };
        if at <= armed || at > armed + idle.as_secs_f64() {
            continue;
        }
        if name.starts_with("epoll_") {
            t.epoll_returns += 1;
            if t.detail.len() < 10 {
                t.detail.push(format!("+{:.3} s: {line}", at - armed));
            }
        } else if name == "timerfd_settime" {
            t.rearms += 1;
        }
    }
    match (execve, armed_at) {
        (Some(e), Some(a)) => t.armed = a - e,
        _ => bail!("no execve/timerfd_settime in {}", log.display()),
    }
    Ok(t)
}

/// The run under strace.
fn traced(kairos: &Path, db: &Path, dir: &Path, idle: StdDuration) -> Result<Traced> {
    let stderr = dir.join("daemon-traced.stderr");
    let log = dir.join("daemon.strace");
    let inner = daemon_cmd(kairos, db, &stderr)?;
    let mut cmd = Command::new("strace");
    cmd.args(["-f", "-ttt", "-T", "-e"])
        .arg("trace=execve,timerfd_settime,epoll_wait,epoll_pwait,epoll_pwait2")
        .arg("-o")
        .arg(&log)
        .arg("--")
        .arg(inner.get_program())
        .args(inner.get_args())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(File::create(&stderr)?));
    let t0 = Instant::now();
    let mut guard = Guard::spawn(&mut cmd, "strace kairos daemon")?;
    let comm: String = kairos
        .file_name()
        .map(|f| f.to_string_lossy().chars().take(15).collect())
        .unwrap_or_default();
    let tracee = loop {
        if let Some(p) = child_named(guard.pid(), &comm) {
            break Grandchild::new(p);
        }
        if guard.exited()?.is_some() || t0.elapsed() > ARM_LIMIT {
            let err = std::fs::read_to_string(&stderr).unwrap_or_default();
            bail!("strace did not start the daemon: {}", err.trim());
        }
        std::thread::sleep(StdDuration::from_micros(200));
    };
    wait_armed(&mut guard, tracee.0, t0, &stderr)?;
    std::thread::sleep(idle + StdDuration::from_millis(500));
    // SIGTERM to the daemon; strace exits with it.
    super::procs::signal(tracee.0, nix::sys::signal::Signal::SIGTERM);
    if guard.wait_for(StdDuration::from_secs(5))?.is_none() {
        bail!("the traced daemon did not exit within 5 s of SIGTERM");
    }
    drop(tracee);
    drop(guard);
    read_trace(&log, idle)
}

/// Builds the database, then runs the daemon warm (with the idle window),
/// traced (if `strace`), and cold.
///
/// # Errors
/// Store failures, a daemon that fails to start or to arm.
pub fn run(
    dir: &Path,
    kairos: &Path,
    n: usize,
    idle: StdDuration,
    strace: bool,
    seed: u64,
) -> Result<Report> {
    let db = dir.join("million.db");
    let start = whole_ms(now()) + Duration::hours(1);
    let span_ms = u64::try_from((Duration::days(365) - Duration::hours(1)).num_milliseconds())?;
    let mut rng = Rng::new(seed);
    let triggers = (0..n).map(move |_| {
        start + Duration::milliseconds(i64::try_from(rng.below(span_ms)).unwrap_or(0))
    });
    let (store, insert) = populate(&db, triggers)?;
    drop(store);
    let db_bytes = std::fs::metadata(&db)
        .with_context(|| format!("cannot stat {}", db.display()))?
        .len();
    let warm = plain(kairos, &db, dir, Some(idle))?;
    let traced = if strace {
        Some(traced(kairos, &db, dir, idle).map_err(|e| format!("{e:#}")))
    } else {
        None
    };
    evict_from_cache(&db)?;
    evict_from_cache(kairos)?;
    let cold = Some(plain(kairos, &db, dir, None)?);
    Ok(Report {
        insert,
        db_bytes,
        warm,
        cold,
        traced,
    })
}
