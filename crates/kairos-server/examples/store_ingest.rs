//! The store's durable ingest without the network: `ACCOUNTS` tasks each
//! push batches of `BATCH` dismisses through `Store::push` (one device per
//! account, the next batch once the last is durable) for `SECS` seconds, on
//! a real SQLite file (WAL, `synchronous=FULL`) in a fresh directory.
//! Prints ops/s, push → durable latency, and the CPU time of the one
//! `store-writer` thread per op (the serial part; read from
//! `/proc/self/task`, so Linux only) and of the `store-ckpt` thread
//! (0 for a store without one) beside the whole process's.
//!
//! `cargo run --release -p kairos-server --example store_ingest -- 64 500 5`

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use kairos_proto::{Body, HlcClock, Op};
use kairos_server::Store;
use kairos_server::store::Auth;

fn arg(i: usize, default: u64) -> Result<u64> {
    std::env::args().nth(i).map_or(Ok(default), |a| {
        a.parse().with_context(|| format!("argument {i}: {a}"))
    })
}

/// User + system CPU seconds in a `/proc/.../stat` file.
fn cpu(stat: &Path) -> Result<f64> {
    let text = std::fs::read_to_string(stat)?;
    // Fields after the `(comm)`: state is the 3rd, utime the 14th, stime the 15th.
    let rest = text.rsplit_once(')').context("stat")?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 =
        f.get(11).context("utime")?.parse::<u64>()? + f.get(12).context("stime")?.parse::<u64>()?;
    #[allow(clippy::cast_precision_loss)]
    Ok(ticks as f64 / 100.0)
}

/// The `stat` file of this process's thread named `name`, if there is one.
fn thread_stat(name: &str) -> Result<Option<std::path::PathBuf>> {
    for task in std::fs::read_dir("/proc/self/task")? {
        let dir = task?.path();
        if std::fs::read_to_string(dir.join("comm"))?.trim() == name {
            return Ok(Some(dir.join("stat")));
        }
    }
    Ok(None)
}

async fn pusher(
    store: Arc<Store>,
    k: u64,
    batch: u64,
    until: Instant,
) -> Result<(u64, Vec<Duration>)> {
    let device = format!("d_{k:016x}");
    let auth = Auth {
        account: format!("acct{k}"),
        device: device.clone(),
    };
    let mut clock = HlcClock::new(device, None);
    let (mut n, mut lat) = (0u64, Vec::new());
    while Instant::now() < until {
        let ops: Vec<Op> = (0..batch)
            .map(|i| {
                n += 1;
                let body = Body::ReminderDismiss {
                    key: format!("9c1e/standup@x/2026-12-04T16:00:00Z/#{i}@745c1657"),
                };
                Op::new(n, clock.issue(1_764_864_000_000 + n), body)
            })
            .collect();
        let t = Instant::now();
        let results = store.push(&auth, ops).await?;
        lat.push(t.elapsed());
        if results.len() as u64 != batch {
            bail!("{} results for {batch} ops", results.len());
        }
    }
    Ok((n, lat))
}

fn main() -> Result<()> {
    let (accounts, batch, secs) = (arg(1, 64)?, arg(2, 500)?, arg(3, 5)?);
    let dir = std::env::temp_dir().join(format!("store-ingest-{}", std::process::id()));
    for k in 0..accounts {
        Store::invite(&dir, &format!("acct{k}"), Duration::from_secs(60))?;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let store = Arc::new(Store::open(&dir, 10_000, Box::new(|_| {}))?);
    // The thread names itself once running: after one (empty) push it has.
    let first = Auth {
        account: "acct0".into(),
        device: format!("d_{:016x}", 0),
    };
    rt.block_on(store.push(&first, Vec::new()))?;
    let writer = thread_stat("store-writer")?.context("no store-writer thread")?;
    // WAL checkpoints run on a thread of their own (store/checkpoint.rs).
    let ckpt = thread_stat("store-ckpt")?;
    let ckpt_cpu = || ckpt.as_deref().map_or(Ok(0.0), cpu);
    let me = Path::new("/proc/self/stat");
    let (w0, c0, p0, t) = (cpu(&writer)?, ckpt_cpu()?, cpu(me)?, Instant::now());
    let until = t + Duration::from_secs(secs);
    let (total, mut lat) = rt.block_on(async {
        let tasks: Vec<_> = (0..accounts)
            .map(|k| tokio::spawn(pusher(Arc::clone(&store), k, batch, until)))
            .collect();
        let (mut total, mut lat) = (0, Vec::new());
        for task in tasks {
            let (n, l) = task.await??;
            total += n;
            lat.extend(l);
        }
        anyhow::Ok((total, lat))
    })?;
    let wall = t.elapsed().as_secs_f64();
    let (w, c, p) = (cpu(&writer)? - w0, ckpt_cpu()? - c0, cpu(me)? - p0);
    lat.sort();
    let at = |q: f64| {
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let i = ((lat.len() as f64 - 1.0) * q).round() as usize;
        lat.get(i).map_or(0.0, |d| d.as_secs_f64() * 1e3)
    };
    #[allow(clippy::cast_precision_loss)]
    let per = |s: f64| s * 1e6 / total as f64;
    #[allow(clippy::cast_precision_loss)]
    let rate = total as f64 / wall;
    println!(
        "{accounts} accounts × batches of {batch}, {secs} s: {total} ops durable, {rate:.0} ops/s; \
         push → durable p50 {:.1} ms, p99 {:.1} ms; store-writer CPU {:.2} µs/op ({:.0} % of a core), \
         store-ckpt CPU {:.2} µs/op, process CPU {:.2} µs/op",
        at(0.5),
        at(0.99),
        per(w),
        100.0 * w / wall,
        per(c),
        per(p),
    );
    drop(store);
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
