//! The baseline: the usual delay queue on Redis. `redis-server` (Debian's)
//! with `--appendonly yes --appendfsync always` (each write fsynced before
//! its reply, as in `sync-bench`'s ingest), one sorted set scored by due
//! time (ms), loaded with `ZADD` (1,000 members a command, not timed), and
//! `workers` tasks shaped like Kairos's instances: each pops up to `batch`
//! due members with one `EVAL` of [`POP`] (`ZRANGEBYSCORE … LIMIT` +
//! `ZREM`, atomic), POSTs them `concurrency` at a time with the very client
//! the server uses ([`Poster`]: same JSON body shape, same HMAC signature,
//! same `Kairos-Delivery`), and sleeps `poll` when nothing is due.
//!
//! A pop removes the members before they are sent: a worker killed
//! mid-batch loses them (at-most-once). That is the design measured.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use futures_util::StreamExt;
use kairos_server::remind::webhook::{Outcome, Poster};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

use super::receiver::Receiver;
use super::{Drain, wait_drained};
use crate::procs::{Guard, free_port};

/// Pops up to `ARGV[2]` members with score ≤ `ARGV[1]`, atomically.
pub const POP: &str = "local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], \
                       'LIMIT', 0, tonumber(ARGV[2])) \
                       if #due > 0 then redis.call('ZREM', KEYS[1], unpack(due)) end \
                       return due";

/// A reply: an integer, a status, or an array of bulk strings.
enum Reply {
    Int(i64),
    Status,
    Items(Vec<String>),
}

struct Conn {
    r: BufReader<OwnedReadHalf>,
    w: OwnedWriteHalf,
}

impl Conn {
    async fn connect(port: u16) -> Result<Self> {
        let s = TcpStream::connect(("127.0.0.1", port)).await?;
        s.set_nodelay(true)?;
        let (r, w) = s.into_split();
        Ok(Self {
            r: BufReader::new(r),
            w,
        })
    }

    async fn line(&mut self) -> Result<String> {
        let mut l = String::new();
        self.r.read_line(&mut l).await?;
        if !l.ends_with("\r\n") {
            bail!("redis closed the connection");
        }
        l.truncate(l.len() - 2);
        Ok(l)
    }

    async fn bulk(&mut self, len: &str) -> Result<String> {
        let len: usize = len.parse()?;
        let mut data = vec![0; len + 2];
        self.r.read_exact(&mut data).await?;
        data.truncate(len);
        Ok(String::from_utf8(data)?)
    }

    async fn cmd(&mut self, args: &[&str]) -> Result<Reply> {
        let mut buf = format!("*{}\r\n", args.len());
        for a in args {
            buf.push_str(&format!("${}\r\n{a}\r\n", a.len()));
        }
        self.w.write_all(buf.as_bytes()).await?;
        let l = self.line().await?;
        let (kind, rest) = l.split_at(1.min(l.len()));
        Ok(match kind {
            "+" => Reply::Status,
            ":" => Reply::Int(rest.parse()?),
            "$" => Reply::Items(vec![self.bulk(rest).await?]),
            "*" => {
                let n: usize = rest.parse()?;
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    let h = self.line().await?;
                    let Some(len) = h.strip_prefix('$') else {
                        bail!("redis: unexpected item {h:?}");
                    };
                    items.push(self.bulk(len).await?);
                }
                Reply::Items(items)
            }
            _ => bail!("redis: {l}"),
        })
    }
}

/// Starts `redis-server` (fsync always) in `dir`: the guard and the port.
async fn start(dir: &Path) -> Result<(Guard, u16)> {
    let port = free_port()?;
    let work = dir.join("redis-aof");
    std::fs::create_dir_all(&work)?;
    let mut cmd = Command::new("redis-server");
    cmd.args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args([
            "--save",
            "",
            "--appendonly",
            "yes",
            "--appendfsync",
            "always",
        ])
        .arg("--dir")
        .arg(&work)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let guard = Guard::spawn(&mut cmd, "redis-server")
        .context("redis-server (apt-get install redis-server)")?;
    let t0 = Instant::now();
    loop {
        if let Ok(mut c) = Conn::connect(port).await
            && matches!(c.cmd(&["PING"]).await, Ok(Reply::Status))
        {
            return Ok((guard, port));
        }
        if t0.elapsed() > Duration::from_secs(10) {
            bail!("redis-server does not answer PING on {port}");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The member of reminder `i` of `account`: the body the server would post.
pub(super) fn member(account: &str, i: usize, due: &str) -> String {
    serde_json::json!({
        "account": account,
        "key": format!("c1/e{i}/{due}/#0@bench"),
        "calendar": "c1",
        "due": due,
        "acknowledged": false,
        "attempt": 1,
        "reminder": {"summary": format!("Bench e{i}"), "description": "x", "calendar": "Bench"},
        "allowed_mentions": {"parse": []},
        "content": format!("Reminder: Bench e{i}. No device acknowledged it."),
        "text": format!("Reminder: Bench e{i}. No device acknowledged it."),
    })
    .to_string()
}

/// How the baseline drains.
pub struct Plan {
    /// Reminders.
    pub n: usize,
    /// Accounts they are spread over.
    pub accounts: usize,
    /// Workers (as instances).
    pub workers: usize,
    /// Members per pop.
    pub batch: usize,
    /// POSTs in flight per worker.
    pub concurrency: usize,
    /// Sleep when nothing is due.
    pub poll: Duration,
}

async fn worker(port: u16, p: Arc<Plan>, url: String, popped: Arc<AtomicUsize>) -> Result<usize> {
    let mut c = Conn::connect(port).await?;
    let poster = Poster::new().map_err(anyhow::Error::msg)?;
    let batch = p.batch.to_string();
    let mut failed = 0;
    while popped.load(Ordering::Relaxed) < p.n {
        let now = chrono::Utc::now().timestamp_millis().to_string();
        let Reply::Items(due) = c.cmd(&["EVAL", POP, "1", "q", &now, &batch]).await? else {
            bail!("redis: EVAL answered no array");
        };
        if due.is_empty() {
            tokio::time::sleep(p.poll).await;
            continue;
        }
        popped.fetch_add(due.len(), Ordering::Relaxed);
        let poster = &poster;
        let url = &url;
        failed += futures_util::stream::iter(due)
            .map(|m| async move {
                let v: serde_json::Value = serde_json::from_str(&m).unwrap_or_default();
                let delivery = format!(
                    "{}/{}/webhook",
                    v["account"].as_str().unwrap_or_default(),
                    v["key"].as_str().unwrap_or_default()
                );
                let ts = chrono::Utc::now().timestamp();
                poster
                    .post(url, "s3cret", &delivery, ts, m.into_bytes())
                    .await
            })
            .buffer_unordered(p.concurrency.max(1))
            .filter(|o| std::future::ready(*o != Outcome::Sent))
            .count()
            .await;
    }
    Ok(failed)
}

/// Loads, drains and counts; `lead` from the start of the load to due.
///
/// # Errors
/// redis-server failed.
pub async fn run(p: Plan, lead: Duration, dir: &Path) -> Result<Drain> {
    let (guard, port) = start(dir).await?;
    let hook = Receiver::start().await?;
    let mut c = Conn::connect(port).await?;
    let due_ms = (chrono::Utc::now().timestamp_millis() + i64::try_from(lead.as_millis())?)
        .div_euclid(1000)
        * 1000;
    let due =
        kairos_proto::utc::format(&chrono::DateTime::from_timestamp_millis(due_ms).context("due")?);
    let score = due_ms.to_string();
    let per = p.n / p.accounts;
    let members: Vec<String> = (0..p.accounts)
        .flat_map(|a| (0..per).map(move |i| (a, i)))
        .map(|(a, i)| member(&format!("bench{a}"), i, &due))
        .collect();
    for chunk in members.chunks(1000) {
        let mut args = vec!["ZADD", "q"];
        for m in chunk {
            args.push(&score);
            args.push(m);
        }
        c.cmd(&args).await?;
    }
    let Reply::Int(card) = c.cmd(&["ZCARD", "q"]).await? else {
        bail!("redis: ZCARD");
    };
    let left = due_ms - chrono::Utc::now().timestamp_millis();
    anyhow::ensure!(
        left > 0,
        "Redis: loaded after the due time: raise --lead-secs"
    );
    println!(
        "  loaded {card} members, {:.1} s before due",
        left as f64 / 1e3
    );
    let total = per * p.accounts;
    // `REMIND_BENCH_PG_STATS=1`: the cost per delivery, as for Kairos.
    let cost = super::pg::stats().then(|| {
        vec![
            ("redis-server", vec![guard.pid()]),
            ("bench (workers, receiver)", vec![std::process::id()]),
        ]
    });
    let cpu0 = match &cost {
        Some(groups) => {
            super::cost::sleep_until_ms(due_ms - 100).await;
            c.cmd(&["CONFIG", "RESETSTAT"]).await?;
            Some(super::cost::Cpu::read(groups))
        }
        None => None,
    };
    let p = Arc::new(Plan { n: total, ..p });
    let popped = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = (0..p.workers)
        .map(|_| {
            tokio::spawn(worker(
                port,
                Arc::clone(&p),
                hook.url.clone(),
                Arc::clone(&popped),
            ))
        })
        .collect();
    let mut failed = 0;
    for t in tasks {
        failed += t.await??;
    }
    let mut d = wait_drained(&hook, total, due_ms, || Ok(0)).await?;
    if let (Some(groups), Some(cpu0)) = (&cost, cpu0) {
        cpu0.print_per(&super::cost::Cpu::read(groups), total);
        if let Reply::Items(info) = c.cmd(&["INFO", "commandstats"]).await? {
            for l in info
                .iter()
                .flat_map(|i| i.lines())
                .filter(|l| l.starts_with("cmdstat"))
            {
                println!("    {l}");
            }
        }
    }
    if failed > 0 {
        println!("  {failed} POSTs failed (popped, so lost: at-most-once)");
    }
    d.n = total;
    Ok(d)
}
