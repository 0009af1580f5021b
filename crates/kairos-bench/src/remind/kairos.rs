//! The Kairos side: real `kairos-server` processes (one on SQLite, or two
//! on one PostgreSQL database), `N` reminders queued through the sync
//! protocol, drained to the bench's receiver, optionally with one instance
//! killed (SIGKILL) halfway.
//!
//! How the reminders get queued (the real path, no rows written by the
//! bench): each of `A` accounts is made with `kairos-server invite`, gets a
//! device by `/v1/join`, and a webhook fallback with `kairos-server
//! fallback ACCOUNT --webhook URL --after-mins 0`; its device pushes one
//! `calendar.put` and `N / A` `series.put` ops (one event each, `DTSTART`
//! = due + 15 min, one `-PT15M` alarm: every alarm due in the same
//! second `T`), in batches of 500 paced under the protocol's 5,000 ops/s
//! per device. The serving instances' reminder task replicates each
//! account and plans the instances into the queue, as it would for anyone.
//! The bench waits (by reading the store) until all `N` deliveries are
//! queued, which must happen before `T`.

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use kairos_proto::{Body, ClientMsg, ServerMsg};

use super::pg::Cluster;
use super::receiver::Receiver;
use super::{Drain, Kill, wait_drained};
use crate::procs::{Guard, signal};
use crate::sync::client::{Session, join, recv, send};

/// Where the instances keep their data.
pub enum Store<'a> {
    /// One instance, SQLite in this data directory.
    Sqlite(PathBuf),
    /// Instances on database `.1` of cluster `.0`.
    Postgres(&'a Cluster, String),
}

impl Store<'_> {
    fn db_args(&self) -> Vec<String> {
        match self {
            Self::Sqlite(_) => Vec::new(),
            Self::Postgres(c, name) => vec!["--database".into(), c.url(name)],
        }
    }

    /// One row of `sql`'s result, its columns split.
    fn query(&self, sql: &str) -> Result<Vec<String>> {
        match self {
            Self::Postgres(c, name) => Ok(c
                .query(name, sql)?
                .lines()
                .next()
                .unwrap_or_default()
                .split('|')
                .map(str::to_owned)
                .collect()),
            Self::Sqlite(data) => {
                let conn = rusqlite::Connection::open_with_flags(
                    data.join("server.db"),
                    rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
                )?;
                conn.busy_timeout(Duration::from_secs(10))?;
                let mut st = conn.prepare(sql)?;
                let n = st.column_count();
                Ok(st.query_row([], |r| {
                    (0..n)
                        .map(|i| {
                            r.get::<_, rusqlite::types::Value>(i).map(|v| match v {
                                rusqlite::types::Value::Integer(i) => i.to_string(),
                                rusqlite::types::Value::Text(t) => t,
                                _ => String::new(),
                            })
                        })
                        .collect::<rusqlite::Result<Vec<_>>>()
                })?)
            }
        }
    }

    fn count(&self, sql: &str) -> Result<u64> {
        let row = self.query(sql)?;
        row.first()
            .and_then(|v| v.parse().ok())
            .with_context(|| format!("{sql}: {row:?}"))
    }

    /// Every value of the first column of `sql` (PostgreSQL only).
    fn column(&self, sql: &str) -> Result<Vec<String>> {
        match self {
            Self::Postgres(c, name) => Ok(c.query(name, sql)?.lines().map(str::to_owned).collect()),
            Self::Sqlite(_) => bail!("not on SQLite"),
        }
    }
}

/// A running instance.
struct Instance {
    guard: Guard,
    url: String,
}

/// Settings of one Kairos run.
pub struct Plan<'a> {
    /// `kairos-server`.
    pub bin: &'a Path,
    /// Instances (1 on SQLite; 1 or 2 on PostgreSQL).
    pub instances: usize,
    /// Reminders.
    pub n: usize,
    /// Accounts they are spread over.
    pub accounts: usize,
    /// `--remind-lease-ms`.
    pub lease_ms: u64,
    /// `--remind-poll-ms`.
    pub poll_ms: u64,
    /// `--remind-concurrency` (passed only when not the server's 32, so
    /// older servers still run).
    pub concurrency: usize,
    /// `--remind-batch` (passed only when not the server's 200).
    pub batch: usize,
    /// From the start of the pushes to the due time.
    pub lead: Duration,
    /// Kill one instance when half are delivered.
    pub kill: bool,
    /// Directory for data and logs.
    pub dir: &'a Path,
}

fn start(plan: &Plan<'_>, store: &Store<'_>, i: usize) -> Result<Instance> {
    let data = plan.dir.join(format!("instance-{i}"));
    let (reader, writer) = std::io::pipe()?;
    let log = std::fs::File::create(data.with_extension("log"))?;
    let mut cmd = Command::new(plan.bin);
    cmd.arg("--data")
        .arg(match store {
            Store::Sqlite(d) => d,
            Store::Postgres(..) => &data,
        })
        .args(store.db_args())
        .args(["--listen", "127.0.0.1:0"])
        .args(["--remind-lease-ms", &plan.lease_ms.to_string()])
        .args(["--remind-poll-ms", &plan.poll_ms.to_string()])
        .args(if plan.concurrency == 32 {
            Vec::new()
        } else {
            vec![
                "--remind-concurrency".to_owned(),
                plan.concurrency.to_string(),
            ]
        })
        .args(if plan.batch == 200 {
            Vec::new()
        } else {
            vec!["--remind-batch".to_owned(), plan.batch.to_string()]
        })
        // 25 accounts × 4,000 reminders each: no per-account rate limit
        // (the default, 60 a minute, would spread the drain over an hour).
        .args(["--remind-per-minute", "0"])
        // `REMIND_BENCH_SERVER_LOG=kairos_server::remind=debug` (with
        // `REMIND_BENCH_KEEP_LOGS=DIR`): each instance's drained batches,
        // timestamped, for a per-instance timeline.
        .env(
            "RUST_LOG",
            std::env::var("REMIND_BENCH_SERVER_LOG").unwrap_or_else(|_| "warn".into()),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::from(writer))
        .stderr(Stdio::from(log));
    let mut guard = Guard::spawn(&mut cmd, "kairos-server")?;
    drop(cmd);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(reader).lines();
        if let Some(Ok(l)) = lines.next() {
            let _ = tx.send(l);
        }
        for _ in lines {}
    });
    let Ok(line) = rx.recv_timeout(Duration::from_secs(30)) else {
        bail!(
            "kairos-server printed no line within 30 s (exit {:?}); see {}",
            guard.exited()?,
            data.with_extension("log").display()
        );
    };
    let v: serde_json::Value = serde_json::from_str(&line)?;
    let url = v["listening"]
        .as_str()
        .with_context(|| format!("no \"listening\" in {line:?}"))?
        .to_owned();
    Ok(Instance { guard, url })
}

/// Copies the instances' logs to `keep` as `DUE-instance-I.log`.
fn keep_logs(plan: &Plan<'_>, keep: &Path, due_ms: i64) -> Result<()> {
    std::fs::create_dir_all(keep)?;
    for i in 0..plan.instances {
        let from = plan.dir.join(format!("instance-{i}.log"));
        let to = keep.join(format!("{due_ms}-instance-{i}.log"));
        std::fs::copy(&from, &to).with_context(|| format!("{}", from.display()))?;
        println!("  log of instance {i}: {}", to.display());
    }
    Ok(())
}

/// `kairos-server ARGS` on the store: its stdout.
async fn cli(plan: &Plan<'_>, store: &Store<'_>, args: &[&str]) -> Result<String> {
    let data = match store {
        Store::Sqlite(d) => d.clone(),
        Store::Postgres(..) => plan.dir.join("cli"),
    };
    let out = tokio::process::Command::new(plan.bin)
        .arg("--data")
        .arg(data)
        .args(store.db_args())
        .args(args)
        // `REMIND_BENCH_SERVER_LOG=kairos_server::remind=debug` (with
        // `REMIND_BENCH_KEEP_LOGS=DIR`): each instance's drained batches,
        // timestamped, for a per-instance timeline.
        .env(
            "RUST_LOG",
            std::env::var("REMIND_BENCH_SERVER_LOG").unwrap_or_else(|_| "warn".into()),
        )
        .stdin(Stdio::null())
        .output()
        .await?;
    if !out.status.success() {
        bail!(
            "kairos-server {args:?}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// One event with one alarm due at `due`.
fn series(uid: &str, due: chrono::DateTime<chrono::Utc>) -> Body {
    let start = (due + chrono::Duration::minutes(15)).format("%Y%m%dT%H%M%SZ");
    Body::SeriesPut {
        calendar: "c1".into(),
        uid: uid.into(),
        ics: format!(
            "BEGIN:VEVENT\r\nUID:{uid}\r\nSUMMARY:Bench {uid}\r\nDTSTART:{start}\r\n\
             BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT15M\r\nDESCRIPTION:x\r\nEND:VALARM\r\nEND:VEVENT"
        ),
    }
}

/// Pushes `ops` in batches of 500 at most 9 batches a second.
async fn push_all(url: String, creds: crate::sync::client::Creds, bodies: Vec<Body>) -> Result<()> {
    let mut s = Session::start(&url, &creds, 0).await?;
    let mut next = tokio::time::Instant::now();
    for chunk in bodies.chunks(500) {
        tokio::time::sleep_until(next).await;
        next += Duration::from_millis(111);
        let ops = chunk.iter().map(|b| s.op(b.clone())).collect();
        send(&mut s.ws, &ClientMsg::Push { ops }).await?;
        loop {
            match recv(&mut s.ws, Duration::from_secs(60)).await? {
                ServerMsg::Pushed { results } if results.len() == chunk.len() => break,
                ServerMsg::Pushed { results } => {
                    bail!("pushed {} of {} ops", results.len(), chunk.len())
                }
                ServerMsg::Ops { .. } => {}
                m => bail!("expected pushed, got {m:?}"),
            }
        }
    }
    Ok(())
}

/// One run: queue, drain, check the store.
///
/// # Errors
/// A process or the store failed (a lost or repeated delivery is not an
/// error: it is in the report).
pub async fn run(plan: &Plan<'_>, store: &Store<'_>) -> Result<Drain> {
    let hook = Receiver::start().await?;
    let mut inst = Vec::new();
    for i in 0..plan.instances {
        inst.push(start(plan, store, i)?);
    }
    let per = plan.n / plan.accounts;
    let mut creds = Vec::new();
    for a in 0..plan.accounts {
        let account = format!("bench{a}");
        let line = cli(plan, store, &["invite", &account]).await?;
        let v: serde_json::Value = serde_json::from_str(line.trim())?;
        let code = v["code"].as_str().context("invite printed no code")?;
        let url = &inst[a % inst.len()].url;
        creds.push((url.clone(), join(url, code, "bench").await?));
        let args = [
            "fallback",
            &account,
            "--webhook",
            &hook.url,
            "--secret",
            "s3cret",
        ];
        cli(plan, store, &[&args[..], &["--after-mins", "0"]].concat()).await?;
    }
    // The due time: whole seconds, `lead` ahead.
    let t0 = Instant::now();
    let due_ms = (chrono::Utc::now().timestamp_millis() + i64::try_from(plan.lead.as_millis())?)
        .div_euclid(1000)
        * 1000;
    let due = chrono::DateTime::from_timestamp_millis(due_ms).context("due")?;
    let tasks: Vec<_> = creds
        .into_iter()
        .enumerate()
        .map(|(a, (url, c))| {
            let mut bodies = vec![Body::CalendarPut {
                calendar: "c1".into(),
                name: "Bench".into(),
                color: None,
            }];
            bodies.extend((0..per).map(|i| series(&format!("e{i}"), due)));
            let _ = a;
            tokio::spawn(push_all(url, c, bodies))
        })
        .collect();
    for t in tasks {
        t.await??;
    }
    let pushed = t0.elapsed();
    // Queued: every delivery row planned, and every account's replica at
    // its head (a serving instance drains only between replication rounds,
    // so a round still running at the due time would hold the drain up).
    loop {
        let q = store.count("SELECT count(*) FROM remind_delivery")?;
        let behind = store.count(
            "SELECT count(*) FROM accounts a LEFT JOIN remind_cursor r ON r.account = a.id
             WHERE coalesce(r.seq, 0) < a.head",
        )?;
        if q as usize >= per * plan.accounts && behind == 0 {
            break;
        }
        if chrono::Utc::now().timestamp_millis() > due_ms - 500 {
            bail!(
                "only {q} of {} queued ({behind} accounts not replicated) 0.5 s before the due time: raise --lead-secs",
                per * plan.accounts
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let queued = t0.elapsed();
    let left = due_ms - chrono::Utc::now().timestamp_millis();
    println!(
        "  pushed {} ops in {pushed:.2?}, all queued after {queued:.2?}, {:.1} s before due",
        per * plan.accounts + plan.accounts,
        left as f64 / 1e3
    );
    if let (Store::Postgres(c, name), true) = (store, super::pg::stats()) {
        c.query(
            name,
            "CREATE EXTENSION IF NOT EXISTS pg_stat_statements; SELECT pg_stat_statements_reset()",
        )?;
    }
    // Drain, killing instance 0 halfway if asked.
    let total = per * plan.accounts;
    // `REMIND_BENCH_PG_STATS=1` (no kill): the cost per delivery from just
    // before the due time to the last delivery (`cost.rs`).
    let cost = match (store, super::pg::stats() && !plan.kill) {
        (Store::Postgres(c, name), true) => {
            super::cost::sleep_until_ms(due_ms - 100).await;
            let groups = vec![
                ("servers", inst.iter().map(|i| i.guard.pid()).collect()),
                ("postgres", super::cost::cluster_pids(&c.data())?),
                ("bench (receiver)", vec![std::process::id()]),
            ];
            let pg0 = c.query(name, super::cost::PG_SNAPSHOT)?;
            let cpu0 = super::cost::Cpu::read(&groups);
            Some((groups, cpu0, pg0))
        }
        _ => None,
    };
    let mut kill = None;
    let mut progress = hook.progress.clone();
    if plan.kill {
        loop {
            if *progress.borrow_and_update() >= total / 2 {
                break;
            }
            let wait = u64::try_from(due_ms - chrono::Utc::now().timestamp_millis()).unwrap_or(0);
            let wait = Duration::from_millis(wait) + Duration::from_secs(120);
            tokio::time::timeout(wait, progress.changed())
                .await
                .context("no delivery for 120 s (after the due time) before the kill")??;
        }
        let victim = &mut inst[0];
        let pid = victim.guard.pid();
        signal(pid, nix::sys::signal::Signal::SIGKILL);
        let killed_ms = chrono::Utc::now().timestamp_millis();
        victim.guard.wait_for(Duration::from_secs(10))?;
        let before = hook.with(|t| t.first.len());
        let ids: HashSet<String> = store
            .column(&format!(
                "SELECT account || '/' || key || '/' || channel FROM remind_delivery
                 WHERE owner LIKE '%-{pid}-%' AND state = 'pending'"
            ))?
            .into_iter()
            .collect();
        println!(
            "  killed instance 1 (pid {pid}) at {before} delivered; it held {} claims",
            ids.len()
        );
        kill = Some(Kill {
            killed_ms,
            delivered_before: before,
            claims: ids,
        });
    }
    let mut d = wait_drained(&hook, total, due_ms, || {
        store.count("SELECT count(*) FROM remind_delivery WHERE state = 'pending'")
    })
    .await?;
    // The cluster's processes again: backends of connections opened
    // during the drain count too.
    let cpu1 = match (&cost, store) {
        (Some((groups, ..)), Store::Postgres(c, _)) => {
            let mut groups = groups.clone();
            groups[1].1 = super::cost::cluster_pids(&c.data())?;
            Some(super::cost::Cpu::read(&groups))
        }
        _ => None,
    };
    for i in &mut inst {
        let _ = i.guard.stop(Duration::from_secs(10));
    }
    // After the instances stopped: their backends have reported their
    // counters.
    if let (Some((_, cpu0, pg0)), Some(cpu1), Store::Postgres(c, name)) = (&cost, &cpu1, store) {
        cpu0.print_per(cpu1, total);
        super::cost::print_pg(pg0, &c.query(name, super::cost::PG_SNAPSHOT)?, total);
    }
    if let Ok(keep) = std::env::var("REMIND_BENCH_KEEP_LOGS") {
        keep_logs(plan, Path::new(&keep), due_ms)?;
    }
    if let (Store::Postgres(c, name), true) = (store, super::pg::stats()) {
        c.print_stats(name)?;
    }
    let row = store.query(
        "SELECT (SELECT count(*) FROM remind_sent), (SELECT count(DISTINCT account || '/' || key) FROM remind_sent),
                (SELECT count(*) FROM remind_delivery WHERE state <> 'delivered')",
    )?;
    d.store = Some(row.iter().map(|v| v.parse().unwrap_or(u64::MAX)).collect());
    d.queued = Some(queued);
    d.kill = kill.map(|k| k.measure(&hook));
    Ok(d)
}
