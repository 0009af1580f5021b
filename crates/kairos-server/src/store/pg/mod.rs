//! The PostgreSQL backend: several `kairos-server` instances on one
//! database. The same tables and the same semantics as the SQLite store:
//! each account's `head` row is locked (`FOR NO KEY UPDATE`) by the
//! transaction that hands out its next seqs, so seqs are gap-free per
//! account and become visible in order, whichever instance or writer
//! commits them (each instance runs `WRITERS` writers, sharded by account);
//! `ops`' unique key (account_num, op_id) deduplicates per account (an op
//! emptied by compaction keeps its row and so its id); a pairing code is
//! consumed by an `UPDATE … WHERE used_ms IS NULL` that only one instance
//! can win.
//!
//! The schema is never changed by a serving instance: `kairos-server
//! migrate` applies `migrations/postgres/` and a server refuses to start on
//! an older or newer schema (`schema.rs`). After each commit the writer
//! hands its hints to a task that sends them as `NOTIFY`s, many groups'
//! in one statement (`hints.rs`; never inside the writing transaction:
//! there it serialises commits on a global lock); `listen.rs` turns the
//! other instances' hints into events. Compaction runs on a task of its
//! own, beside the writers (`compactor.rs`).

mod admin;
mod batch;
mod compaction;
mod compactor;
mod copy;
mod flight;
mod hints;
mod listen;
mod presence;
mod schema;
mod tls;
mod tx;
mod writer;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use deadpool_postgres::{Manager, Object, Pool};
use kairos_proto::{DeviceInfo, Op, SeqOp};
use tokio::sync::{mpsc, oneshot};

use super::tx::{to_i64, to_u64};
use super::writer::{Committed, Job};
use super::{Auth, Code, Heads, Log, Refusal, StoreError};

pub(crate) use admin::{delete, export};
pub use presence::Round;
pub use schema::{SCHEMA_VERSION, migrate};

/// Connections in one instance's pool (reads, and the writer's one).
const POOL: usize = 16;

/// Writer tasks per instance, each on its own connection with its own
/// group commit; jobs are sharded by account, so one account's jobs keep
/// their order and two writers never want the same account's row. One
/// writer left the database's second core idle while it waited on its
/// commit: 49–56k ops/s against 64–94k with two (64 devices; four did no
/// better than two on two cores).
const WRITERS: usize = 2;

/// The writer of `key` among `n` (FNV-1a: stable, and cheap).
fn shard(key: &str, n: usize) -> usize {
    let h = crate::fnv1a(key.bytes());
    let n = u64::try_from(n).unwrap_or(1).max(1);
    usize::try_from(h % n).unwrap_or(0)
}

/// The channel the hints are sent on.
const CHANNEL: &str = "kairos_sync";

pub(crate) struct Postgres {
    pool: Pool,
    target: Target,
    /// One queue per writer.
    jobs: Vec<mpsc::UnboundedSender<Job>>,
    done: Mutex<Option<oneshot::Receiver<()>>>,
    /// The writers' groups that went in again.
    retries: Arc<writer::Retries>,
}

pub(crate) use tls::{Target, parse};

pub(crate) fn pool(target: &Target) -> Result<Pool, StoreError> {
    Pool::builder(Manager::new(target.config.clone(), target.tls.clone()))
        .max_size(POOL)
        .build()
        .map_err(|e| StoreError::Pool(e.to_string()))
}

impl Postgres {
    pub(crate) async fn connect(
        url: &str,
        keep: u64,
        hints: bool,
        on_commit: Box<dyn Fn(Committed) + Send + Sync>,
    ) -> Result<Self, StoreError> {
        let target = parse(url)?;
        let pool = pool(&target)?;
        schema::check(&*get(&pool).await?).await?;
        let on_commit: Arc<dyn Fn(Committed) + Send + Sync> = Arc::from(on_commit);
        let (done_tx, done) = oneshot::channel();
        let mut jobs = Vec::with_capacity(WRITERS);
        let mut running = Vec::with_capacity(WRITERS);
        let retries = Arc::new(writer::Retries::default());
        let hints = hints.then(|| hints::start(pool.clone()));
        let compactor = compactor::Compactor::start(pool.clone(), keep);
        for _ in 0..WRITERS {
            let (tx, rx) = mpsc::unbounded_channel();
            jobs.push(tx);
            let w = writer::Writer {
                pool: pool.clone(),
                keep,
                hints: hints.clone(),
                on_commit: Arc::clone(&on_commit),
                look_up: std::sync::atomic::AtomicU32::new(0),
                retries: Arc::clone(&retries),
                compaction: compaction::Compaction::default(),
                compactor: compactor.clone(),
            };
            running.push(tokio::spawn(w.run(rx)));
        }
        tokio::spawn(async move {
            for w in running {
                let _ = w.await;
            }
            let _ = done_tx.send(());
        });
        Ok(Self {
            pool,
            target,
            jobs,
            done: Mutex::new(Some(done)),
            retries,
        })
    }

    /// The writers' groups that went in again, so far.
    pub(crate) fn retries(&self) -> (u64, u64) {
        use std::sync::atomic::Ordering::Relaxed;
        (
            self.retries.with_lookup.load(Relaxed),
            self.retries.job_by_job.load(Relaxed),
        )
    }

    /// Every job of one account goes to the same writer (its pushes keep
    /// their order); a join, which names no account, to the first.
    pub(crate) fn send(&self, job: Job) -> Result<(), StoreError> {
        let shard = match &job {
            Job::Push { account, .. }
            | Job::Pair { account, .. }
            | Job::Revoke { account, .. }
            | Job::Touch { account, .. } => shard(account, self.jobs.len()),
            Job::Join { .. } => 0,
        };
        self.jobs[shard].send(job).map_err(|_| StoreError::Closed)
    }

    /// Completes when the writer has stopped (every handle dropped).
    pub(crate) fn done(&self) -> Option<oneshot::Receiver<()>> {
        self.done.lock().ok().and_then(|mut d| d.take())
    }

    pub(crate) fn listen(
        &self,
        on_hint: Arc<dyn Fn(Committed) + Send + Sync>,
    ) -> tokio::task::JoinHandle<()> {
        tokio::spawn(listen::run(self.target.clone(), on_hint))
    }

    pub(crate) async fn authenticate(
        &self,
        hash: &[u8],
    ) -> Result<Result<Auth, Refusal>, StoreError> {
        let c = get(&self.pool).await?;
        let stmt = c
            .prepare_cached("SELECT id, account, revoked_ms FROM devices WHERE token_sha256 = $1")
            .await?;
        Ok(match c.query_opt(&stmt, &[&hash]).await? {
            None => Err(Refusal::UnknownToken),
            Some(r) if r.get::<_, Option<i64>>(2).is_some() => Err(Refusal::Revoked),
            Some(r) => Ok(Auth {
                device: r.get(0),
                account: r.get(1),
            }),
        })
    }

    pub(crate) async fn is_live(&self, device: &str) -> Result<bool, StoreError> {
        let c = get(&self.pool).await?;
        let stmt = c
            .prepare_cached("SELECT 1 FROM devices WHERE id = $1 AND revoked_ms IS NULL")
            .await?;
        Ok(c.query_opt(&stmt, &[&device]).await?.is_some())
    }

    pub(crate) async fn log(&self, account: &str) -> Result<Log, StoreError> {
        let c = get(&self.pool).await?;
        let stmt = c
            .prepare_cached("SELECT head, floor FROM accounts WHERE id = $1")
            .await?;
        let r = c.query_one(&stmt, &[&account]).await?;
        Ok(Log {
            head: to_u64(r.get(0)),
            floor: to_u64(r.get(1)),
        })
    }

    pub(crate) async fn heads(&self, accounts: &[String]) -> Result<Vec<Heads>, StoreError> {
        let c = get(&self.pool).await?;
        let stmt = c
            .prepare_cached("SELECT id, head, revocations FROM accounts WHERE id = ANY($1)")
            .await?;
        let rows = c.query(&stmt, &[&accounts]).await?;
        Ok(rows
            .iter()
            .map(|r| Heads {
                account: r.get(0),
                head: to_u64(r.get(1)),
                revocations: to_u64(r.get(2)),
            })
            .collect())
    }

    /// Those of `devices` that are revoked.
    pub(crate) async fn revoked_among(
        &self,
        devices: &[String],
    ) -> Result<Vec<String>, StoreError> {
        let c = get(&self.pool).await?;
        let stmt = c
            .prepare_cached("SELECT id FROM devices WHERE id = ANY($1) AND revoked_ms IS NOT NULL")
            .await?;
        let rows = c.query(&stmt, &[&devices]).await?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    pub(crate) async fn ops_after(
        &self,
        account: &str,
        after: u64,
        max: usize,
        max_bytes: usize,
    ) -> Result<Vec<SeqOp>, StoreError> {
        let c = get(&self.pool).await?;
        let stmt = c
            .prepare_cached(
                "SELECT seq, op_json FROM ops WHERE account_num = (SELECT num FROM accounts WHERE id = $1) AND seq > $2 AND op_json IS NOT NULL ORDER BY seq LIMIT $3",
            )
            .await?;
        let limit = i64::try_from(max).unwrap_or(i64::MAX);
        let rows = c.query(&stmt, &[&account, &to_i64(after), &limit]).await?;
        let (mut out, mut bytes) = (Vec::new(), 0usize);
        for r in rows {
            let seq = to_u64(r.get(0));
            let json: &str = r.get(1);
            bytes += json.len() + 32;
            if bytes > max_bytes && !out.is_empty() {
                break;
            }
            let op: Op =
                serde_json::from_str(json).map_err(|e| StoreError::Corrupt(seq, e.to_string()))?;
            out.push(SeqOp { seq, op });
        }
        Ok(out)
    }

    pub(crate) async fn devices(&self, account: &str) -> Result<Vec<DeviceInfo>, StoreError> {
        let c = get(&self.pool).await?;
        let stmt = c
            .prepare_cached(
                "SELECT id, name, created_ms, last_seen_ms, revoked_ms,
                   EXISTS (SELECT 1 FROM presence p JOIN instances i ON i.id = p.instance
                           WHERE p.device = d.id AND i.alive_until_ms > $2)
                 FROM devices d WHERE account = $1 ORDER BY created_ms, id",
            )
            .await?;
        let now = Utc::now().timestamp_millis();
        let rows = c.query(&stmt, &[&account, &now]).await?;
        Ok(rows
            .iter()
            .map(|r| DeviceInfo {
                device: r.get(0),
                name: r.get(1),
                created_at: DateTime::from_timestamp_millis(r.get(2)).unwrap_or_default(),
                last_seen: r
                    .get::<_, Option<i64>>(3)
                    .and_then(DateTime::from_timestamp_millis),
                revoked: r.get::<_, Option<i64>>(4).is_some(),
                // On an instance alive now (`presence.rs`); the caller adds
                // its own sessions.
                connected: r.get(5),
            })
            .collect())
    }
}

async fn get(pool: &Pool) -> Result<Object, StoreError> {
    pool.get().await.map_err(super::pool_error)
}

/// `kairos-server invite` on PostgreSQL: a pairing code for `account`,
/// creating the account if new.
pub(crate) async fn invite(
    url: &str,
    account: &str,
    ttl: Duration,
    now: DateTime<Utc>,
) -> Result<Code, StoreError> {
    let pool = pool(&parse(url)?)?;
    let mut c = get(&pool).await?;
    schema::check(&c).await?;
    let tx = c.transaction().await?;
    let code = tx::create_code(&tx, account, ttl, true, now).await?;
    tx.commit().await?;
    Ok(code)
}
