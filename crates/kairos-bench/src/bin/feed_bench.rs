//! `feed-bench`: what a no-change refresh of an ICS subscription costs
//! (issue #19 §1: "a 304 costs nothing", target ≤ 5 ms of CPU).
//!
//! ```text
//! cargo run --release -p kairos-bench --bin feed-bench [-- --refreshes 500 --events 2000]
//! ```
//!
//! A local HTTP/1.1 server on 127.0.0.1:0 (its own thread) serves a feed
//! of `--events` events with an `ETag`, and 304 to a request carrying it;
//! every answer closes the connection, as an hourly refresh finds it
//! (so each refresh pays a TCP connect). A real SQLite file is subscribed
//! (one 200), then the host's path is run `--refreshes` times:
//! `Refresher::refresh_due` (read the subscriptions, GET with
//! `If-None-Match`, 304, record the refresh time). CPU is the refreshing
//! thread's user + system time (`getrusage(RUSAGE_THREAD)`: the client
//! runs on this thread's single-threaded runtime), also shown for the
//! whole process (server thread included), and wall time.

#[cfg(target_os = "linux")]
fn main() -> anyhow::Result<()> {
    linux::main()
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("feed-bench measures thread CPU time with RUSAGE_THREAD: Linux only");
}

#[cfg(target_os = "linux")]
mod linux {
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;
    use std::time::{Duration as StdDuration, Instant};

    use anyhow::{Context, Result, bail};
    use chrono::{Duration, TimeZone, Utc};
    use clap::Parser;
    use kairos_feeds::{Fetcher, Limits, Outcome, Refresher};
    use nix::sys::resource::{UsageWho, getrusage};

    #[derive(Parser)]
    struct Args {
        /// How many no-change refreshes to time.
        #[arg(long, default_value_t = 500)]
        refreshes: u32,
        /// Events in the feed (parsed once, at subscribe).
        #[arg(long, default_value_t = 2000)]
        events: u32,
    }

    const ETAG: &str = "\"bench-v1\"";

    fn feed(n: u32) -> String {
        let mut s = String::from("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:bench\r\n");
        for i in 0..n {
            let day = 1 + i % 28;
            let hour = 8 + i % 10;
            s.push_str(&format!(
                "BEGIN:VEVENT\r\nUID:e{i}@bench\r\nSUMMARY:Event {i}\r\n\
                 DTSTART:202701{day:02}T{hour:02}0000Z\r\nDURATION:PT1H\r\n\
                 BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT15M\r\nEND:VALARM\r\nEND:VEVENT\r\n"
            ));
        }
        s.push_str("END:VCALENDAR\r\n");
        s
    }

    fn serve(listener: TcpListener, body: String) {
        for sock in listener.incoming() {
            let Ok(mut sock) = sock else { return };
            let Ok(clone) = sock.try_clone() else {
                continue;
            };
            let mut reader = BufReader::new(clone);
            let mut matched = false;
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                let l = line.to_ascii_lowercase();
                if l.starts_with("if-none-match:") && l.contains("bench-v1") {
                    matched = true;
                }
                line.clear();
            }
            let _ = if matched {
                write!(
                    sock,
                    "HTTP/1.1 304 Not Modified\r\nETag: {ETAG}\r\nConnection: close\r\n\r\n"
                )
            } else {
                write!(
                    sock,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/calendar\r\nETag: {ETAG}\r\n\
                     Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                )
            };
        }
    }

    fn cpu(who: UsageWho) -> Result<StdDuration> {
        let u = getrusage(who)?;
        let t = |tv: nix::sys::time::TimeVal| {
            StdDuration::from_secs(u64::try_from(tv.tv_sec()).unwrap_or(0))
                + StdDuration::from_micros(u64::try_from(tv.tv_usec()).unwrap_or(0))
        };
        Ok(t(u.user_time()) + t(u.system_time()))
    }

    pub fn main() -> Result<()> {
        let args = Args::parse();
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let url = format!("http://{}/bench.ics", listener.local_addr()?);
        let body = feed(args.events);
        let size = body.len();
        std::thread::spawn(move || serve(listener, body));

        let dir = tempfile::tempdir()?;
        let mut store = kairos_store::Store::open(dir.path().join("kairos.db"))?;
        let r = Refresher {
            fetcher: Fetcher::new(Limits::default())?,
            horizon: Duration::hours(48),
            floating: chrono_tz::UTC,
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let t0 = Utc
            .with_ymd_and_hms(2026, 12, 31, 8, 0, 0)
            .single()
            .context("time")?;
        let t = Instant::now();
        let first =
            rt.block_on(r.subscribe(&mut store, &url, Some("Bench"), Duration::hours(1), t0))?;
        let first_ms = t.elapsed().as_secs_f64() * 1e3;
        let Outcome::Updated { report, .. } = first.outcome else {
            bail!("the first fetch did not apply: {:?}", first.outcome);
        };

        let (thread0, proc0, wall0) = (
            cpu(UsageWho::RUSAGE_THREAD)?,
            cpu(UsageWho::RUSAGE_SELF)?,
            Instant::now(),
        );
        for i in 1..=args.refreshes {
            // Each round a day later: the subscription is due every time.
            let now = t0 + Duration::days(i64::from(i));
            let done = rt.block_on(r.refresh_due(&mut store, now, false))?;
            match done.as_slice() {
                [d] if matches!(d.outcome, Outcome::NotModified) => {}
                other => bail!("refresh {i}: expected one 304, got {other:?}"),
            }
        }
        let n = f64::from(args.refreshes);
        let per = |d: StdDuration| d.as_secs_f64() * 1e3 / n;
        let thread_ms = per(cpu(UsageWho::RUSAGE_THREAD)? - thread0);
        let proc_ms = per(cpu(UsageWho::RUSAGE_SELF)? - proc0);
        let wall_ms = per(wall0.elapsed());
        println!(
            "{}",
            serde_json::json!({
                "feed_events": args.events, "feed_bytes": size,
                "first_fetch_ms": (first_ms * 10.0).round() / 10.0,
                "first_fetch_events_stored": report.changed,
                "refreshes_304": args.refreshes,
                "cpu_ms_per_304_refresh_thread": (thread_ms * 1000.0).round() / 1000.0,
                "cpu_ms_per_304_refresh_process": (proc_ms * 1000.0).round() / 1000.0,
                "wall_ms_per_304_refresh": (wall_ms * 1000.0).round() / 1000.0,
                "target_cpu_ms": 5.0,
            })
        );
        if thread_ms > 5.0 {
            bail!("a 304 refresh took {thread_ms:.3} ms of CPU (target ≤ 5 ms)");
        }
        Ok(())
    }
}
