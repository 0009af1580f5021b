//! Parts 2 and 4: the real `kairos` on two databases joined to one account
//! with `kairos sync join` (device `b` with a code from `kairos sync pair`
//! on `a`), as `crates/kairos-cli/tests/it/sync` drives them.
//!
//! - **End to end** (part 2): both devices run `kairos daemon --sink stdout
//!   --tz UTC`. `n` events imported on `a` (`kairos import FILE --tz UTC`,
//!   each with a `-PT15M` alarm a few seconds ahead) travel to `b` and fire
//!   there (`b` prints each key). Then, one after the other, for each key:
//!   from just before spawning `kairos dismiss KEY` on `a` to the moment
//!   `b`'s stdout reader gets `{"withdrawn":KEY,…}`. Sequential: one trial
//!   in flight.
//! - **Catch-up** (part 4): `b` stays offline (no daemon) while `a` imports
//!   `n` small events (`a` pushes `n` `series.put` ops: its `import` pushes
//!   its outbox; `kairos sync now` on `a` makes sure); then `kairos sync
//!   now` on `b` is timed, and `kairos upcoming` on both must be equal.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use chrono::{DateTime, Utc};

use super::server::{Bin, Server};
use super::{Row, Summary, ms, thousands};
use crate::procs::Guard;

/// The `kairos` binary.
pub struct Kairos(pub PathBuf);

/// A daemon whose stdout lines arrive on a channel, each with the instant
/// the reader got it.
pub struct Daemon {
    _guard: Guard,
    lines: mpsc::Receiver<(serde_json::Value, Instant)>,
}

impl Kairos {
    fn cmd(&self, db: &Path) -> Command {
        let mut c = Command::new(&self.0);
        c.arg("--db").arg(db).stdin(Stdio::null());
        c
    }

    /// `kairos --db DB ARGS`, which must succeed.
    fn run(&self, db: &Path, args: &[&str]) -> Result<Output> {
        let out = self.cmd(db).args(args).output()?;
        if !out.status.success() {
            bail!(
                "kairos {args:?}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(out)
    }

    /// The first JSON line of `kairos ARGS`.
    fn json(&self, db: &Path, args: &[&str]) -> Result<serde_json::Value> {
        let out = self.run(db, args)?;
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text
            .lines()
            .find(|l| l.starts_with('{'))
            .with_context(|| format!("kairos {args:?} printed no JSON"))?;
        Ok(serde_json::from_str(line)?)
    }

    fn daemon(&self, db: &Path) -> Result<Daemon> {
        let (reader, writer) = std::io::pipe()?;
        let mut cmd = self.cmd(db);
        cmd.args(["daemon", "--sink", "stdout", "--tz", "UTC"])
            .stdout(Stdio::from(writer))
            .stderr(Stdio::from(std::fs::File::create(
                db.with_extension("daemon.log"),
            )?));
        let guard = Guard::spawn(&mut cmd, "kairos daemon")?;
        drop(cmd);
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(reader).lines().map_while(Result::ok) {
                let at = Instant::now();
                if let Ok(v) = serde_json::from_str(&line)
                    && tx.send((v, at)).is_err()
                {
                    break;
                }
            }
        });
        Ok(Daemon {
            _guard: guard,
            lines: rx,
        })
    }

    /// Joins two databases `DIR/NAME-a.db`, `DIR/NAME-b.db` to `account`.
    fn pair_of(
        &self,
        bin: &Bin,
        server: &Server,
        dir: &Path,
        account: &str,
    ) -> Result<(PathBuf, PathBuf)> {
        let code = futures_block(bin.invite(&server.data, account))?;
        let a = dir.join(format!("{account}-a.db"));
        let b = dir.join(format!("{account}-b.db"));
        self.run(&a, &["sync", "join", &server.url, &code, "--name", "a"])?;
        let code = self.json(&a, &["sync", "pair"])?["code"]
            .as_str()
            .context("pair: no code")?
            .to_owned();
        self.run(&b, &["sync", "join", &server.url, &code, "--name", "b"])?;
        Ok((a, b))
    }

    fn wait_connected(&self, db: &Path) -> Result<()> {
        let until = Instant::now() + Duration::from_secs(30);
        while self.json(db, &["sync", "status"])?["connected"] != true {
            if Instant::now() > until {
                bail!("{} never connected", db.display());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }

    /// Imports `ics`: its wall time and what `kairos` said on stderr (the
    /// push that follows an import reports a failure there).
    fn import(&self, db: &Path, ics: &str) -> Result<(Duration, String)> {
        let file = db.with_extension("import.ics");
        std::fs::write(&file, ics)?;
        let t = Instant::now();
        let out = self.run(db, &["import", &file.to_string_lossy(), "--tz", "UTC"])?;
        let said = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        Ok((t.elapsed(), said))
    }

    fn upcoming(&self, db: &Path) -> Result<Vec<String>> {
        let out = self.run(db, &["upcoming", "--limit", "1000000"])?;
        Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.starts_with('{'))
            .map(str::to_owned)
            .collect())
    }
}

/// Runs a future to completion on a small runtime of its own (the device
/// parts are blocking: processes and pipes).
fn futures_block<T>(f: impl std::future::Future<Output = Result<T>>) -> Result<T> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(f)
}

/// A calendar of one-alarm events `PREFIXi` whose alarms fire at
/// `first + i × step`; each event starts 15 minutes after its trigger.
fn calendar(prefix: &str, n: usize, first: DateTime<Utc>, step: chrono::Duration) -> String {
    let mut s = String::from("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:sync-bench\r\n");
    for i in 0..n {
        let start =
            first + step * i32::try_from(i).unwrap_or(i32::MAX) + chrono::Duration::minutes(15);
        s.push_str(&format!(
            "BEGIN:VEVENT\r\nUID:{prefix}{i}\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:{}\r\n\
             SUMMARY:{prefix}{i}\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:x\r\n\
             TRIGGER:-PT15M\r\nEND:VALARM\r\nEND:VEVENT\r\n",
            start.format("%Y%m%dT%H%M%SZ")
        ));
    }
    s.push_str("END:VCALENDAR\r\n");
    s
}

/// Part 2: `n` dismiss trials, end to end.
///
/// # Errors
/// A process fails or a line does not come.
pub fn end_to_end(
    k: &Kairos,
    bin: &Bin,
    server: &Server,
    dir: &Path,
    n: usize,
    rows: &mut Vec<Row>,
) -> Result<()> {
    let (a, b) = k.pair_of(bin, server, dir, "e2e")?;
    let _ad = k.daemon(&a)?;
    let bd = k.daemon(&b)?;
    k.wait_connected(&a)?;
    k.wait_connected(&b)?;
    let first = Utc::now() + chrono::Duration::seconds(8);
    let (_, said) = k.import(&a, &calendar("e2e", n, first, chrono::Duration::zero()))?;
    if !said.is_empty() {
        println!("  kairos import on a said: {said}");
    }
    let mut keys = Vec::new();
    let until = Instant::now() + Duration::from_secs(60);
    while keys.len() < n {
        let (v, _) = bd
            .lines
            .recv_timeout(until.saturating_duration_since(Instant::now()))
            .context("b did not fire every reminder within 60 s")?;
        if let Some(key) = v["key"].as_str() {
            keys.push(key.to_owned());
        }
    }
    println!("  {n} reminders fired on b; dismissing each on a");
    let mut lat = Vec::new();
    let mut cmd = Vec::new();
    for key in &keys {
        let t = Instant::now();
        k.run(&a, &["dismiss", key])?;
        cmd.push(t.elapsed());
        let until = t + Duration::from_secs(30);
        loop {
            let (v, at) = bd
                .lines
                .recv_timeout(until.saturating_duration_since(Instant::now()))
                .with_context(|| format!("no withdrawn line for {key} within 30 s"))?;
            if v["withdrawn"] == key.as_str() {
                if v["reason"] != "dismissed" {
                    println!("  note: withdrawn with reason {}", v["reason"]);
                }
                lat.push(at - t);
                break;
            }
        }
    }
    let s = Summary::of(lat).context("no trial")?;
    let c = Summary::of(cmd).context("no trial")?;
    println!("  `kairos dismiss` on a → b prints withdrawn: {s}");
    println!("  `kairos dismiss` process alone (spawn → exit): {c}");
    rows.push(Row::new(
        &format!("end to end: `kairos dismiss` on a → b's daemon prints `withdrawn` ({n} trials)"),
        "p99 ≤ 250 ms",
        format!(
            "p50 {}, **p99 {}**, max {}",
            ms(s.p50),
            ms(s.p99),
            ms(s.max)
        ),
        s.p99 <= Duration::from_millis(250),
    ));
    rows.push(Row::info(
        "end to end: of which the `kairos dismiss` process (spawn → exit)",
        format!("p50 {}, p99 {}", ms(c.p50), ms(c.p99)),
    ));
    Ok(())
}

/// Part 4: `n` ops caught up by `kairos sync now`.
///
/// # Errors
/// A process fails.
pub fn catch_up(
    k: &Kairos,
    bin: &Bin,
    server: &Server,
    dir: &Path,
    n: usize,
    rows: &mut Vec<Row>,
) -> Result<()> {
    let (a, b) = k.pair_of(bin, server, dir, "catchup")?;
    let first = Utc::now() + chrono::Duration::hours(2);
    let (import, said) = k.import(&a, &calendar("cu", n, first, chrono::Duration::seconds(5)))?;
    let outbox = k.json(&a, &["sync", "status"])?["outbox"]
        .as_u64()
        .unwrap_or(0);
    println!(
        "  a imported {} events in {import:.2?}; its push left {outbox} ops in the outbox; kairos said: {said:?}",
        thousands(n as u64),
    );
    let t = Instant::now();
    let s = k.json(&a, &["sync", "now"])?;
    println!("  `kairos sync now` on a: {s} in {:.2?}", t.elapsed());
    if outbox > 0 {
        rows.push(Row::info(
            "catch-up: ops left in a's outbox after its import's push",
            format!("{outbox} (kairos: {said:.160})"),
        ));
    }
    let t = Instant::now();
    let out = k.json(&b, &["sync", "now"])?;
    let wall = t.elapsed();
    let pulled = out["pulled"].as_u64().unwrap_or(0);
    let (ua, ub) = (k.upcoming(&a)?, k.upcoming(&b)?);
    let same = ua == ub;
    println!(
        "  b: `kairos sync now` {out} in {wall:.2?}; upcoming a {} b {}, equal: {same}",
        ua.len(),
        ub.len()
    );
    rows.push(Row::new(
        &format!(
            "catch-up: `kairos sync now` on b after {} ops",
            thousands(n as u64)
        ),
        "≤ 2 s",
        format!("**{wall:.2?}** (pulled {pulled})"),
        wall <= Duration::from_secs(2),
    ));
    rows.push(Row::new(
        "catch-up: `kairos upcoming` on b equals a's",
        "equal",
        format!(
            "{} and {} reminders, {}",
            ua.len(),
            ub.len(),
            if same { "equal" } else { "DIFFERENT" }
        ),
        same && ua.len() >= n,
    ));
    // The server's share: a protocol client joined to the account (it
    // decodes every op and stores nothing), from cursor 0 to `caught_up`.
    let code = k.json(&a, &["sync", "pair"])?["code"]
        .as_str()
        .context("pair: no code")?
        .to_owned();
    let url = server.url.clone();
    let wire = futures_block(async move {
        let c = super::client::join(&url, &code, "wire").await?;
        let t = Instant::now();
        let s = super::client::Session::start(&url, &c, 0).await?;
        let took = t.elapsed();
        drop(s);
        Ok(took)
    })?;
    println!("  a protocol client from cursor 0 to caught_up: {wire:.2?}");
    rows.push(Row::new(
        "catch-up: the server's share (a protocol client, no store: upgrade, hello → caught_up)",
        "≤ 0.3 s",
        format!("**{wire:.2?}**"),
        wire <= Duration::from_millis(300),
    ));
    rows.push(Row::info(
        "catch-up: `kairos import` of them on a (not timed above)",
        format!("{import:.2?}"),
    ));
    Ok(())
}
