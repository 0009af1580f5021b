//! `remind-bench` (issue #21 §3): 100,000 webhook reminders due in the same
//! second, drained by real `kairos-server` instances (two on one
//! PostgreSQL, one on SQLite, two with one killed halfway) and by the usual
//! Redis design (a sorted set, a Lua script popping due members
//! atomically, workers doing the same POSTs), all to the bench's own
//! receiver.
//!
//! - [`pg`]: the throw-away PostgreSQL cluster;
//! - [`receiver`]: the webhook receiver, counting;
//! - [`kairos`]: queueing through the sync protocol, draining, killing;
//! - [`redis`]: the baseline;
//! - [`ceiling`]: the receiver and the POSTs alone, no queue;
//! - [`cost`]: CPU and database writes a delivery (`REMIND_BENCH_PG_STATS=1`).

pub mod ceiling;
pub mod cost;
pub mod kairos;
pub mod pg;
pub mod receiver;
pub mod redis;

use std::collections::HashSet;
use std::time::Duration;

use anyhow::{Result, bail};

use crate::sync::Summary;
use receiver::Receiver;

/// What one drain measured.
#[derive(Debug, Default)]
pub struct Drain {
    /// Reminders queued.
    pub n: usize,
    /// Distinct reminders received.
    pub delivered: usize,
    /// POSTs received.
    pub posts: u64,
    /// POSTs repeating a delivery id (the receiver drops them).
    pub wire_duplicates: u64,
    /// Second delivery ids for one reminder (nothing dedupes them).
    pub logical_duplicates: u64,
    /// Bodies the receiver could not read.
    pub malformed: u64,
    /// First receipt − due, per delivery.
    pub lateness: Option<Summary>,
    /// The due time (ms).
    pub due_ms: i64,
    /// The first and last first receipts (ms).
    pub first_ms: i64,
    /// See `first_ms`.
    pub last_ms: i64,
    /// Kairos: from the first push to all queued.
    pub queued: Option<Duration>,
    /// Kairos: `remind_sent` rows, distinct keys, deliveries not delivered.
    pub store: Option<Vec<u64>>,
    /// The kill's takeover.
    pub kill: Option<Takeover>,
    /// Distinct deliveries first received in each 500 ms from the due time
    /// (the last bucket holds the last one; earlier receipts count in the
    /// first).
    pub timeline: Vec<u64>,
}

impl Drain {
    /// Lost: queued but never received.
    #[must_use]
    pub fn lost(&self) -> usize {
        self.n.saturating_sub(self.delivered)
    }

    /// Due → last first receipt.
    #[must_use]
    pub fn since_due(&self) -> Duration {
        Duration::from_millis(u64::try_from(self.last_ms - self.due_ms).unwrap_or(0))
    }

    /// First → last first receipt.
    #[must_use]
    pub fn span(&self) -> Duration {
        Duration::from_millis(u64::try_from(self.last_ms - self.first_ms).unwrap_or(0))
    }

    /// Whether every reminder arrived once (logically) and the store agrees.
    #[must_use]
    pub fn exact(&self) -> bool {
        let store_ok = self.store.as_ref().is_none_or(|s| {
            s.len() == 3 && s[0] == self.n as u64 && s[1] == self.n as u64 && s[2] == 0
        });
        let kill_ok = self.kill.as_ref().is_none_or(|k| k.missing == 0);
        self.lost() == 0
            && self.logical_duplicates == 0
            && self.malformed == 0
            && store_ok
            && kill_ok
    }
}

/// The kill, as it happened.
pub struct Kill {
    /// When (wall ms).
    pub killed_ms: i64,
    /// Distinct deliveries received by then.
    pub delivered_before: usize,
    /// Delivery ids the killed instance had claimed and not finished.
    pub claims: HashSet<String>,
}

/// How the killed instance's claims were taken over.
#[derive(Debug)]
pub struct Takeover {
    /// Received by then.
    pub delivered_before: usize,
    /// Its unfinished claims.
    pub claims: usize,
    /// Kill → the first and the last of them received again after it.
    pub first: Duration,
    /// See `first`.
    pub all: Duration,
    /// Claims never received after the kill.
    pub missing: usize,
}

impl Kill {
    /// Reads the receipts of the claims.
    #[must_use]
    pub fn measure(&self, hook: &Receiver) -> Takeover {
        let after: Vec<i64> = hook.with(|t| {
            self.claims
                .iter()
                .filter_map(|id| t.first.get(id).map(|f| f.2 - self.killed_ms))
                .filter(|&d| d >= 0)
                .collect()
        });
        let ms = |v: Option<&i64>| Duration::from_millis(v.map_or(0, |&d| d.unsigned_abs()));
        Takeover {
            delivered_before: self.delivered_before,
            claims: self.claims.len(),
            first: ms(after.iter().min()),
            all: ms(after.iter().max()),
            missing: self.claims.len() - after.len(),
        }
    }
}

/// The width of a [`Drain::timeline`] bucket (ms).
pub const TIMELINE_MS: i64 = 500;

/// Waits until `total` distinct deliveries arrived (failing after 60 s
/// without a new one, counted from `due_ms` at the earliest) and `pending()` says nothing is left in flight
/// (30 s at most), then reads the receiver's tally.
///
/// # Errors
/// `pending` failed.
pub async fn wait_drained(
    hook: &Receiver,
    total: usize,
    due_ms: i64,
    pending: impl Fn() -> Result<u64>,
) -> Result<Drain> {
    let mut progress = hook.progress.clone();
    loop {
        if *progress.borrow_and_update() >= total {
            break;
        }
        // 60 s without a new delivery, counted from the due time at the
        // earliest.
        let wait = u64::try_from(due_ms - chrono::Utc::now().timestamp_millis()).unwrap_or(0);
        let wait = Duration::from_millis(wait) + Duration::from_secs(60);
        if tokio::time::timeout(wait, progress.changed())
            .await
            .is_err()
        {
            println!(
                "  no new delivery for 60 s at {} of {total}",
                *progress.borrow()
            );
            break;
        }
    }
    let until = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let p = pending()?;
        if p == 0 {
            break;
        }
        if tokio::time::Instant::now() > until {
            println!("  {p} deliveries still pending 30 s after the drain");
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(hook.with(|t| {
        let mut timeline = Vec::new();
        for f in t.first.values() {
            let b = usize::try_from((f.0 - due_ms).max(0) / TIMELINE_MS).unwrap_or(0);
            if timeline.len() <= b {
                timeline.resize(b + 1, 0);
            }
            timeline[b] += 1;
        }
        let late: Vec<Duration> = t
            .first
            .values()
            .map(|f| Duration::from_millis(u64::try_from(f.0 - f.1).unwrap_or(0)))
            .collect();
        Drain {
            n: total,
            delivered: t.logical.len(),
            posts: t.posts,
            wire_duplicates: t.wire_duplicates(),
            logical_duplicates: t.logical_duplicates,
            malformed: t.malformed,
            lateness: Summary::of(late),
            due_ms,
            first_ms: t.first.values().map(|f| f.0).min().unwrap_or(due_ms),
            last_ms: t.first.values().map(|f| f.0).max().unwrap_or(due_ms),
            timeline,
            ..Drain::default()
        }
    }))
}

/// Fails unless `d` is exact (for the exit status).
///
/// # Errors
/// Lost or duplicated.
pub fn check(name: &str, d: &Drain) -> Result<()> {
    if !d.exact() {
        bail!(
            "{name}: {} lost, {} logical duplicates, {} malformed, store {:?}, kill {:?}",
            d.lost(),
            d.logical_duplicates,
            d.malformed,
            d.store,
            d.kill
        );
    }
    Ok(())
}
