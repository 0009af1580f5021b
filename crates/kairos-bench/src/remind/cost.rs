//! The cost per delivery of a drain (`REMIND_BENCH_PG_STATS=1`), side by
//! side for Kairos on PostgreSQL and for the Redis baseline: the CPU time
//! each process spent from just before the due time to the last delivery
//! (`/proc/PID/stat`, user + system, every thread; the kernel's ticks, so
//! ±10 ms a process), and on PostgreSQL what the database wrote
//! (`pg_current_wal_lsn()`, `pg_stat_wal`, `pg_stat_database`).
//!
//! Processes: the `kairos-server` instances; the cluster's postmaster and
//! its children (the backends, WAL writer, checkpointer …: the children of
//! the postmaster whose PID `postmaster.pid` names, so other people's
//! PostgreSQL on the machine is not counted); `redis-server`; the bench
//! itself (the receiver, and in the Redis part the workers).

use std::path::Path;

use anyhow::{Context, Result};

/// Clock ticks a second of `/proc/PID/stat` (`USER_HZ`, 100 on Linux
/// everywhere that matters; `getconf CLK_TCK`).
const HZ: f64 = 100.0;

/// CPU seconds (user + system) of process `pid`, every thread; 0 if it is
/// gone.
#[must_use]
pub fn cpu_secs(pid: u32) -> f64 {
    let Ok(s) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    // After the command's closing parenthesis: state, ppid, … utime (14th
    // field overall) and stime (15th).
    let Some(rest) = s.rfind(')').map(|i| &s[i + 2..]) else {
        return 0.0;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    (tick(11) + tick(12)) as f64 / HZ
}

fn ppid(pid: u32) -> Option<u32> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &s[s.rfind(')')? + 2..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// The cluster's postmaster and every child of it, now.
///
/// # Errors
/// `postmaster.pid` cannot be read.
pub fn cluster_pids(data: &Path) -> Result<Vec<u32>> {
    let pm: u32 = std::fs::read_to_string(data.join("postmaster.pid"))
        .context("postmaster.pid")?
        .lines()
        .next()
        .and_then(|l| l.trim().parse().ok())
        .context("postmaster.pid: no PID")?;
    let mut pids = vec![pm];
    for e in std::fs::read_dir("/proc")?.flatten() {
        if let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok())
            && ppid(pid) == Some(pm)
        {
            pids.push(pid);
        }
    }
    Ok(pids)
}

/// Sleeps until wall time `ms` (at once if it is past).
pub async fn sleep_until_ms(ms: i64) {
    let left = ms - chrono::Utc::now().timestamp_millis();
    if let Ok(left) = u64::try_from(left) {
        tokio::time::sleep(std::time::Duration::from_millis(left)).await;
    }
}

/// CPU seconds of each process of each group at one moment.
#[derive(Debug, Clone, Default)]
pub struct Cpu {
    /// (label, [(PID, seconds)]).
    pub groups: Vec<(&'static str, Vec<(u32, f64)>)>,
}

impl Cpu {
    /// Reads `groups` (label, PIDs) now.
    #[must_use]
    pub fn read(groups: &[(&'static str, Vec<u32>)]) -> Self {
        Self {
            groups: groups
                .iter()
                .map(|(l, pids)| (*l, pids.iter().map(|p| (*p, cpu_secs(*p))).collect()))
                .collect(),
        }
    }

    /// Prints µs a delivery of each group between `self` and `after`, and
    /// their sum. A process in `after` and not in `self` (a connection
    /// the pool opened during the drain: its backend) counts whole.
    pub fn print_per(&self, after: &Self, n: usize) {
        let n = n.max(1) as f64;
        let mut total = 0.0;
        let mut parts = Vec::new();
        for ((l, a), (_, b)) in self.groups.iter().zip(&after.groups) {
            let before = |pid: u32| a.iter().find(|(p, _)| *p == pid).map_or(0.0, |(_, s)| *s);
            let secs: f64 = b.iter().map(|(p, s)| s - before(*p)).sum();
            let us = secs * 1e6 / n;
            total += us;
            parts.push(format!("{l} {us:.0}"));
        }
        println!(
            "  CPU µs a delivery (due − 0.1 s → last): {}; all {total:.0}",
            parts.join(", ")
        );
    }
}

/// What PostgreSQL reports at one moment (the WAL position, `pg_stat_wal`,
/// the database's `pg_stat_database` row).
pub const PG_SNAPSHOT: &str =
    "SELECT pg_current_wal_lsn() - '0/0'::pg_lsn, w.wal_records, w.wal_fpi,
        w.wal_bytes, w.wal_write, w.wal_sync, d.xact_commit, d.xact_rollback, d.tup_inserted,
        d.tup_updated, d.tup_deleted, d.blks_hit + d.blks_read
     FROM pg_stat_wal w, pg_stat_database d WHERE d.datname = current_database()";

/// Prints the difference of two [`PG_SNAPSHOT`]s a delivery.
pub fn print_pg(before: &str, after: &str, n: usize) {
    let nums = |s: &str| -> Vec<f64> { s.split('|').map(|v| v.parse().unwrap_or(0.0)).collect() };
    let (a, b) = (nums(before), nums(after));
    let n = n.max(1) as f64;
    let d = |i: usize| (b.get(i).unwrap_or(&0.0) - a.get(i).unwrap_or(&0.0)) / n;
    println!(
        "  PostgreSQL a delivery: WAL {:.0} bytes (LSN), {:.2} records, {:.3} full pages; \
         WAL writes {:.3}, fsyncs {:.3}; commits {:.3}, rollbacks {:.3}; tuples inserted {:.2}, \
         updated {:.2}, deleted {:.2}; buffers touched {:.1}",
        d(0),
        d(1),
        d(2),
        d(4),
        d(5),
        d(6),
        d(7),
        d(8),
        d(9),
        d(10),
        d(11)
    );
}
