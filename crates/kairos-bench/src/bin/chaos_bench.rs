//! `chaos-bench`: the SIGKILL window measured on the real daemon (issue #20
//! §2). Each run: 2,000 reminders due in a 3 s burst about 6 s ahead, `kairos
//! daemon --sink stdout` on a real SQLite file, SIGKILL when half have been
//! received, 3 s down, restart; lost and repeated keys counted, and every
//! repeat checked for `"repeat":true`. Ten runs, a table and totals.
//!
//! ```text
//! cargo build --release -p kairos-cli -p kairos-bench --bin chaos-bench
//! target/release/chaos-bench --kairos target/release/kairos
//! ```
//!
//! The method is in `src/chaos/mod.rs` and `docs/benchmarks.md`. Exit status
//! 1 if any run lost a reminder, repeated more than `--max-repeats` keys, or
//! printed a repeat without the mark.

// Measures the Linux daemon (signals, /proc, strace, posix_fadvise,
// RLIMIT_NOFILE): built on Unix only; elsewhere `main` just says so.

// The engine bench's helpers (child processes, populating a database); this
// bin uses a few of them.
#[cfg(unix)]
#[allow(dead_code)]
#[path = "../engine/mod.rs"]
mod engine;

#[cfg(unix)]
#[path = "../chaos/mod.rs"]
mod chaos;

#[cfg(unix)]
use std::path::PathBuf;
#[cfg(unix)]
use std::process::ExitCode;
#[cfg(unix)]
use std::time::Duration;

#[cfg(unix)]
use anyhow::Result;
#[cfg(unix)]
use clap::Parser;

#[cfg(unix)]
use chaos::{Plan, Shape};
#[cfg(unix)]
use engine::{parts, procs};

#[cfg(unix)]
/// SIGKILL a daemon mid-burst, restart it, count what was lost and repeated.
#[derive(Parser, Debug)]
#[command(name = "chaos-bench", version)]
struct Args {
    /// Runs (each on a fresh database, one kill each).
    #[arg(long, default_value_t = 10)]
    runs: usize,
    /// Reminders per run.
    #[arg(long, default_value_t = 2000)]
    n: usize,
    /// The burst starts this many seconds ahead.
    #[arg(long, default_value_t = 6)]
    ahead: u64,
    /// The burst lasts this many seconds.
    #[arg(long, default_value_t = 3)]
    spread: u64,
    /// Seconds the daemon stays dead.
    #[arg(long, default_value_t = 3)]
    down: u64,
    /// Trigger layout: whole seconds (many due at once) or even.
    #[arg(long, value_enum, default_value_t = Shape::Seconds)]
    shape: Shape,
    /// A run fails with more repeated keys than this.
    #[arg(long, default_value_t = 16)]
    max_repeats: usize,
    /// The `kairos` binary (default: build it and use target/release/kairos).
    #[arg(long)]
    kairos: Option<PathBuf>,
    /// Where the temporary directories go (default: the system's).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Stop everything after this many seconds.
    #[arg(long, default_value_t = 900)]
    time_limit: u64,
}

#[cfg(unix)]
fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("chaos-bench: {e:#}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(unix)]
fn run() -> Result<bool> {
    let a = Args::parse();
    procs::install_cleanup(Duration::from_secs(a.time_limit))?;
    let kairos = parts::kairos_binary(a.kairos.as_deref())?;
    let plan = Plan {
        n: a.n,
        ahead: Duration::from_secs(a.ahead),
        spread: Duration::from_secs(a.spread),
        down: Duration::from_secs(a.down),
        shape: a.shape,
        patience: Duration::from_secs(30),
    };
    let base = a.dir.clone().unwrap_or_else(std::env::temp_dir);
    println!(
        "chaos-bench: {} runs of {} reminders ({:?}) over {} s starting {} s ahead; SIGKILL at half, {} s down; binary {}",
        a.runs,
        a.n,
        a.shape,
        a.spread,
        a.ahead,
        a.down,
        kairos.display()
    );
    println!(
        "\n| run | received at kill | drained after kill | lost | repeated keys | repeats without mark | marked, first print | restart → all | database |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    );
    let (mut lost, mut repeated, mut unmarked, mut worst) = (0, 0, 0, 0);
    for i in 1..=a.runs {
        let tmp = tempfile::Builder::new()
            .prefix("chaos-bench-")
            .tempdir_in(&base)?;
        procs::register_dir(tmp.path());
        let o = chaos::run(&kairos, tmp.path(), &plan)?;
        println!(
            "| {i} | {} | {} | {} | {} | {} | {} | {} | {} |",
            o.at_kill,
            o.drained,
            o.lost,
            o.repeated,
            o.unmarked,
            o.marked_first,
            o.catch_up
                .map_or_else(|| "not all".into(), |d| format!("{:.2} s", d.as_secs_f64())),
            o.counters
        );
        lost += o.lost;
        repeated += o.repeated;
        unmarked += o.unmarked;
        worst = worst.max(o.repeated);
    }
    let ok = lost == 0 && unmarked == 0 && worst <= a.max_repeats;
    println!(
        "\ntotals: {} kills, {lost} lost, {repeated} repeated keys (most in one run: {worst}, limit {}), {unmarked} repeats without \"repeat\":true: {}",
        a.runs,
        a.max_repeats,
        if ok { "PASS" } else { "FAIL" }
    );
    Ok(ok)
}

#[cfg(not(unix))]
fn main() -> std::process::ExitCode {
    eprintln!(
        "chaos-bench measures the Unix daemon (signals, /proc); it does not run on this platform"
    );
    std::process::ExitCode::FAILURE
}
