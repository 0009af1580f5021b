//! `sync-bench`: sync between devices measured on real processes over
//! 127.0.0.1 (issue #10).
//!
//! ```text
//! make bench-sync                                  # builds the binaries, full sizes
//! target/release/sync-bench --quick                # a quick look
//! target/release/sync-bench --only ack --only idle # some parts
//! ```
//!
//! 1. `ack`: 1,000 accounts × 2 devices connected, 1,000 dismisses/s for
//!    30 s: send on `a` → live `ops` on `b` (p50, p99, lost);
//! 2. `e2e`: `kairos dismiss KEY` on a real device → the other device's
//!    daemon prints `withdrawn` (100 trials);
//! 3. `idle`: 10,000 idle authenticated connections: server memory;
//! 4. `catchup`: `kairos sync now` after 10,000 ops, and `upcoming` equal;
//! 5. `start`, `ingest`: start to `listening`, durable ingest (and Redis).
//!
//! Methods are in the modules' docs (`src/sync/`) and in
//! `docs/benchmarks.md`. Every child process is stopped at the end, on
//! Ctrl-C and at the time limit.

// Measures the Linux daemon (signals, /proc, strace, posix_fadvise,
// RLIMIT_NOFILE): built on Unix only; elsewhere `main` just says so.

#[cfg(unix)]
#[allow(dead_code)]
#[path = "../engine/procs.rs"]
mod procs;
#[cfg(unix)]
#[path = "../sync/mod.rs"]
mod sync;

#[cfg(unix)]
use std::path::PathBuf;
#[cfg(unix)]
use std::process::ExitCode;
#[cfg(unix)]
use std::time::Duration;

#[cfg(unix)]
use anyhow::{Context, Result};
#[cfg(unix)]
use clap::{Parser, ValueEnum};

#[cfg(unix)]
use sync::devices::{self, Kairos};
#[cfg(unix)]
use sync::server::Bin;
#[cfg(unix)]
use sync::{Row, fleet, thousands};

#[cfg(unix)]
/// The parts of the bench.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Part {
    Ack,
    E2e,
    Idle,
    Catchup,
    Start,
    Ingest,
}

#[cfg(unix)]
/// Sync benchmark: acknowledgement propagation, end to end, idle
/// connections, catch-up, start and ingest.
#[derive(Parser, Debug)]
#[command(name = "sync-bench", version)]
struct Args {
    /// Small sizes: 100 accounts at 100/s for 10 s, 1,000 idle, 20 trials,
    /// 1,000 catch-up ops, ingest 5 s.
    #[arg(long)]
    quick: bool,
    /// Run only these parts (repeatable).
    #[arg(long, value_enum)]
    only: Vec<Part>,
    /// Accounts (× 2 devices) connected in `ack` (default 1,000).
    #[arg(long)]
    accounts: Option<usize>,
    /// Dismisses per second in total (default 1,000).
    #[arg(long)]
    rate: Option<u64>,
    /// Seconds of load (default 30).
    #[arg(long)]
    secs: Option<u64>,
    /// Idle connections (default 10,000; even).
    #[arg(long)]
    idle: Option<usize>,
    /// Idle part: one device per account (default: both devices of half
    /// as many accounts), to tell per-account memory from per-connection.
    #[arg(long)]
    idle_one_per_account: bool,
    /// End-to-end trials (default 100).
    #[arg(long)]
    trials: Option<usize>,
    /// Ops to catch up (default 10,000).
    #[arg(long)]
    catchup_ops: Option<usize>,
    /// Concurrent devices for the ingest runs (default 1,4,16,64).
    #[arg(long, value_delimiter = ',')]
    ingest_devices: Option<Vec<usize>>,
    /// Seconds per ingest run (default 10).
    #[arg(long)]
    ingest_secs: Option<u64>,
    /// Skip the Redis comparison.
    #[arg(long)]
    no_redis: bool,
    /// The servers' store: this PostgreSQL database (run `kairos-server
    /// migrate --database URL` first) instead of SQLite files.
    #[arg(long)]
    database: Option<String>,
    /// 2: a second instance on the same `--database`; in `ack` each
    /// account's `b` is on it (live fan-out across instances), in `ingest`
    /// every other device pushes to it.
    #[arg(long, default_value_t = 1)]
    instances: u8,
    /// `kairos-server` (default: beside this binary).
    #[arg(long)]
    server: Option<PathBuf>,
    /// `kairos` (default: beside this binary).
    #[arg(long)]
    kairos: Option<PathBuf>,
    /// Where the temporary directory goes (default: the system's).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Keep the temporary directory (its path is printed).
    #[arg(long)]
    keep: bool,
    /// Stop everything after this many seconds (default 1800).
    #[arg(long, default_value_t = 1800)]
    time_limit: u64,
}

#[cfg(unix)]
fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("sync-bench: {e:#}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(unix)]
fn beside(name: &str, given: Option<PathBuf>) -> Result<PathBuf> {
    let p = match given {
        Some(p) => p,
        None => std::env::current_exe()?.with_file_name(name),
    };
    anyhow::ensure!(
        p.exists(),
        "{} not found: `make bench-sync` builds it",
        p.display()
    );
    Ok(p)
}

#[cfg(unix)]
#[allow(clippy::too_many_lines)]
fn run() -> Result<bool> {
    let a = Args::parse();
    let q = a.quick;
    let accounts = a.accounts.unwrap_or(if q { 100 } else { 1_000 });
    let rate = a.rate.unwrap_or(if q { 100 } else { 1_000 });
    let secs = a.secs.unwrap_or(if q { 10 } else { 30 });
    let idle = a.idle.unwrap_or(if q { 1_000 } else { 10_000 }).div_ceil(2) * 2;
    let trials = a.trials.unwrap_or(if q { 20 } else { 100 });
    let catchup_ops = a.catchup_ops.unwrap_or(if q { 1_000 } else { 10_000 });
    let ingest_devices = a
        .ingest_devices
        .clone()
        .unwrap_or_else(|| vec![1, 4, 16, 64]);
    let ingest_secs = a.ingest_secs.unwrap_or(if q { 5 } else { 10 });
    let parts = if a.only.is_empty() {
        vec![
            Part::Ack,
            Part::Idle,
            Part::E2e,
            Part::Catchup,
            Part::Start,
            Part::Ingest,
        ]
    } else {
        a.only.clone()
    };
    anyhow::ensure!(
        a.instances == 1 || (a.instances == 2 && a.database.is_some()),
        "--instances 2 needs --database (the instances share a PostgreSQL database)"
    );
    let bin = Bin(
        beside("kairos-server", a.server.clone())?,
        a.database.clone(),
    );
    let limits = sync::raise_nofile()?;
    procs::install_cleanup(Duration::from_secs(a.time_limit))?;
    let base = a.dir.clone().unwrap_or_else(std::env::temp_dir);
    let tmp = tempfile::Builder::new()
        .prefix("sync-bench-")
        .tempdir_in(&base)?;
    procs::register_dir(tmp.path());
    let dir = tmp.path().to_owned();
    println!(
        "sync-bench {} (release: {})",
        env!("CARGO_PKG_VERSION"),
        !cfg!(debug_assertions)
    );
    println!(
        "machine: {} cores, {} kB MemTotal, kernel {}, load average {} at start; RLIMIT_NOFILE {limits:?}; sched autogroup {}",
        std::thread::available_parallelism().map_or(0, std::num::NonZero::get),
        procs::status_field(std::path::Path::new("/proc/meminfo"), "MemTotal").unwrap_or(0),
        std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default()
            .trim(),
        sync::loadavg(),
        sync::autogroup(),
    );
    println!(
        "server: {} ({}, {} instance(s) in ack); files in {}",
        bin.0.display(),
        if bin.1.is_some() {
            "PostgreSQL"
        } else {
            "SQLite"
        },
        a.instances,
        dir.display()
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let mut rows = Vec::new();
    let mut failed = false;

    // The fleet: as many accounts as the largest part needs, made once.
    let need = [
        parts.contains(&Part::Ack).then_some(accounts),
        parts
            .contains(&Part::Idle)
            .then_some(if a.idle_one_per_account {
                idle
            } else {
                idle / 2
            }),
        parts
            .contains(&Part::Ingest)
            .then_some(ingest_devices.iter().sum()),
    ];
    let need = need.into_iter().flatten().max().unwrap_or(0);
    let data = dir.join("fleet");
    let fleet = if need > 0 {
        println!(
            "\nset-up: {} accounts × 2 devices (invite + join each)",
            thousands(need as u64)
        );
        let server = bin.start(&data)?;
        let f = match rt.block_on(fleet::provision(&bin, &server, need)) {
            Ok(f) => f,
            Err(e) => {
                println!(
                    "set-up failed; the server's log ends with:\n{}",
                    server.log_tail(20)
                );
                return Err(e);
            }
        };
        server.stop()?;
        println!(
            "  joins in {:.2?}; invites run again: {}",
            f.joins, f.retried
        );
        rows.push(Row::info(
            "set-up (not part of any figure)",
            format!(
                "{} accounts × 2 devices: {} `invite` processes in {:.1?} (4 at a time; {} run again), {} joins in {:.1?} (32 at a time)",
                thousands(need as u64),
                thousands(2 * need as u64),
                f.invites,
                f.retried,
                thousands(2 * need as u64),
                f.joins
            ),
        ));
        f.accounts
    } else {
        Vec::new()
    };

    for p in parts {
        println!("\n{p:?} (load average {})", sync::loadavg());
        let r: Result<()> = match p {
            Part::Ack => bin.start(&data).and_then(|s| {
                let other = if a.instances == 2 {
                    Some(bin.start(&dir.join("second"))?)
                } else {
                    None
                };
                rt.block_on(sync::ack::run(
                    &s,
                    other.as_ref(),
                    &fleet[..accounts],
                    rate,
                    secs,
                    &mut rows,
                ))?;
                if let Some(o) = other {
                    o.stop()?;
                }
                s.stop().map(|_| ())
            }),
            Part::Idle => bin.start(&data).and_then(|s| {
                let devs: Vec<_> = if a.idle_one_per_account {
                    fleet[..idle].iter().map(|p| p[0].clone()).collect()
                } else {
                    fleet[..idle / 2]
                        .iter()
                        .flat_map(|p| p.iter().cloned())
                        .collect()
                };
                rt.block_on(sync::idle::run(&s, &devs, &mut rows))?;
                s.stop().map(|_| ())
            }),
            Part::E2e | Part::Catchup => (|| {
                let k = Kairos(beside("kairos", a.kairos.clone())?);
                let s = bin.start(&dir.join(format!("{p:?}")))?;
                if p == Part::E2e {
                    devices::end_to_end(&k, &bin, &s, &dir, trials, &mut rows)?;
                } else {
                    devices::catch_up(&k, &bin, &s, &dir, catchup_ops, &mut rows)?;
                }
                s.stop().map(|_| ())
            })(),
            Part::Start => {
                sync::ingest::starts(&bin, &dir, (need > 0).then_some(data.as_path()), &mut rows)
            }
            Part::Ingest => bin.start(&data).and_then(|s| {
                let other = if a.instances == 2 {
                    Some(bin.start(&dir.join("second"))?)
                } else {
                    None
                };
                let mut from = 0;
                for &n in &ingest_devices {
                    let devs = fleet.get(from..from + n).context("fleet too small")?;
                    from += n;
                    rt.block_on(sync::ingest::ingest(
                        &s,
                        other.as_ref(),
                        devs,
                        n,
                        ingest_secs,
                        &mut rows,
                    ))?;
                    if !a.no_redis && which_redis() {
                        rt.block_on(sync::ingest::redis(&dir, devs, n, ingest_secs, &mut rows))?;
                    }
                }
                if let Some(o) = other {
                    o.stop()?;
                }
                s.stop().map(|_| ())
            }),
        };
        if let Err(e) = r {
            failed = true;
            println!("{p:?} FAILED: {e:#}");
            rows.push(Row::info(&format!("{p:?}"), format!("FAILED: {e:#}")));
        }
    }
    println!("\nload average {} at the end", sync::loadavg());
    println!("\n| what | target | result | met? |\n| --- | --- | --- | --- |");
    for r in &rows {
        println!("{r}");
    }
    if a.keep {
        println!("kept {}", tmp.keep().display());
    }
    Ok(!failed)
}

#[cfg(unix)]
fn which_redis() -> bool {
    std::process::Command::new("redis-server")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[cfg(not(unix))]
fn main() -> std::process::ExitCode {
    eprintln!(
        "sync-bench measures the Unix daemon (signals, /proc); it does not run on this platform"
    );
    std::process::ExitCode::FAILURE
}
