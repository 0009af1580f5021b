//! The real `kairos-server`: started on `--listen 127.0.0.1:0` (ready when
//! it prints `{"listening":"ws://…"}`), `invite` run as its own process, and
//! what `/proc` says about its memory and CPU.
//!
//! The server inherits the bench's raised `RLIMIT_NOFILE` (set before any
//! child starts; see [`super::raise_nofile`]). Its stderr (tracing logs) goes
//! to `server.log` in the data directory's parent, so a failure can be read.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::procs::{Guard, status_field};

/// A running server; SIGTERM (then SIGKILL) on drop.
pub struct Server {
    guard: Guard,
    /// `ws://127.0.0.1:PORT`.
    pub url: String,
    /// Its data directory.
    pub data: PathBuf,
    /// From just before `spawn` to reading the `listening` line.
    pub startup: Duration,
}

/// The server binary and what it is told: its store is SQLite in each
/// start's data directory, or the PostgreSQL database of `.1` (migrated
/// beforehand, shared by every start).
#[derive(Debug, Clone)]
pub struct Bin(pub PathBuf, pub Option<String>);

impl Bin {
    /// Starts a server on `data`, waiting (30 s at most) for its line.
    ///
    /// # Errors
    /// It cannot start, exits, or says nothing in time.
    pub fn start(&self, data: &Path) -> Result<Server> {
        let (reader, writer) = std::io::pipe()?;
        let log = std::fs::File::create(data.with_extension("log"))?;
        let mut cmd = Command::new(&self.0);
        cmd.arg("--data")
            .arg(data)
            .args(self.1.iter().flat_map(|url| ["--database", url.as_str()]))
            .args(["--listen", "127.0.0.1:0"])
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::from(writer))
            .stderr(Stdio::from(log));
        let t0 = Instant::now();
        let mut guard = Guard::spawn(&mut cmd, "kairos-server")?;
        // The parent's copy of the write end is in `cmd`; drop it so the
        // reader sees EOF if the server exits.
        drop(cmd);
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(reader).lines();
            if let Some(Ok(l)) = lines.next() {
                let _ = tx.send((l, Instant::now()));
            }
            // Keep draining so the server never blocks on a full pipe.
            for _ in lines {}
        });
        let Ok((line, at)) = rx.recv_timeout(Duration::from_secs(30)) else {
            let status = guard.exited()?;
            bail!(
                "kairos-server printed no line within 30 s (exit: {status:?}); see {}",
                data.with_extension("log").display()
            );
        };
        let v: serde_json::Value = serde_json::from_str(&line)
            .with_context(|| format!("kairos-server's first line is not JSON: {line:?}"))?;
        let url = v["listening"]
            .as_str()
            .with_context(|| format!("no \"listening\" in {line:?}"))?
            .to_owned();
        Ok(Server {
            guard,
            url,
            data: data.to_owned(),
            startup: at - t0,
        })
    }

    /// `kairos-server --data DATA invite ACCOUNT`: the pairing code.
    ///
    /// # Errors
    /// The command fails or prints no code.
    pub async fn invite(&self, data: &Path, account: &str) -> Result<String> {
        let out = tokio::process::Command::new(&self.0)
            .arg("--data")
            .arg(data)
            .args(self.1.iter().flat_map(|url| ["--database", url.as_str()]))
            .args(["invite", account])
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .output()
            .await?;
        if !out.status.success() {
            bail!(
                "invite {account}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .with_context(|| format!("invite {account}: not JSON"))?;
        Ok(v["code"]
            .as_str()
            .with_context(|| format!("invite {account}: no code"))?
            .to_owned())
    }
}

impl Server {
    /// Its PID.
    #[must_use]
    pub fn pid(&self) -> u32 {
        self.guard.pid()
    }

    /// (`VmRSS`, `Pss` from smaps_rollup, `VmHWM`), in kB.
    #[must_use]
    pub fn memory(&self) -> (u64, u64, u64) {
        let proc = PathBuf::from(format!("/proc/{}", self.pid()));
        (
            status_field(&proc.join("status"), "VmRSS").unwrap_or(0),
            status_field(&proc.join("smaps_rollup"), "Pss").unwrap_or(0),
            status_field(&proc.join("status"), "VmHWM").unwrap_or(0),
        )
    }

    /// User + system CPU time it has used so far.
    #[must_use]
    pub fn cpu(&self) -> Duration {
        let stat =
            std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).unwrap_or_default();
        // Fields after the `(comm)`, which may contain spaces: utime and
        // stime are the 14th and 15th fields, i.e. the 12th and 13th after it.
        let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
        let f: Vec<u64> = rest
            .split_whitespace()
            .map(|x| x.parse().unwrap_or(0))
            .collect();
        let ticks = f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0);
        // USER_HZ is 100 on Linux.
        Duration::from_millis(ticks * 10)
    }

    /// The last `n` lines of its stderr log (for a failure's report).
    #[must_use]
    pub fn log_tail(&self, n: usize) -> String {
        let text = std::fs::read_to_string(self.data.with_extension("log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(n)..].join("\n")
    }

    /// Stops it (SIGTERM, SIGKILL after 10 s); whether it exited by itself.
    ///
    /// # Errors
    /// `waitpid` failed.
    pub fn stop(mut self) -> Result<bool> {
        let (status, killed) = self.guard.stop(Duration::from_secs(10))?;
        if !killed && !status.success() {
            println!("  note: kairos-server exited with {status} on SIGTERM");
        }
        Ok(!killed)
    }
}
