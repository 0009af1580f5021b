//! The three parts as the bench prints them: each runs its measurements,
//! prints them with the target, and adds a row to the summary table.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use super::{bytes, dur, ms};

/// Sizes and switches, defaults resolved.
#[derive(Debug, Clone)]
pub struct Opts {
    /// Reminders in part 1.
    pub lateness_n: usize,
    /// The window they are spread over.
    pub lateness_span: Duration,
    /// Reminders in the burst.
    pub burst_n: usize,
    /// Longest drain.
    pub burst_deadline: Duration,
    /// Pending instances in part 3.
    pub daemon_n: usize,
    /// Idle window in part 3.
    pub idle: Duration,
    /// Compare with Redis.
    pub redis: bool,
    /// Run the daemon under strace too.
    pub strace: bool,
    /// Seed for the triggers.
    pub seed: u64,
    /// The `kairos` binary, if given.
    pub kairos: Option<PathBuf>,
}

/// The `kairos` binary: given, or built next to this one.
pub fn kairos_binary(given: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = given {
        return Ok(p.to_owned());
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    eprintln!("building the daemon: cargo build --release -p kairos-cli");
    let ok = Command::new(cargo)
        .args(["build", "--release", "--quiet", "-p", "kairos-cli"])
        .current_dir(&root)
        .status()
        .context("running cargo")?
        .success();
    if !ok {
        bail!(
            "`cargo build --release -p kairos-cli` failed; pass --kairos PATH to use another binary"
        );
    }
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    Ok(target.join("release/kairos"))
}

/// The 1-minute load average now (the machine is shared: say how busy it was).
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into())
}

/// `met` or `NOT met`.
#[must_use]
pub fn verdict(ok: bool) -> &'static str {
    if ok { "met" } else { "NOT met" }
}

/// Part 1, printed; its summary row is pushed on `rows`.
///
/// # Errors
/// The part failed.
pub fn lateness(a: &Opts, dir: &Path, rows: &mut Vec<String>) -> Result<()> {
    let (n, span) = (a.lateness_n, a.lateness_span);
    println!(
        "\n== 1. lateness: {n} reminders, triggers uniform over {span:?} (seed {}); load {} ==",
        a.seed,
        load()
    );
    let estimate = super::lateness::insert_estimate(dir, n)?;
    let k = super::lateness::kairos(dir, n, span, a.seed, estimate)?;
    let s = super::lateness::scanner(dir, n, span, a.seed, estimate)?;
    for r in [&k, &s] {
        let l = r.lateness;
        println!(
            "{:<20} {}/{} delivered ({} distinct, {} early): p50 {}, p99 {}, max {} (min {}); insert {}; {}",
            r.who,
            r.delivered,
            r.n,
            r.distinct,
            r.early,
            ms(l.p50),
            ms(l.p99),
            ms(l.max),
            ms(l.min),
            dur(r.insert),
            r.note
        );
    }
    let ok = k.delivered == n && k.distinct == n && k.lateness.p99 <= 5_000;
    println!(
        "target p99 <= 5 ms: {} (Kairos p99 {})",
        verdict(ok),
        ms(k.lateness.p99)
    );
    rows.push(format!(
        "| lateness p50 / p99 / max, {n} over {span:?} | {} / {} / {} | scanner {} / {} / {} | p99 ≤ 5 ms: {} |",
        ms(k.lateness.p50), ms(k.lateness.p99), ms(k.lateness.max),
        ms(s.lateness.p50), ms(s.lateness.p99), ms(s.lateness.max), verdict(ok)
    ));
    Ok(())
}

/// Part 2, printed.
///
/// # Errors
/// The part failed.
pub fn burst(a: &Opts, dir: &Path, rows: &mut Vec<String>) -> Result<()> {
    let (n, deadline) = (a.burst_n, a.burst_deadline);
    println!(
        "\n== 2. burst: {n} reminders due at one instant, 1 s overdue at start; load {} ==",
        load()
    );
    let k = super::burst::kairos(dir, n, deadline)?;
    let opt = |d: Option<Duration>| d.map_or_else(|| format!("not within {deadline:?}"), dur);
    println!(
        "Kairos daemon::run    insert {}; drained in {} (first delivery at {}, last at {}); {}/{} delivered; \
         stats: {} on time, {} late, {} missed; counters: {}",
        dur(k.insert),
        opt(k.drain),
        opt(k.first_delivery),
        opt(k.last_delivery),
        k.delivered,
        k.n,
        k.stats.on_time,
        k.stats.late,
        k.stats.missed,
        k.counters
    );
    if let Some(d) = k.drain {
        #[allow(clippy::cast_precision_loss)]
        let rate = n as f64 / d.as_secs_f64();
        println!("                      {rate:.0} reminders/s");
    }
    let mut durable = None;
    if !a.redis {
        println!("Redis: skipped (--no-redis)");
    } else {
        println!("redis: {}", super::redis::version());
        for is_durable in [false, true] {
            let r = super::redis::burst(dir, n, is_durable, deadline)?;
            let mode = if is_durable {
                "--appendonly yes --appendfsync always (durable)"
            } else {
                "--save '' --appendonly no (NOT durable)"
            };
            let ratio = k.drain.map_or_else(
                || "n/a".into(),
                |d| format!("{:.1}x", d.as_secs_f64() / r.drain.as_secs_f64()),
            );
            println!(
                "Redis {mode}: load {}; drained in {} ({} EVALs, {}/{} popped, {} left); Kairos/Redis = {ratio}",
                dur(r.load),
                dur(r.drain),
                r.rounds,
                r.popped,
                r.n,
                r.left
            );
            if is_durable {
                durable = Some(r.drain);
            }
        }
    }
    let ok = k
        .drain
        .is_some_and(|d| d <= Duration::from_secs(2) && durable.is_none_or(|r| d <= r));
    println!(
        "target drain <= 2 s and no slower than durable Redis: {}",
        verdict(ok)
    );
    rows.push(format!(
        "| burst of {n}, durable drain | {} | Redis fsync-always {} | ≤ 2 s and ≤ Redis durable: {} |",
        opt(k.drain), durable.map_or_else(|| "skipped".into(), dur), verdict(ok)
    ));
    Ok(())
}

/// Part 3, printed.
///
/// # Errors
/// The part failed.
pub fn daemon(a: &Opts, dir: &Path, rows: &mut Vec<String>) -> Result<()> {
    let (n, idle) = (a.daemon_n, a.idle);
    let kairos = kairos_binary(a.kairos.as_deref())?;
    println!(
        "\n== 3. kairos daemon: {n} pending instances over [now + 1 h, now + 365 d), idle {idle:?}; load {} ==",
        load()
    );
    println!("binary: {}", kairos.display());
    let r = super::daemon::run(dir, &kairos, n, idle, a.strace, a.seed)?;
    println!(
        "database: {} after inserting in {}",
        bytes(r.db_bytes),
        dur(r.insert)
    );
    let w = &r.warm;
    println!(
        "warm start: armed {} after spawn; VmRSS {} kB armed, {} kB after idle; VmHWM {} kB; {} thread(s); {}",
        dur(w.armed),
        w.rss_armed_kb,
        w.rss_end_kb,
        w.hwm_kb,
        w.threads,
        w.exit
    );
    if let Some((v, i)) = w.switches {
        println!(
            "  context switches in {idle:?} (from 1 s after armed): {v} voluntary, {i} involuntary"
        );
    }
    if let Some(c) = &r.cold {
        println!(
            "cold start (db + binary evicted from page cache): armed {} after spawn; VmRSS {} kB",
            dur(c.armed),
            c.rss_armed_kb
        );
    }
    let traced = match &r.traced {
        Some(Ok(t)) => {
            println!(
                "under strace: armed {:.1} ms after execve; in {idle:?} after arming: {} epoll_wait returns, {} re-arms",
                t.armed * 1000.0,
                t.epoll_returns,
                t.rearms
            );
            for d in &t.detail {
                println!("  {d}");
            }
            Some(t)
        }
        Some(Err(e)) => {
            println!("under strace: FAILED: {e}");
            None
        }
        None => None,
    };
    let wakeups = traced.map_or(w.switches.map_or(0, |s| s.0), |t| t.epoll_returns as u64);
    let worst_armed = r.cold.as_ref().map_or(w.armed, |c| c.armed.max(w.armed));
    let rss_ok = w.hwm_kb <= 150 * 1024;
    let armed_ok = worst_armed <= Duration::from_millis(500);
    let wake_ok = wakeups <= 2 && w.switches.is_none_or(|s| s.0 <= 2);
    println!(
        "targets: RSS <= 150 MB {}; start to armed <= 500 ms {}; wake-ups in the idle window <= 2 {}",
        verdict(rss_ok),
        verdict(armed_ok),
        verdict(wake_ok)
    );
    rows.push(format!(
        "| database, {n} pending | {} | | |",
        bytes(r.db_bytes)
    ));
    rows.push(format!(
        "| daemon peak RSS (VmHWM) | {} kB | | ≤ 150 MB: {} |",
        w.hwm_kb,
        verdict(rss_ok)
    ));
    rows.push(format!(
        "| start to armed, warm / cold | {} / {} | | ≤ 500 ms: {} |",
        dur(w.armed),
        r.cold.as_ref().map_or_else(|| "-".into(), |c| dur(c.armed)),
        verdict(armed_ok)
    ));
    rows.push(format!(
        "| wake-ups in {idle:?} idle | {wakeups} (strace), {} voluntary switches | | ≤ 2: {} |",
        w.switches.map_or(0, |s| s.0),
        verdict(wake_ok)
    ));
    Ok(())
}
