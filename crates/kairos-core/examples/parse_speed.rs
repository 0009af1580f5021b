//! Times reading iCalendar files, strict ([`ics::parse_calendar`]) and lenient
//! ([`ics::parse_calendar_lenient`]), for `docs/benchmarks.md`.
//!
//! ```sh
//! cargo run --release -p kairos-core --example parse_speed -- [--runs N] [--strict-only] FILE...
//! ```
//!
//! Prints one line per file and mode: events read, median and minimum wall
//! time of N runs (after one warm-up run). `--strict-only` is what the same
//! example does when built against a core without lenient reading.

#![allow(clippy::print_stdout)]

use std::time::{Duration, Instant};

use kairos_core::{Limits, ics};

fn time(runs: usize, mut f: impl FnMut() -> usize) -> (usize, Duration, Duration) {
    let events = f(); // warm-up (and page cache)
    let mut all: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed()
        })
        .collect();
    all.sort();
    let median = all.get(all.len() / 2).copied().unwrap_or_default();
    let min = all.first().copied().unwrap_or_default();
    (events, median, min)
}

fn main() {
    let mut runs = 20;
    let mut strict_only = false;
    let mut files = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--runs" => runs = args.next().and_then(|n| n.parse().ok()).unwrap_or(runs),
            "--strict-only" => strict_only = true,
            _ => files.push(a),
        }
    }
    let limits = Limits::default();
    for path in &files {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("{path}: {e}");
                std::process::exit(1);
            }
        };
        let show = |mode: &str, (events, median, min): (usize, Duration, Duration)| {
            println!(
                "{mode:8} {path}: {events} events, median {:.2} ms, min {:.2} ms ({runs} runs, {:.1} MB)",
                median.as_secs_f64() * 1e3,
                min.as_secs_f64() * 1e3,
                bytes.len() as f64 / 1e6
            );
        };
        show(
            "strict",
            time(runs, || {
                ics::parse_calendar(&bytes, &limits).map_or(0, |c| c.events.len())
            }),
        );
        if !strict_only {
            show(
                "lenient",
                time(runs, || {
                    ics::parse_calendar_lenient(&bytes, &limits).map_or(0, |(c, _)| c.events.len())
                }),
            );
        }
    }
}
