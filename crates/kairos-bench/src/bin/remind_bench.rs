//! `remind-bench`: 100,000 webhook reminders due in the same second (issue
//! #21 §3), drained by real `kairos-server` processes and, in the same run,
//! by the usual Redis design, to the bench's own HTTP receiver.
//!
//! ```text
//! make bench-remind                        # builds the binaries, full size
//! target/release/remind-bench --reminders 2000 --only redis --only pg
//! ```
//!
//! Parts (`--only`, repeatable; default all, in this order):
//! - `redis`: sorted set + Lua atomic pop, `appendfsync always`;
//! - `pg`: two instances on one throw-away PostgreSQL (fsync on);
//! - `kill`: the same, instance 1 killed (SIGKILL) halfway; the lease is
//!   `--lease-ms`;
//! - `sqlite`: one instance on SQLite;
//! - `ceiling`: no queue, the receiver and the POSTs alone (`--workers` ×
//!   `--concurrency` of the server's client): the most deliveries a
//!   second this machine allows (not in the default parts).
//!
//! Exits 1 if any delivery was lost or logically duplicated, or the store
//! disagrees (a `remind_sent` row per reminder, none left undelivered).
//! Methods are in `src/remind/` and in `docs/benchmarks.md`.

#[cfg(unix)]
#[allow(dead_code)]
#[path = "../engine/procs.rs"]
mod procs;
#[cfg(unix)]
#[allow(dead_code)]
#[path = "../remind/mod.rs"]
mod remind;
#[cfg(unix)]
#[allow(dead_code)]
#[path = "../sync/mod.rs"]
mod sync;

#[cfg(unix)]
use std::path::PathBuf;
#[cfg(unix)]
use std::process::ExitCode;
#[cfg(unix)]
use std::time::Duration;

#[cfg(unix)]
use anyhow::Result;
#[cfg(unix)]
use clap::{Parser, ValueEnum};

#[cfg(unix)]
use remind::{Drain, ceiling, kairos, pg, redis};

#[cfg(unix)]
/// The parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Part {
    Redis,
    Pg,
    Kill,
    Sqlite,
    Ceiling,
}

#[cfg(unix)]
/// Server reminders: N due at once, Kairos against Redis.
#[derive(Parser, Debug)]
#[command(name = "remind-bench", version)]
struct Args {
    /// Reminders, all due in the same second.
    #[arg(long, default_value_t = 100_000)]
    reminders: usize,
    /// Accounts they are spread over (one device and one webhook each; at
    /// most 4,999 reminders an account keep each account's replication to
    /// one round of the server's 5,000 ops).
    #[arg(long, default_value_t = 25)]
    accounts: usize,
    /// Run only these parts (repeatable).
    #[arg(long, value_enum)]
    only: Vec<Part>,
    /// The servers' reminder poll (`--remind-poll-ms`; the server's
    /// default), also the Redis workers' sleep when nothing is due.
    #[arg(long, default_value_t = 1_000)]
    poll_ms: u64,
    /// The claim lease in the `kill` part (`--remind-lease-ms`).
    #[arg(long, default_value_t = 5_000)]
    lease_ms: u64,
    /// From the first push to the due time: the pushes and the servers'
    /// planning must queue every reminder within it (default 15 s + 3 s per
    /// 1,000 reminders; two instances on PostgreSQL plan about 450 a second
    /// on a loaded 2-core machine).
    #[arg(long)]
    lead_secs: Option<u64>,
    /// Redis workers (as many as Kairos instances).
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Members per Redis pop and rows per Kairos claim
    /// (`--remind-batch`, the server's default 200).
    #[arg(long, default_value_t = 200)]
    batch: usize,
    /// POSTs in flight per Redis worker and per Kairos instance
    /// (`--remind-concurrency`, the server's default 32).
    #[arg(long, default_value_t = 32)]
    concurrency: usize,
    /// `kairos-server` (default: beside this binary).
    #[arg(long)]
    server: Option<PathBuf>,
    /// Where the temporary directory goes (default: the system's).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Stop everything after this many seconds.
    #[arg(long, default_value_t = 1800)]
    time_limit: u64,
}

#[cfg(unix)]
fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("remind-bench: {e:#}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(unix)]
fn run() -> Result<bool> {
    let a = Args::parse();
    anyhow::ensure!(
        a.accounts > 0 && a.reminders >= a.accounts && a.reminders.is_multiple_of(a.accounts),
        "--reminders must be a multiple of --accounts"
    );
    let bin = a
        .server
        .clone()
        .unwrap_or(std::env::current_exe()?.with_file_name("kairos-server"));
    anyhow::ensure!(
        bin.exists(),
        "{} not found: `make bench-remind` builds it",
        bin.display()
    );
    procs::install_cleanup(Duration::from_secs(a.time_limit))?;
    let base = a.dir.clone().unwrap_or_else(std::env::temp_dir);
    let tmp = tempfile::Builder::new()
        .prefix("remind-bench-")
        .tempdir_in(base)?;
    procs::register_dir(tmp.path());
    let parts = if a.only.is_empty() {
        vec![Part::Redis, Part::Pg, Part::Kill, Part::Sqlite]
    } else {
        a.only.clone()
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    println!(
        "remind-bench: {} reminders over {} accounts, poll {} ms; load average {}; sched autogroup {}",
        a.reminders,
        a.accounts,
        a.poll_ms,
        sync::loadavg(),
        sync::autogroup()
    );
    let results = rt.block_on(parts_run(&a, &parts, &bin, tmp.path()))?;
    println!("\nload average at the end: {}\n", sync::loadavg());
    Ok(report(&a, &results))
}

#[cfg(unix)]
async fn parts_run(
    a: &Args,
    parts: &[Part],
    bin: &std::path::Path,
    dir: &std::path::Path,
) -> Result<Vec<(Part, Drain)>> {
    let lead = Duration::from_secs(
        a.lead_secs
            .unwrap_or(15 + 3 * u64::try_from(a.reminders / 1000).unwrap_or(0)),
    );
    let needs_pg = parts.iter().any(|p| matches!(p, Part::Pg | Part::Kill));
    let cluster = if needs_pg {
        Some(pg::Cluster::start(&dir.join("pg"))?)
    } else {
        None
    };
    let mut out = Vec::new();
    for (k, &part) in parts.iter().enumerate() {
        println!("\n{part:?} (load average {}):", sync::loadavg());
        let d = if part == Part::Ceiling {
            ceiling::run(a.reminders, a.accounts, a.workers, a.concurrency).await?
        } else if part == Part::Redis {
            let plan = redis::Plan {
                n: a.reminders,
                accounts: a.accounts,
                workers: a.workers,
                batch: a.batch,
                concurrency: a.concurrency,
                poll: Duration::from_millis(a.poll_ms),
            };
            redis::run(plan, Duration::from_secs(5), dir).await?
        } else {
            let run_dir = dir.join(format!("run-{k}"));
            std::fs::create_dir_all(&run_dir)?;
            let plan = kairos::Plan {
                bin,
                instances: if part == Part::Sqlite { 1 } else { 2 },
                n: a.reminders,
                accounts: a.accounts,
                lease_ms: if part == Part::Kill {
                    a.lease_ms
                } else {
                    60_000
                },
                poll_ms: a.poll_ms,
                concurrency: a.concurrency,
                batch: a.batch,
                lead,
                kill: part == Part::Kill,
                dir: &run_dir,
            };
            if part == Part::Sqlite {
                let data = run_dir.join("sqlite");
                kairos::run(&plan, &kairos::Store::Sqlite(data)).await?
            } else {
                let c = cluster
                    .as_ref()
                    .ok_or_else(|| anyhow::anyhow!("no cluster"))?;
                let name = format!("b{k}");
                let url = c.create(&name)?;
                let out = tokio::process::Command::new(bin)
                    .args(["--database", &url, "migrate"])
                    .output()
                    .await?;
                anyhow::ensure!(
                    out.status.success(),
                    "migrate: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                kairos::run(&plan, &kairos::Store::Postgres(c, name)).await?
            }
        };
        print_one(&d);
        out.push((part, d));
    }
    Ok(out)
}

#[cfg(unix)]
fn print_one(d: &Drain) {
    println!(
        "  delivered {} of {} ({} lost), {} POSTs: {} wire duplicates, {} logical duplicates; due → last {:.2?}, first → last {:.2?}",
        d.delivered,
        d.n,
        d.lost(),
        d.posts,
        d.wire_duplicates,
        d.logical_duplicates,
        d.since_due(),
        d.span()
    );
    let ms = remind::TIMELINE_MS;
    let line: Vec<String> = d.timeline.iter().map(u64::to_string).collect();
    println!(
        "  first receipts per {ms} ms from the due time: {}",
        line.join(" ")
    );
    if let Some(l) = &d.lateness {
        println!("  lateness (received − due): {l}");
    }
    if let Some(s) = &d.store {
        println!(
            "  store: remind_sent {}, distinct keys {}, not delivered {}",
            s[0], s[1], s[2]
        );
    }
    if let Some(k) = &d.kill {
        println!(
            "  kill at {} delivered: {} claims held; received again {:.2?} (first) to {:.2?} (all) after the kill; {} never",
            k.delivered_before, k.claims, k.first, k.all, k.missing
        );
    }
}

#[cfg(unix)]
fn report(a: &Args, results: &[(Part, Drain)]) -> bool {
    let name = |p: Part| match p {
        Part::Redis => "Redis ZSET + Lua pop, 2 workers".to_owned(),
        Part::Pg => "Kairos, 2 instances, PostgreSQL".to_owned(),
        Part::Kill => format!(
            "Kairos, 2 instances, PostgreSQL, one killed (lease {} ms)",
            a.lease_ms
        ),
        Part::Sqlite => "Kairos, 1 instance, SQLite".to_owned(),
        Part::Ceiling => format!(
            "No queue: {} workers × {} POSTs in flight",
            a.workers, a.concurrency
        ),
    };
    let redis = results
        .iter()
        .find(|(p, _)| *p == Part::Redis)
        .map(|(_, d)| d.span());
    println!(
        "| run | delivered | lost | wire dup. | logical dup. | due → last | first → last | vs Redis | lateness p50 | p99 | max |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    let mut ok = true;
    for (p, d) in results {
        let ratio = redis.map_or(String::new(), |r| {
            format!("{:.2}×", d.span().as_secs_f64() / r.as_secs_f64().max(1e-3))
        });
        let l = d.lateness.as_ref();
        let f =
            |x: Option<Duration>| x.map_or(String::new(), |x| format!("{:.2} s", x.as_secs_f64()));
        println!(
            "| {} | {} | {} | {} | {} | {:.2} s | {:.2} s | {ratio} | {} | {} | {} |",
            name(*p),
            sync::thousands(d.delivered as u64),
            d.lost(),
            d.wire_duplicates,
            d.logical_duplicates,
            d.since_due().as_secs_f64(),
            d.span().as_secs_f64(),
            f(l.map(|l| l.p50)),
            f(l.map(|l| l.p99)),
            f(l.map(|l| l.max)),
        );
        if let Err(e) = remind::check(&name(*p), d) {
            println!("FAILED: {e}");
            ok = false;
        }
    }
    ok
}

#[cfg(not(unix))]
fn main() {
    eprintln!("remind-bench runs on Unix only");
}
