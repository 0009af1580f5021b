//! Part 1: acknowledgement propagation. `accounts` accounts × 2 devices
//! hold live sessions on one server (2,000 WebSockets at the default);
//! device `a` of account `k mod accounts` pushes dismiss number `k` at
//! `t0 + k / rate` (one `reminder.dismiss` op per `push`, spread evenly:
//! every account once a second at 1,000/s over 1,000 accounts) for `secs`.
//!
//! Measured per op, on one monotonic clock (every client is in this
//! process): `sent` just before the frame is written, `received` when device
//! `b`'s reader decodes the live `ops` holding it, `acked` when `a` reads
//! the `pushed` (durable) result. Every op is counted: lost = sent − received
//! (distinct), duplicates counted too. The index of an op travels in its key.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use kairos_proto::{ClientMsg, ServerMsg, decode_server, encode};
use tokio_tungstenite::tungstenite::Message;

use super::client::{Creds, Session, Stamper, Ws, dismiss, index_of};
use super::scrape;
use super::server::Server;
use super::{Row, Summary, ms, thousands};

/// Sessions opened at once.
const CONNECTING: usize = 64;

/// Per op: nanoseconds since `t0` (+1, so 0 means "not yet").
struct Times {
    t0: Instant,
    sent: Vec<AtomicU64>,
    received: Vec<AtomicU64>,
    acked: Vec<AtomicU64>,
    /// Op id → the dismiss's index `k` (op numbers are unique in the
    /// process, not per device: see `Stamper`).
    index: std::sync::Mutex<std::collections::HashMap<String, u64>>,
    dup: AtomicU64,
    stray: AtomicU64,
    broken: AtomicU64,
}

impl Times {
    fn stamp(&self) -> u64 {
        u64::try_from(self.t0.elapsed().as_nanos()).unwrap_or(u64::MAX) + 1
    }

    fn done(v: &[AtomicU64]) -> usize {
        v.iter().filter(|x| x.load(Ordering::Relaxed) != 0).count()
    }

    fn latencies(&self, to: &[AtomicU64]) -> Vec<Duration> {
        self.sent
            .iter()
            .zip(to)
            .filter_map(|(s, r)| {
                let (s, r) = (s.load(Ordering::Relaxed), r.load(Ordering::Relaxed));
                (s != 0 && r != 0).then(|| Duration::from_nanos(r.saturating_sub(s)))
            })
            .collect()
    }
}

/// Opens `a` and `b` sessions for every account, `CONNECTING` at a time.
///
/// # Errors
/// A session failed to reach `caught_up`.
/// Device `i` connects to `urls[i % urls.len()]` (with two instances: each
/// account's `a` to the first, its `b` to the second).
pub async fn connect_all(urls: &[&str], devices: &[Creds]) -> Result<Vec<Session>> {
    futures_util::stream::iter(devices.iter().enumerate())
        .map(|(i, c)| Session::start(urls[i % urls.len()], c, 0))
        .buffered(CONNECTING)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect()
}

/// Device `b`: records when each op arrives live.
async fn read_b(mut rx: SplitStream<Ws>, times: Arc<Times>) {
    while let Some(m) = rx.next().await {
        let Ok(Message::Text(t)) = m else {
            if m.is_err() || matches!(m, Ok(Message::Close(_))) {
                times.broken.fetch_add(1, Ordering::Relaxed);
                return;
            }
            continue;
        };
        let at = times.stamp();
        match decode_server(t.as_str()) {
            Ok(ServerMsg::Ops { ops, .. }) => {
                for o in ops {
                    let slot = index_of(&o.op.body)
                        .and_then(|i| times.received.get(usize::try_from(i).ok()?));
                    match slot {
                        Some(s) if s.swap(at, Ordering::Relaxed) == 0 => {}
                        Some(_) => _ = times.dup.fetch_add(1, Ordering::Relaxed),
                        None => _ = times.stray.fetch_add(1, Ordering::Relaxed),
                    }
                }
            }
            _ => _ = times.stray.fetch_add(1, Ordering::Relaxed),
        }
    }
    times.broken.fetch_add(1, Ordering::Relaxed);
}

/// Device `a` of account `a`: records each `pushed` result.
async fn read_a(mut rx: SplitStream<Ws>, times: Arc<Times>) {
    while let Some(Ok(m)) = rx.next().await {
        let Message::Text(t) = m else { continue };
        let at = times.stamp();
        if let Ok(ServerMsg::Pushed { results }) = decode_server(t.as_str()) {
            for r in results {
                let k = times.index.lock().ok().and_then(|mut m| m.remove(&r.id));
                if let Some(s) = k
                    .and_then(|k| usize::try_from(k).ok())
                    .and_then(|k| times.acked.get(k))
                {
                    s.store(at, Ordering::Relaxed);
                }
            }
        } else {
            times.stray.fetch_add(1, Ordering::Relaxed);
        }
    }
    times.broken.fetch_add(1, Ordering::Relaxed);
}

/// Runs the part on a started server with `accounts` from the fleet; with
/// `other` (a second instance on the same PostgreSQL database) every `b`
/// is connected to it, so each op crosses from one instance to the other.
///
/// # Errors
/// Sessions cannot be opened or a send fails.
pub async fn run(
    server: &Server,
    other: Option<&Server>,
    fleet: &[[Creds; 2]],
    rate: u64,
    secs: u64,
    rows: &mut Vec<Row>,
) -> Result<()> {
    let accounts = fleet.len() as u64;
    let total = rate * secs;
    let t = Instant::now();
    let flat: Vec<Creds> = fleet.iter().flat_map(|p| p.iter().cloned()).collect();
    let urls: Vec<&str> = std::iter::once(server)
        .chain(other)
        .map(|s| s.url.as_str())
        .collect();
    let sessions = connect_all(&urls, &flat).await?;
    let connect = t.elapsed();
    let (rss, pss, _) = server.memory();
    println!(
        "  {} sessions caught up in {connect:.2?}; server VmRSS {rss} kB, Pss {pss} kB",
        sessions.len()
    );
    let times = Arc::new(Times {
        t0: Instant::now(),
        sent: (0..total).map(|_| AtomicU64::new(0)).collect(),
        received: (0..total).map(|_| AtomicU64::new(0)).collect(),
        acked: (0..total).map(|_| AtomicU64::new(0)).collect(),
        index: std::sync::Mutex::new(std::collections::HashMap::new()),
        dup: AtomicU64::new(0),
        stray: AtomicU64::new(0),
        broken: AtomicU64::new(0),
    });
    let mut senders: Vec<(SplitSink<Ws, Message>, Stamper)> = Vec::new();
    let mut keep = Vec::new();
    let mut it = sessions.into_iter();
    for _ in 0..accounts {
        let (Some(sa), Some(sb)) = (it.next(), it.next()) else {
            bail!("fewer sessions than devices");
        };
        let (ws, stamper) = sa.into_parts();
        let (tx, rx) = ws.split();
        tokio::spawn(read_a(rx, times.clone()));
        senders.push((tx, stamper));
        let (txb, rxb) = sb.ws.split();
        tokio::spawn(read_b(rxb, times.clone()));
        keep.push(txb);
    }
    let mut seen = Vec::new();
    for url in &urls {
        seen.push(scrape::metrics(url).await?);
    }
    let cpu0 = server.cpu();
    let start = tokio::time::Instant::now();
    let t_start = Instant::now();
    let gap = Duration::from_secs(1).as_nanos() / u128::from(rate.max(1));
    let mut lag = Duration::ZERO;
    for k in 0..total {
        let due = start + Duration::from_nanos(u64::try_from(gap * u128::from(k)).unwrap_or(0));
        tokio::time::sleep_until(due).await;
        lag = lag.max(due.elapsed());
        let (tx, s) = &mut senders[usize::try_from(k % accounts)?];
        let op = s.op(dismiss(k));
        if let Ok(mut m) = times.index.lock() {
            m.insert(op.id.clone(), k);
        }
        let frame = encode(&ClientMsg::Push { ops: vec![op] });
        times.sent[usize::try_from(k)?].store(times.stamp(), Ordering::Relaxed);
        tx.send(Message::text(frame)).await?;
    }
    let sending = t_start.elapsed();
    let until = Instant::now() + Duration::from_secs(10);
    while (Times::done(&times.received) < times.sent.len()
        || Times::done(&times.acked) < times.sent.len())
        && Instant::now() < until
    {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let cpu = server.cpu() - cpu0;
    let wall = t_start.elapsed();
    let mut inside = Vec::new();
    for (i, (url, before)) in urls.iter().zip(&seen).enumerate() {
        let after = scrape::metrics(url).await?;
        let who = if urls.len() > 1 {
            format!("instance {}: ", i + 1)
        } else {
            String::new()
        };
        inside.extend(
            scrape::report(before, &after)
                .into_iter()
                .map(|l| format!("{who}{l}")),
        );
    }
    let received = Times::done(&times.received);
    let acked = Times::done(&times.acked);
    let lost = total - received as u64;
    let prop = Summary::of(times.latencies(&times.received));
    let ack = Summary::of(times.latencies(&times.acked));
    #[allow(clippy::cast_precision_loss)]
    let achieved = total as f64 / sending.as_secs_f64();
    println!(
        "  sent {} in {sending:.2?} ({achieved:.0}/s; scheduler lag max {lag:.2?}); \
         received live {received}, acked {acked}, duplicates {}, stray {}, broken sessions {}",
        thousands(total),
        times.dup.load(Ordering::Relaxed),
        times.stray.load(Ordering::Relaxed),
        times.broken.load(Ordering::Relaxed),
    );
    println!(
        "  server CPU {cpu:.2?} over {wall:.2?} ({:.0} % of one core)",
        100.0 * cpu.as_secs_f64() / wall.as_secs_f64()
    );
    let Some(prop) = prop else {
        bail!("no op arrived at any device b");
    };
    println!("  a send → b receives: {prop}");
    if let Some(ack) = &ack {
        println!("  a send → a reads pushed (durable): {ack}");
    }
    for line in &inside {
        println!("  {line}");
    }
    let what = format!(
        "{} dismisses/s for {secs} s, {} accounts × 2 devices",
        thousands(rate),
        thousands(accounts)
    );
    rows.push(Row::info(
        "ack: load",
        format!("{what}; {achieved:.0}/s achieved"),
    ));
    rows.push(Row::new(
        "ack: send → other device receives, p50",
        "≤ 10 ms",
        ms(prop.p50),
        prop.p50 <= Duration::from_millis(10),
    ));
    rows.push(Row::new(
        "ack: send → other device receives, p99",
        "≤ 50 ms",
        format!(
            "{} (p99.9 {}, max {})",
            ms(prop.p99),
            ms(prop.p999),
            ms(prop.max)
        ),
        prop.p99 <= Duration::from_millis(50),
    ));
    rows.push(Row::new(
        "ack: ops lost",
        "0",
        format!(
            "{lost} of {} (duplicates {})",
            thousands(total),
            times.dup.load(Ordering::Relaxed)
        ),
        lost == 0,
    ));
    if let Some(ack) = ack {
        rows.push(Row::info(
            "ack: send → `pushed` (durable)",
            format!("p50 {}, p99 {}", ms(ack.p50), ms(ack.p99)),
        ));
    }
    rows.push(Row::info(
        "ack: server CPU during the run",
        format!(
            "{:.0} % of one core",
            100.0 * cpu.as_secs_f64() / wall.as_secs_f64()
        ),
    ));
    drop(senders);
    drop(keep);
    Ok(())
}
