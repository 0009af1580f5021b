//! Reads, on a small pool of connections used from tokio's blocking
//! threads (never on an async worker). WAL lets them run beside the writer.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use chrono::DateTime;
use kairos_proto::{DeviceInfo, Op, SeqOp};
use rusqlite::{Connection, OptionalExtension, params};
use tokio::sync::Semaphore;

use super::tx::{to_i64, to_u64};
use super::{Auth, Log, Refusal, StoreError, schema};

/// Read connections, and reads at once: a read waits for a connection
/// rather than opening another. (Opening one per read beyond the kept
/// ones made 64 concurrent connects open and drop ≈ 1,200 connections,
/// 4.5 MB of heap churn, and one blocking thread each: docs/benchmarks.md.)
const POOL: usize = 8;

pub(crate) struct Readers {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
    /// One permit per connection: held from before the blocking task to
    /// its end.
    permits: Arc<Semaphore>,
}

/// One read connection, borrowed from the pool.
pub(crate) struct Reader<'a>(&'a Connection);

impl Readers {
    pub(crate) fn new(path: PathBuf) -> Self {
        Self {
            path,
            idle: Mutex::new(Vec::new()),
            permits: Arc::new(Semaphore::new(POOL)),
        }
    }

    /// Runs `f` on a pooled connection on a blocking thread.
    pub(crate) async fn run<T: Send + 'static>(
        self: &Arc<Self>,
        f: impl FnOnce(&Reader<'_>) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let this = Arc::clone(self);
        let permit = Arc::clone(&self.permits)
            .acquire_owned()
            .await
            .map_err(|_| StoreError::Closed)?;
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let conn = match this.idle.lock().ok().and_then(|mut p| p.pop()) {
                Some(c) => c,
                None => schema::open(&this.path)?,
            };
            let out = f(&Reader(&conn));
            if let Ok(mut pool) = this.idle.lock()
                && pool.len() < POOL
            {
                pool.push(conn);
            }
            out
        })
        .await
        .map_err(|_| StoreError::Closed)?
    }
}

impl Reader<'_> {
    pub(crate) fn authenticate(&self, hash: &[u8]) -> Result<Result<Auth, Refusal>, StoreError> {
        let row = self
            .0
            .prepare_cached("SELECT id, account, revoked_ms FROM devices WHERE token_sha256 = ?1")?
            .query_row([hash], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Option<i64>>(2)?,
                ))
            })
            .optional()?;
        Ok(match row {
            None => Err(Refusal::UnknownToken),
            Some((_, _, Some(_))) => Err(Refusal::Revoked),
            Some((device, account, None)) => Ok(Auth { account, device }),
        })
    }

    pub(crate) fn is_live(&self, device: &str) -> Result<bool, StoreError> {
        Ok(self
            .0
            .prepare_cached("SELECT 1 FROM devices WHERE id = ?1 AND revoked_ms IS NULL")?
            .exists([device])?)
    }

    /// A real query on the store (`/readyz`).
    pub(crate) fn ping(&self) -> Result<(), StoreError> {
        self.0
            .prepare_cached("SELECT count(*) FROM (SELECT 1 FROM accounts LIMIT 1)")?
            .query_row([], |_| Ok(()))?;
        Ok(())
    }

    pub(crate) fn log(&self, account: &str) -> Result<Log, StoreError> {
        Ok(self
            .0
            .prepare_cached("SELECT head, floor FROM accounts WHERE id = ?1")?
            .query_row([account], |r| {
                Ok(Log {
                    head: to_u64(r.get(0)?),
                    floor: to_u64(r.get(1)?),
                })
            })?)
    }

    /// [`Self::log`], `None` for an account that does not exist.
    pub(crate) fn log_if_any(&self, account: &str) -> Result<Option<Log>, StoreError> {
        match self.log(account) {
            Ok(l) => Ok(Some(l)),
            Err(StoreError::Sqlite(rusqlite::Error::QueryReturnedNoRows)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    pub(crate) fn ops_after(
        &self,
        account: &str,
        after: u64,
        max: usize,
        max_bytes: usize,
    ) -> Result<Vec<SeqOp>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT seq, op_json FROM ops WHERE account = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
        )?;
        let mut rows = stmt.query(params![
            account,
            to_i64(after),
            i64::try_from(max).unwrap_or(i64::MAX)
        ])?;
        let (mut out, mut bytes) = (Vec::new(), 0usize);
        while let Some(r) = rows.next()? {
            let seq = to_u64(r.get(0)?);
            let json: String = r.get(1)?;
            bytes += json.len() + 32;
            if bytes > max_bytes && !out.is_empty() {
                break;
            }
            let op: Op =
                serde_json::from_str(&json).map_err(|e| StoreError::Corrupt(seq, e.to_string()))?;
            out.push(SeqOp { seq, op });
        }
        Ok(out)
    }

    pub(crate) fn devices(&self, account: &str) -> Result<Vec<DeviceInfo>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT id, name, created_ms, last_seen_ms, revoked_ms FROM devices
             WHERE account = ?1 ORDER BY created_ms, id",
        )?;
        let rows = stmt.query_map([account], |r| {
            Ok(DeviceInfo {
                device: r.get(0)?,
                name: r.get(1)?,
                created_at: DateTime::from_timestamp_millis(r.get(2)?).unwrap_or_default(),
                last_seen: r
                    .get::<_, Option<i64>>(3)?
                    .and_then(DateTime::from_timestamp_millis),
                revoked: r.get::<_, Option<i64>>(4)?.is_some(),
                connected: false,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
