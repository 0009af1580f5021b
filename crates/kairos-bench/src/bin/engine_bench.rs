//! `engine-bench`: the reminder engine measured end to end (issue #3).
//!
//! ```text
//! cargo run --release -p kairos-bench --bin engine-bench            # full sizes
//! cargo run --release -p kairos-bench --bin engine-bench -- --quick # a quick look
//! ```
//!
//! 1. lateness of 10,000 reminders spread over 10 s: `daemon::run` against a
//!    1 s polling scanner;
//! 2. a burst of 100,000 reminders due at once: durable drain through the
//!    engine against a Redis sorted set (non-durable and fsync-always);
//! 3. `kairos daemon` over 1,000,000 pending instances: file size, start to
//!    armed, RSS, wake-ups in 60 s with nothing due.
//!
//! The methods are in the modules' docs (`src/engine/`) and in
//! `docs/benchmarks.md`. Every child process is stopped at the end, on Ctrl-C
//! and at the time limit; only 127.0.0.1 is used.

// Measures the Linux daemon (signals, /proc, strace, posix_fadvise,
// RLIMIT_NOFILE): built on Unix only; elsewhere `main` just says so.

#[cfg(unix)]
#[path = "../engine/mod.rs"]
mod engine;

#[cfg(unix)]
use std::path::{Path, PathBuf};
#[cfg(unix)]
use std::process::ExitCode;
#[cfg(unix)]
use std::time::Duration;

#[cfg(unix)]
use anyhow::Result;
#[cfg(unix)]
use clap::{Parser, ValueEnum};

#[cfg(unix)]
use engine::parts::{self, Opts};
#[cfg(unix)]
use engine::procs;

#[cfg(unix)]
/// The parts of the bench.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Part {
    Lateness,
    Burst,
    Daemon,
}

#[cfg(unix)]
/// Reminder-engine benchmark: lateness, burst drain, daemon at a million instances.
#[derive(Parser, Debug)]
#[command(name = "engine-bench", version)]
#[allow(clippy::struct_excessive_bools)]
struct Args {
    /// Small sizes: 1,000 reminders over 2 s, a 10,000 burst, 100,000
    /// instances, a 5 s idle window.
    #[arg(long)]
    quick: bool,
    /// Run only these parts (repeatable).
    #[arg(long, value_enum)]
    only: Vec<Part>,
    /// Reminders for the lateness test (default 10,000).
    #[arg(long)]
    lateness_n: Option<usize>,
    /// Seconds they are spread over (default 10).
    #[arg(long)]
    lateness_secs: Option<u64>,
    /// Reminders in the burst (default 100,000).
    #[arg(long)]
    burst_n: Option<usize>,
    /// Give up a drain after this many seconds (default 300).
    #[arg(long, default_value_t = 300)]
    burst_deadline: u64,
    /// Pending instances for the daemon test (default 1,000,000).
    #[arg(long)]
    daemon_n: Option<usize>,
    /// Idle window in seconds (default 60).
    #[arg(long)]
    idle_secs: Option<u64>,
    /// The `kairos` binary (default: build it with `cargo build --release -p
    /// kairos-cli` and use target/release/kairos).
    #[arg(long)]
    kairos: Option<PathBuf>,
    /// Skip the Redis comparison.
    #[arg(long)]
    no_redis: bool,
    /// Skip the strace run of the daemon.
    #[arg(long)]
    no_strace: bool,
    /// Where the temporary directory goes (default: the system's).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Keep the temporary directory (its path is printed).
    #[arg(long)]
    keep: bool,
    /// Seed for the triggers.
    #[arg(long, default_value_t = 2026)]
    seed: u64,
    /// Stop everything after this many seconds (default 1800, quick 300).
    #[arg(long)]
    time_limit: Option<u64>,
}

#[cfg(unix)]
fn first_line(path: &str, prefix: &str) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix(prefix)
                .map(|v| v.trim_start_matches([' ', '\t', ':']).trim().to_owned())
        })
        .unwrap_or_else(|| "?".into())
}

#[cfg(unix)]
/// The filesystem `dir` is on, from /proc/mounts (longest matching mount point).
fn filesystem(dir: &Path) -> String {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    mounts
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() > 2 && dir.starts_with(f[1]))
                .then(|| (f[1].len(), format!("{} on {} ({})", f[0], f[1], f[2])))
        })
        .max()
        .map_or_else(|| "?".into(), |(_, s)| s)
}

#[cfg(unix)]
fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("engine-bench: {e:#}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(unix)]
/// Runs the parts asked for; `Ok(false)` if one of them failed.
fn run() -> Result<bool> {
    let a = Args::parse();
    let q = a.quick;
    let o = Opts {
        lateness_n: a.lateness_n.unwrap_or(if q { 1_000 } else { 10_000 }),
        lateness_span: Duration::from_secs(a.lateness_secs.unwrap_or(if q { 2 } else { 10 })),
        burst_n: a.burst_n.unwrap_or(if q { 10_000 } else { 100_000 }),
        burst_deadline: Duration::from_secs(a.burst_deadline),
        daemon_n: a.daemon_n.unwrap_or(if q { 100_000 } else { 1_000_000 }),
        idle: Duration::from_secs(a.idle_secs.unwrap_or(if q { 5 } else { 60 })),
        redis: !a.no_redis,
        strace: !a.no_strace,
        seed: a.seed,
        kairos: a.kairos.clone(),
    };
    let limit = a.time_limit.unwrap_or(if a.quick { 300 } else { 1800 });
    procs::install_cleanup(Duration::from_secs(limit))?;
    let base = a.dir.clone().unwrap_or_else(std::env::temp_dir);
    let tmp = tempfile::Builder::new()
        .prefix("engine-bench-")
        .tempdir_in(&base)?;
    procs::register_dir(tmp.path());
    let dir = tmp.path().to_owned();
    println!(
        "engine-bench {} (release: {})",
        env!("CARGO_PKG_VERSION"),
        !cfg!(debug_assertions)
    );
    println!(
        "machine: {}, {} cores, {} MemTotal, kernel {}, load average {} at start",
        first_line("/proc/cpuinfo", "model name"),
        std::thread::available_parallelism().map_or(0, std::num::NonZero::get),
        first_line("/proc/meminfo", "MemTotal"),
        std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default()
            .trim(),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" "),
    );
    println!("files: {} on {}", dir.display(), filesystem(&dir));
    let parts = if a.only.is_empty() {
        vec![Part::Lateness, Part::Burst, Part::Daemon]
    } else {
        a.only.clone()
    };
    let mut rows = Vec::new();
    let mut failed = false;
    for p in parts {
        let r = match p {
            Part::Lateness => parts::lateness(&o, &dir, &mut rows),
            Part::Burst => parts::burst(&o, &dir, &mut rows),
            Part::Daemon => parts::daemon(&o, &dir, &mut rows),
        };
        if let Err(e) = r {
            failed = true;
            println!("{p:?} FAILED: {e:#}");
        }
    }
    println!("\n| what | Kairos | baseline | target |\n| --- | --- | --- | --- |");
    for r in &rows {
        println!("{r}");
    }
    if a.keep {
        println!("kept {}", tmp.keep().display());
    }
    Ok(!failed)
}

#[cfg(not(unix))]
fn main() -> std::process::ExitCode {
    eprintln!(
        "engine-bench measures the Unix daemon (signals, /proc); it does not run on this platform"
    );
    std::process::ExitCode::FAILURE
}
