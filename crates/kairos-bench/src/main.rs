//! `kairos-bench`: how fast the calendar core expands a large calendar, and how
//! that compares with python-dateutil, in one run.
//!
//! 1. generates N recurring events (seeded, so every run sees the same calendar)
//!    and writes them as `events.ics` (for Kairos) and `events.json` (for Python);
//! 2. times `ics::parse_calendar`, `query::occurrences` and `alarms::alarms` over
//!    the window;
//! 3. times the same expansion in `dateutil_bench.py` and compares counts;
//! 4. times `alarms::next_alarm` ("what rings next?") many times.
//!
//! It measures the core only: no store, no engine. Build with `--release`;
//! figures from a debug build mean nothing. See docs/benchmarks.md.

mod breakdown;
mod dateutil;
mod events;
mod files;
mod report;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use chrono::{DateTime, Datelike, NaiveDate, Utc};
use clap::Parser;
use kairos_core::{Limits, alarms, ics, query};

use report::{Timing, fmt_dur};

/// Benchmark of the Kairos calendar core against python-dateutil.
#[derive(Parser)]
#[command(name = "kairos-bench", version, about)]
struct Args {
    /// Number of recurring events to generate.
    #[arg(long, default_value_t = 10_000)]
    events: usize,
    /// Length of the expansion window in years, from 2026-01-01T00:00:00Z.
    #[arg(long, default_value_t = 2)]
    years: u32,
    /// Seed of the event generator.
    #[arg(long, default_value_t = 2026)]
    seed: u64,
    /// Timed runs of parse, expansion and alarms (the median is reported).
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Timed runs of the next-trigger query.
    #[arg(long, default_value_t = 200)]
    next_runs: usize,
    /// "Now" for the next-trigger query.
    #[arg(long, default_value = "2026-06-15T12:00:00Z")]
    now: DateTime<Utc>,
    /// Where events.ics and events.json go (default: target/kairos-bench).
    #[arg(long)]
    out_dir: Option<PathBuf>,
    /// Skip the python-dateutil comparison.
    #[arg(long)]
    no_python: bool,
    /// Also show where the next-trigger query spends its time.
    #[arg(long)]
    breakdown: bool,
}

/// Runs `f` `runs` times (at least once); the timings and the last result.
fn timed<T>(runs: usize, mut f: impl FnMut() -> Result<T>) -> Result<(Timing, T)> {
    let runs = runs.max(1);
    let mut wall = Vec::with_capacity(runs);
    let mut last = None;
    let cpu0 = report::cpu_time();
    for _ in 0..runs {
        drop(last.take()); // free the previous result before the next run
        let t0 = Instant::now();
        let r = f()?;
        wall.push(t0.elapsed());
        last = Some(r);
    }
    let cpu = cpu0
        .zip(report::cpu_time())
        .map(|(a, b)| b.saturating_sub(a) / u32::try_from(runs).unwrap_or(u32::MAX));
    // At least one run happened, so `last` is set.
    let last = last.context("no run")?;
    Ok((Timing { wall, cpu }, last))
}

/// Step 5: the same question asked of a built index (`alarms::Upcoming`, what a
/// long-running process keeps): one build, then each query walks forward to
/// the trigger after the previous one, as a reminder loop does.
fn upcoming(
    cal: &kairos_core::model::Calendar,
    args: &Args,
    expected: Option<&alarms::AlarmHit<'_>>,
    floating: chrono_tz::Tz,
    limits: &kairos_core::Limits,
) -> Result<()> {
    let (t_build, mut up) = timed(3, || {
        Ok(alarms::Upcoming::new(cal, args.now, floating, limits)?)
    })?;
    println!(
        "Upcoming index build over {} events: {}",
        cal.events.len(),
        t_build.summary()
    );
    let mut wall = Vec::with_capacity(args.next_runs);
    let mut after = args.now;
    let cpu0 = report::cpu_time();
    for i in 0..args.next_runs.max(1) {
        let t0 = Instant::now();
        let hit = up.next_after(after)?;
        wall.push(t0.elapsed());
        let Some(hit) = hit else { break };
        if i == 0 && expected.map(|e| (e.trigger, e.key("b"))) != Some((hit.trigger, hit.key("b")))
        {
            println!(
                "WARNING: Upcoming disagrees with next_alarm at {}",
                args.now
            );
        }
        after = hit.trigger + chrono::Duration::seconds(1);
    }
    let runs = u32::try_from(wall.len()).unwrap_or(u32::MAX).max(1);
    let cpu = cpu0
        .zip(report::cpu_time())
        .map(|(a, b)| b.saturating_sub(a) / runs);
    let t = report::Timing { wall, cpu };
    let p99 = report::percentile(&t.wall, 99);
    println!(
        "Upcoming::next_after, walking {} triggers forward: {}",
        t.wall.len(),
        t.percentiles()
    );
    println!(
        "  target p99 < 10 ms: {}",
        if p99 < Duration::from_millis(10) {
            "met".to_owned()
        } else {
            format!("NOT met ({})", fmt_dur(p99))
        }
    );
    Ok(())
}

fn workspace() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

fn main() -> Result<()> {
    let args = Args::parse();
    let root = workspace();
    let from_date = NaiveDate::from_ymd_opt(2026, 1, 1).context("date")?;
    let to_date = from_date
        .with_year(2026 + i32::try_from(args.years).context("--years too large")?)
        .context("--years too large")?;
    let (from, to) = (
        from_date.and_time(chrono::NaiveTime::MIN).and_utc(),
        to_date.and_time(chrono::NaiveTime::MIN).and_utc(),
    );
    let floating = chrono_tz::UTC;
    let limits = Limits {
        max_results: usize::MAX,
        ..Limits::default()
    };

    println!(
        "kairos-bench {} (release: {})",
        env!("CARGO_PKG_VERSION"),
        !cfg!(debug_assertions)
    );
    println!("machine: {}", report::machine());
    println!(
        "events: {}, seed {}, window [{}, {}), floating times in UTC",
        args.events,
        args.seed,
        from.format("%Y-%m-%dT%H:%M:%SZ"),
        to.format("%Y-%m-%dT%H:%M:%SZ")
    );

    // 1. Generate.
    let specs = events::generate(args.events, args.seed, (from_date, to_date));
    let out_dir = args
        .out_dir
        .clone()
        .unwrap_or_else(|| root.join("target/kairos-bench"));
    std::fs::create_dir_all(&out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    let text = files::ics(&specs);
    let ics_path = out_dir.join("events.ics");
    let json_path = out_dir.join("events.json");
    std::fs::write(&ics_path, &text).with_context(|| format!("writing {}", ics_path.display()))?;
    std::fs::write(&json_path, files::json(&specs, from, to)?)
        .with_context(|| format!("writing {}", json_path.display()))?;
    println!(
        "wrote {} ({:.1} MB) and {}",
        ics_path.display(),
        text.len() as f64 / 1e6,
        json_path.display()
    );
    println!("mix: {}", report::mix(&specs));

    // 2. Parse, expand, alarms.
    let (t_parse, cal) = timed(args.runs, || {
        Ok(ics::parse_calendar(text.as_bytes(), &limits)?)
    })?;
    println!(
        "parse:        {}  ({} events)",
        t_parse.summary(),
        cal.events.len()
    );
    let (t_occ, occ) = timed(args.runs, || {
        Ok(query::occurrences(&cal, from, to, floating, &limits)?)
    })?;
    println!(
        "occurrences:  {}  ({} occurrences)",
        t_occ.summary(),
        occ.len()
    );
    let (t_alarm, hits) = timed(args.runs, || {
        Ok(alarms::alarms(&cal, from, to, floating, &limits)?)
    })?;
    println!(
        "alarms:       {}  ({} alarm triggers)",
        t_alarm.summary(),
        hits.len()
    );
    let kairos = &t_occ;

    // 3. dateutil.
    if args.no_python {
        println!("dateutil:     skipped (--no-python)");
    } else {
        let python = dateutil::interpreter(&root);
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("dateutil_bench.py");
        match dateutil::run(&python, &script, &json_path) {
            Ok(py) => report::compare(&py, kairos, &occ, &specs, &python),
            Err(e) => println!("WARNING: dateutil comparison not run: {e:#}"),
        }
    }

    // 4. Next trigger.
    let (t_next, next) = timed(args.next_runs, || {
        Ok(alarms::next_alarm(&cal, args.now, floating, &limits)?)
    })?;
    println!(
        "next_alarm after {} ({} runs): {}",
        args.now.format("%Y-%m-%dT%H:%M:%SZ"),
        t_next.wall.len(),
        t_next.percentiles()
    );
    let p99 = report::percentile(&t_next.wall, 99);
    println!(
        "  target p99 < 10 ms: {}",
        if p99 < Duration::from_millis(10) {
            "met".to_owned()
        } else {
            format!("NOT met ({})", fmt_dur(p99))
        }
    );
    report::check_next(next.as_ref(), &cal, args.now, to, floating, &limits)?;
    upcoming(&cal, &args, next.as_ref(), floating, &limits)?;
    if args.breakdown {
        breakdown::sorts(&occ, &hits, args.runs);
        breakdown::run(&cal, &specs, args.now, floating, &limits, args.runs)?;
    }
    Ok(())
}
