//! Part 5: server start and durable op ingest.
//!
//! - **Start**: from just before `spawn` to reading the `{"listening":…}`
//!   line, 20 starts on a fresh data directory each (creates the database),
//!   and 20 on the fleet's directory (thousands of accounts and devices);
//!   each server is stopped (SIGTERM) before the next starts.
//! - **Ingest**: `n` devices (device `a` of `n` accounts) push batches of
//!   500 `reminder.dismiss` ops, each waiting for its `pushed` (sent only
//!   once the ops are durable) before the next, paced at 9 batches/s per
//!   device (4,500 ops/s: under the protocol's 5,000 ops/s per-device
//!   limit); ops/s = results received / wall time.
//! - **Redis** (if `redis-server` is on `PATH`): the same frames (each op's
//!   JSON) through `RPUSH ops:ACCOUNT op…` per batch of 500, with
//!   `--appendonly yes --appendfsync always` (one `fsync` per write command:
//!   as durable as `pushed`), same devices, pacing and duration.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use futures_util::StreamExt;
use kairos_proto::{ClientMsg, ServerMsg};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::client::{Creds, Session, Stamper, dismiss, recv, send};
use super::server::{Bin, Server};
use super::{Row, Summary, ms, thousands};
use crate::procs::{Guard, free_port};

/// Ops per push (the protocol's maximum).
pub const BATCH: usize = 500;
/// Least time between two batches of one device.
const PACE: Duration = Duration::from_millis(111);

/// Median of 20 starts on fresh directories and on `fleet_data`.
///
/// # Errors
/// A start failed.
pub fn starts(bin: &Bin, dir: &Path, fleet_data: Option<&Path>, rows: &mut Vec<Row>) -> Result<()> {
    let mut fresh = Vec::new();
    for i in 0..20 {
        let s = bin.start(&dir.join(format!("start-{i}")))?;
        fresh.push(s.startup);
        s.stop()?;
    }
    let f = Summary::of(fresh).context("no start")?;
    println!("  fresh data directory: {f}");
    rows.push(Row::new(
        "start → `listening`, fresh data dir (median of 20)",
        "≤ 200 ms",
        format!("{} (max {})", ms(f.p50), ms(f.max)),
        f.p50 <= Duration::from_millis(200),
    ));
    if let Some(data) = fleet_data {
        let mut full = Vec::new();
        for _ in 0..20 {
            let s = bin.start(data)?;
            full.push(s.startup);
            s.stop()?;
        }
        let f = Summary::of(full).context("no start")?;
        println!("  fleet's data directory: {f}");
        rows.push(Row::new(
            "start → `listening`, the fleet's data dir (median of 20)",
            "≤ 200 ms",
            format!("{} (max {})", ms(f.p50), ms(f.max)),
            f.p50 <= Duration::from_millis(200),
        ));
    }
    Ok(())
}

/// One device pushing batches until `until`: (ops acknowledged, per-batch
/// push → pushed times).
async fn pusher(
    url: String,
    creds: Creds,
    base: u64,
    until: tokio::time::Instant,
) -> Result<(u64, Vec<Duration>)> {
    let mut s = Session::start(&url, &creds, 0).await?;
    let mut acked = 0;
    let mut lat = Vec::new();
    let mut next = tokio::time::Instant::now();
    let mut i = base;
    while tokio::time::Instant::now() < until {
        tokio::time::sleep_until(next).await;
        next += PACE;
        let ops = (0..BATCH)
            .map(|_| {
                i += 1;
                s.op(dismiss(i))
            })
            .collect();
        let t = Instant::now();
        send(&mut s.ws, &ClientMsg::Push { ops }).await?;
        loop {
            match recv(&mut s.ws, Duration::from_secs(60)).await? {
                ServerMsg::Pushed { results } => {
                    acked += results.len() as u64;
                    break;
                }
                ServerMsg::Ops { .. } => {}
                m => bail!("expected pushed, got {m:?}"),
            }
        }
        lat.push(t.elapsed());
    }
    Ok((acked, lat))
}

/// Ingest through the server with `n` devices for `secs`; with `other` (a
/// second instance on the same PostgreSQL database) every other device
/// pushes to it instead.
///
/// # Errors
/// A device failed.
pub async fn ingest(
    server: &Server,
    other: Option<&Server>,
    fleet: &[[Creds; 2]],
    n: usize,
    secs: u64,
    rows: &mut Vec<Row>,
) -> Result<f64> {
    let servers: Vec<&Server> = std::iter::once(server).chain(other).collect();
    let cpu_all = || servers.iter().map(|s| s.cpu()).sum::<Duration>();
    let cpu0 = cpu_all();
    let until = tokio::time::Instant::now() + Duration::from_secs(secs);
    let t = Instant::now();
    let tasks: Vec<_> = fleet
        .iter()
        .enumerate()
        .map(|(k, p)| {
            tokio::spawn(pusher(
                servers[k % servers.len()].url.clone(),
                p[0].clone(),
                (k as u64) << 32,
                until,
            ))
        })
        .collect();
    let mut total = 0;
    let mut lat = Vec::new();
    for task in tasks {
        let (acked, l) = task.await??;
        total += acked;
        lat.extend(l);
    }
    let wall = t.elapsed();
    #[allow(clippy::cast_precision_loss)]
    let rate = total as f64 / wall.as_secs_f64();
    let l = Summary::of(lat).context("no batch")?;
    let cpu = 100.0 * (cpu_all() - cpu0).as_secs_f64() / wall.as_secs_f64();
    let on = if servers.len() > 1 {
        ", 2 instances"
    } else {
        ""
    };
    println!(
        "  {n} devices: {} ops acknowledged in {wall:.2?}: {rate:.0} ops/s; server CPU {cpu:.0} % of one core; push → pushed per batch: {l}",
        thousands(total)
    );
    rows.push(Row::info(
        &format!("ingest, Kairos, {n} device(s) × batches of {BATCH}{on}"),
        format!(
            "**{rate:.0} ops/s** (push → pushed p50 {}, p99 {}; server CPU {cpu:.0} %)",
            ms(l.p50),
            ms(l.p99)
        ),
    ));
    Ok(rate)
}

/// The same batches into Redis with an fsync per write.
///
/// # Errors
/// redis-server fails.
pub async fn redis(
    dir: &Path,
    fleet: &[[Creds; 2]],
    n: usize,
    secs: u64,
    rows: &mut Vec<Row>,
) -> Result<f64> {
    let port = free_port()?;
    // A directory per run: a server started on an earlier run's AOF would
    // first load it (and answer -LOADING meanwhile).
    let work = dir.join(format!("redis-aof-{n}"));
    std::fs::create_dir_all(&work)?;
    let mut cmd = Command::new("redis-server");
    cmd.args([
        "--port",
        &port.to_string(),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
    ])
    .args(["--appendonly", "yes", "--appendfsync", "always", "--dir"])
    .arg(&work)
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    let _guard = Guard::spawn(&mut cmd, "redis-server")?;
    // Ready when it answers PING (there is no other readiness signal).
    let t0 = Instant::now();
    loop {
        if let Ok(mut c) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await {
            let mut pong = [0; 7];
            if c.write_all(b"PING\r\n").await.is_ok()
                && tokio::io::AsyncReadExt::read_exact(&mut c, &mut pong)
                    .await
                    .is_ok()
                && &pong == b"+PONG\r\n"
            {
                break;
            }
        }
        if t0.elapsed() > Duration::from_secs(10) {
            bail!("redis-server does not answer PING on {port}");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut conns = Vec::new();
    for _ in 0..n {
        conns.push(tokio::net::TcpStream::connect(("127.0.0.1", port)).await?);
    }
    let until = tokio::time::Instant::now() + Duration::from_secs(secs);
    let t = Instant::now();
    let tasks: Vec<_> = conns
        .into_iter()
        .zip(fleet)
        .map(|(c, p)| {
            let creds = p[0].clone();
            tokio::spawn(async move {
                let mut st = Stamper::new(kairos_proto::HlcClock::new(creds.device.clone(), None));
                let key = format!("ops:{}", creds.account);
                let (r, mut w) = c.into_split();
                let mut r = BufReader::new(r);
                let (mut acked, mut next, mut line) =
                    (0u64, tokio::time::Instant::now(), String::new());
                while tokio::time::Instant::now() < until {
                    tokio::time::sleep_until(next).await;
                    next += PACE;
                    let mut buf = format!(
                        "*{}\r\n$5\r\nRPUSH\r\n${}\r\n{key}\r\n",
                        BATCH + 2,
                        key.len()
                    );
                    for i in 0..BATCH as u64 {
                        let op = serde_json::to_string(&st.op(dismiss(acked + i + 1)))?;
                        buf.push_str(&format!("${}\r\n{op}\r\n", op.len()));
                    }
                    w.write_all(buf.as_bytes()).await?;
                    line.clear();
                    r.read_line(&mut line).await?;
                    if !line.starts_with(':') {
                        bail!("redis: {line:?}");
                    }
                    acked += BATCH as u64;
                }
                Ok::<_, anyhow::Error>(acked)
            })
        })
        .collect();
    let mut total = 0;
    for task in futures_util::stream::iter(tasks)
        .then(|t| t)
        .collect::<Vec<_>>()
        .await
    {
        total += task??;
    }
    let wall = t.elapsed();
    #[allow(clippy::cast_precision_loss)]
    let rate = total as f64 / wall.as_secs_f64();
    println!(
        "  Redis appendfsync always, {n} connections: {} ops in {wall:.2?}: {rate:.0} ops/s",
        thousands(total)
    );
    rows.push(Row::info(
        &format!("ingest, Redis 1 RPUSH/batch, appendfsync always, {n} conn."),
        format!("{rate:.0} ops/s"),
    ));
    Ok(rate)
}
