//! Times the engine's paths that read and write stored series, for
//! `docs/benchmarks.md` (issue #18 §2: typed series instead of ICS text):
//!
//! 1. import: `N` daily series (one alarm each, a third in a named zone)
//!    into a fresh database file;
//! 2. materialise: `Engine::materialise` over all of them, from a
//!    `materialised_until` reset to now (every stored row read back and
//!    planned; the instances exist already, so inserts are no-ops);
//! 3. re-import: the same file with every summary changed (every series
//!    rewritten, its pending reminders recomputed).
//!
//! `cargo run --release -p kairos-engine --example series_bench -- [N] [ROUNDS]`
//! (defaults 2000 and 5). Prints the median of `ROUNDS` and every round.

use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, Duration, Utc};
use kairos_core::Limits;
use kairos_engine::clock::ManualClock;
use kairos_engine::engine::{Config, Engine};
use kairos_engine::import::{MATERIALISED_UNTIL, import};
use kairos_store::Store;

fn file(n: usize, tag: &str) -> String {
    let mut s = String::from("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bench//EN\r\n");
    for i in 0..n {
        let start = match i % 3 {
            0 => format!("DTSTART;TZID=Europe/Berlin:20261201T{:02}0000", 8 + i % 10),
            1 => format!("DTSTART:20261201T{:02}3000Z", i % 24),
            _ => format!("DTSTART:20261201T{:02}1500", 6 + i % 12),
        };
        s.push_str(&format!(
            "BEGIN:VEVENT\r\nUID:bench-{i}@kairos\r\nDTSTAMP:20261101T000000Z\r\n{start}\r\n\
             DURATION:PT30M\r\nRRULE:FREQ=DAILY;INTERVAL={}\r\nSUMMARY:{tag} {i}\r\n\
             BEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:r\r\nTRIGGER:-PT10M\r\nEND:VALARM\r\n\
             END:VEVENT\r\n",
            1 + i % 3
        ));
    }
    s.push_str("END:VCALENDAR\r\n");
    s
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(Ok(2000), |a| a.parse())?;
    let rounds: usize = args.next().map_or(Ok(5), |a| a.parse())?;
    let limits = Limits::default();
    let first = kairos_core::ics::parse_calendar(file(n, "Meeting").as_bytes(), &limits)?;
    let second = kairos_core::ics::parse_calendar(file(n, "Moved").as_bytes(), &limits)?;
    let now: DateTime<Utc> = "2026-12-05T12:00:00Z".parse()?;
    let horizon = Duration::hours(48);
    let config = Config {
        horizon,
        ..Config::default()
    };
    let (mut imp, mut mat, mut re) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let dir = tempfile::tempdir()?;
        let mut store = Store::open(dir.path().join("bench.db"))?;
        let t = Instant::now();
        import(&mut store, "bench", &first, now, horizon, config.floating)?;
        imp.push(t.elapsed().as_secs_f64() * 1e3);

        let mut engine = Engine::new(
            store,
            Arc::new(ManualClock::new(now)),
            Vec::new(),
            config.clone(),
        );
        engine
            .store()
            .meta_set(MATERIALISED_UNTIL, &now.to_rfc3339())?;
        let t = Instant::now();
        engine.materialise()?;
        mat.push(t.elapsed().as_secs_f64() * 1e3);

        let t = Instant::now();
        import(
            engine.store(),
            "bench",
            &second,
            now,
            horizon,
            config.floating,
        )?;
        re.push(t.elapsed().as_secs_f64() * 1e3);
    }
    println!("series {n}, rounds {rounds} (ms; median, then every round)");
    for (name, v) in [("import", imp), ("materialise", mat), ("re-import", re)] {
        let all: Vec<String> = v.iter().map(|x| format!("{x:.1}")).collect();
        let mut v = v;
        println!("{name:<12} {:>8.1}   [{}]", median(&mut v), all.join(", "));
    }
    Ok(())
}
