//! The one thread that writes, committing in groups: it takes every job
//! waiting, runs each in a savepoint of one transaction (a failing job
//! rolls back alone), commits once (`synchronous=FULL`: one fsync for the
//! group), and only then replies and reports what became durable, in
//! commit order.

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use chrono::{DateTime, Utc};
use kairos_proto::{Effect, Hlc, Op, PushResult, SeqOp, Stored, ids, survivors};
use rusqlite::{Connection, OptionalExtension, params};
use tokio::sync::oneshot;

use super::{Auth, Code, Joined, Refusal, StoreError};
use crate::secrets;

/// The most jobs in one transaction.
const MAX_GROUP: usize = 4096;

pub(crate) enum Job {
    Push {
        account: String,
        device: String,
        ops: Vec<Op>,
        reply: oneshot::Sender<Result<Vec<PushResult>, StoreError>>,
    },
    Join {
        code: String,
        name: String,
        reply: oneshot::Sender<Result<Result<Joined, Refusal>, StoreError>>,
    },
    Pair {
        account: String,
        ttl: Duration,
        reply: oneshot::Sender<Result<Code, StoreError>>,
    },
    Revoke {
        account: String,
        device: String,
        reply: oneshot::Sender<Result<bool, StoreError>>,
    },
    Touch {
        device: String,
    },
}

/// What became durable, reported after the commit in commit order.
#[derive(Debug, Clone)]
pub enum Committed {
    /// New ops of `account` pushed by `from` (duplicates are not in it).
    Ops {
        /// The account.
        account: String,
        /// The device that pushed them (not sent back to it live).
        from: String,
        /// The ops with their seqs, ascending.
        ops: Vec<SeqOp>,
        /// The account's head after them.
        head: u64,
    },
    /// A device was revoked: close its sessions.
    Revoked {
        /// Its account.
        account: String,
        /// The device.
        device: String,
    },
}

pub(crate) struct Writer {
    tx: Mutex<Option<Sender<Job>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Writer {
    pub(crate) fn start(
        conn: Connection,
        keep: u64,
        on_commit: Box<dyn Fn(Committed) + Send>,
    ) -> Result<Self, StoreError> {
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("store-writer".into())
            .spawn(move || run(conn, &rx, keep, &*on_commit))
            .map_err(|source| StoreError::Io {
                path: "store-writer thread".into(),
                source,
            })?;
        Ok(Self {
            tx: Mutex::new(Some(tx)),
            thread: Mutex::new(Some(thread)),
        })
    }

    pub(crate) fn send(&self, job: Job) -> Result<(), StoreError> {
        let guard = self.tx.lock().map_err(|_| StoreError::Closed)?;
        guard
            .as_ref()
            .ok_or(StoreError::Closed)?
            .send(job)
            .map_err(|_| StoreError::Closed)
    }
}

impl Drop for Writer {
    /// Finishes the jobs already sent, then stops the thread.
    fn drop(&mut self) {
        if let Ok(mut tx) = self.tx.lock() {
            tx.take();
        }
        if let Some(t) = self.thread.lock().ok().and_then(|mut t| t.take()) {
            let _ = t.join();
        }
    }
}

/// A job done inside the transaction, its reply held until the commit.
enum Done {
    Push(
        oneshot::Sender<Result<Vec<PushResult>, StoreError>>,
        Result<(Vec<PushResult>, Option<Committed>), StoreError>,
    ),
    Join(
        oneshot::Sender<Result<Result<Joined, Refusal>, StoreError>>,
        Result<Result<Joined, Refusal>, StoreError>,
    ),
    Pair(
        oneshot::Sender<Result<Code, StoreError>>,
        Result<Code, StoreError>,
    ),
    Revoke(
        oneshot::Sender<Result<bool, StoreError>>,
        Result<(bool, Option<Committed>), StoreError>,
    ),
    Touch,
}

fn run(mut conn: Connection, rx: &Receiver<Job>, keep: u64, on_commit: &dyn Fn(Committed)) {
    while let Ok(first) = rx.recv() {
        let mut jobs = vec![first];
        while jobs.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(job) => jobs.push(job),
                Err(_) => break,
            }
        }
        let now = Utc::now();
        let (done, commit) = match conn.transaction() {
            Ok(tx) => {
                let done: Vec<Done> = jobs.into_iter().map(|job| apply(&tx, job, now)).collect();
                (done, tx.commit().map_err(|e| e.to_string()))
            }
            Err(e) => (
                jobs.into_iter().map(|j| fail(j, &e.to_string())).collect(),
                Ok(()),
            ),
        };
        let mut touched = BTreeSet::new();
        for d in done {
            deliver(d, commit.as_ref().err(), on_commit, &mut touched);
        }
        if commit.is_ok() {
            for account in touched {
                if let Err(e) = maybe_compact(&mut conn, &account, keep) {
                    tracing::warn!(%account, "compaction failed: {e}");
                }
            }
        }
    }
}

/// Replies (after the commit) and reports what became durable.
fn deliver(
    d: Done,
    failed: Option<&String>,
    on_commit: &dyn Fn(Committed),
    touched: &mut BTreeSet<String>,
) {
    let lost = || StoreError::Commit(failed.cloned().unwrap_or_default());
    match d {
        Done::Push(reply, r) => {
            let r = match (failed, r) {
                (Some(_), _) => Err(lost()),
                (None, Ok((results, event))) => {
                    if let Some(event) = event {
                        if let Committed::Ops { account, .. } = &event {
                            touched.insert(account.clone());
                        }
                        on_commit(event);
                    }
                    Ok(results)
                }
                (None, Err(e)) => Err(e),
            };
            let _ = reply.send(r);
        }
        Done::Revoke(reply, r) => {
            let r = match (failed, r) {
                (Some(_), _) => Err(lost()),
                (None, Ok((found, event))) => {
                    event.into_iter().for_each(on_commit);
                    Ok(found)
                }
                (None, Err(e)) => Err(e),
            };
            let _ = reply.send(r);
        }
        Done::Join(reply, r) => {
            let _ = reply.send(if failed.is_some() { Err(lost()) } else { r });
        }
        Done::Pair(reply, r) => {
            let _ = reply.send(if failed.is_some() { Err(lost()) } else { r });
        }
        Done::Touch => {}
    }
}

fn fail(job: Job, why: &str) -> Done {
    let e = || StoreError::Commit(why.to_owned());
    match job {
        Job::Push { reply, .. } => Done::Push(reply, Err(e())),
        Job::Join { reply, .. } => Done::Join(reply, Err(e())),
        Job::Pair { reply, .. } => Done::Pair(reply, Err(e())),
        Job::Revoke { reply, .. } => Done::Revoke(reply, Err(e())),
        Job::Touch { .. } => Done::Touch,
    }
}

/// Runs one job in its own savepoint: if it fails, only it is undone.
fn apply(tx: &rusqlite::Transaction<'_>, job: Job, now: DateTime<Utc>) -> Done {
    fn inner<T>(
        tx: &rusqlite::Transaction<'_>,
        f: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        tx.execute_batch("SAVEPOINT job")?;
        let r = f(tx);
        match &r {
            Ok(_) => tx.execute_batch("RELEASE job")?,
            Err(_) => tx.execute_batch("ROLLBACK TO job; RELEASE job")?,
        }
        r
    }
    match job {
        Job::Push {
            account,
            device,
            ops,
            reply,
        } => Done::Push(reply, inner(tx, |c| push(c, &account, &device, ops))),
        Job::Join { code, name, reply } => {
            Done::Join(reply, inner(tx, |c| join(c, &code, &name, now)))
        }
        Job::Pair {
            account,
            ttl,
            reply,
        } => Done::Pair(
            reply,
            inner(tx, |c| create_code(c, &account, ttl, false, now)),
        ),
        Job::Revoke {
            account,
            device,
            reply,
        } => Done::Revoke(reply, inner(tx, |c| revoke(c, &account, &device, now))),
        Job::Touch { device } => {
            let _ = inner(tx, |c| {
                c.prepare_cached("UPDATE devices SET last_seen_ms = ?1 WHERE id = ?2")?
                    .execute(params![now.timestamp_millis(), device])?;
                Ok(())
            });
            Done::Touch
        }
    }
}

pub(crate) fn to_u64(i: i64) -> u64 {
    u64::try_from(i).unwrap_or(0)
}

pub(crate) fn to_i64(u: u64) -> i64 {
    i64::try_from(u).unwrap_or(i64::MAX)
}

fn push(
    c: &Connection,
    account: &str,
    device: &str,
    ops: Vec<Op>,
) -> Result<(Vec<PushResult>, Option<Committed>), StoreError> {
    let mut head = to_u64(
        c.prepare_cached("SELECT head FROM accounts WHERE id = ?1")?
            .query_row([account], |r| r.get::<_, i64>(0))?,
    );
    let mut results = Vec::with_capacity(ops.len());
    let mut fresh = Vec::new();
    let mut known = c.prepare_cached("SELECT seq FROM op_ids WHERE account = ?1 AND op_id = ?2")?;
    let mut add_id =
        c.prepare_cached("INSERT INTO op_ids (account, op_id, seq) VALUES (?1, ?2, ?3)")?;
    let mut add_op = c.prepare_cached(
        "INSERT INTO ops (account, seq, op_id, device, entity, hlc, kind, until_ms, op_json)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?;
    for op in ops {
        if let Some(seq) = known
            .query_row(params![account, op.id], |r| r.get::<_, i64>(0))
            .optional()?
        {
            results.push(PushResult {
                id: op.id,
                seq: to_u64(seq),
            });
            continue;
        }
        head += 1;
        let seq = to_i64(head);
        let until = match op.body.effect() {
            Effect::Snooze(until) => Some(until.timestamp_millis()),
            _ => None,
        };
        let json =
            serde_json::to_string(&op).map_err(|e| StoreError::Corrupt(head, e.to_string()))?;
        add_id.execute(params![account, op.id, seq])?;
        add_op.execute(params![
            account,
            seq,
            op.id,
            device,
            op.entity(),
            op.hlc.to_string(),
            op.body.kind(),
            until,
            json
        ])?;
        results.push(PushResult {
            id: op.id.clone(),
            seq: head,
        });
        fresh.push(SeqOp { seq: head, op });
    }
    c.prepare_cached("UPDATE accounts SET head = ?1 WHERE id = ?2")?
        .execute(params![to_i64(head), account])?;
    let event = (!fresh.is_empty()).then(|| Committed::Ops {
        account: account.to_owned(),
        from: device.to_owned(),
        ops: fresh,
        head,
    });
    Ok((results, event))
}

fn join(
    c: &Connection,
    code: &str,
    name: &str,
    now: DateTime<Utc>,
) -> Result<Result<Joined, Refusal>, StoreError> {
    let hash = secrets::sha256(code);
    let row = c
        .prepare_cached(
            "SELECT account, expires_ms, used_ms FROM pairing_codes WHERE code_sha256 = ?1",
        )?
        .query_row([&hash], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, Option<i64>>(2)?,
            ))
        })
        .optional()?;
    let account = match row {
        None => return Ok(Err(Refusal::UnknownCode)),
        Some((_, _, Some(_))) => return Ok(Err(Refusal::UsedCode)),
        Some((_, expires, None)) if now.timestamp_millis() >= expires => {
            return Ok(Err(Refusal::ExpiredCode));
        }
        Some((account, _, None)) => account,
    };
    let device = secrets::new_device_id().map_err(StoreError::Random)?;
    let token = secrets::new_token().map_err(StoreError::Random)?;
    let now_ms = now.timestamp_millis();
    c.prepare_cached("UPDATE pairing_codes SET used_ms = ?1, used_by = ?2 WHERE code_sha256 = ?3")?
        .execute(params![now_ms, device, hash])?;
    c.prepare_cached(
        "INSERT INTO devices (id, account, name, token_sha256, created_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![device, account, name, secrets::sha256(&token), now_ms])?;
    Ok(Ok(Joined {
        auth: Auth { account, device },
        token,
    }))
}

/// A new pairing code for `account` valid for `ttl` (creating the account
/// first when `create` is set: `kairos-server invite`).
pub(crate) fn create_code(
    c: &Connection,
    account: &str,
    ttl: Duration,
    create: bool,
    now: DateTime<Utc>,
) -> Result<Code, StoreError> {
    let now_ms = now.timestamp_millis();
    if create {
        c.prepare_cached("INSERT OR IGNORE INTO accounts (id, created_ms) VALUES (?1, ?2)")?
            .execute(params![account, now_ms])?;
    }
    let code = secrets::new_pairing_code().map_err(StoreError::Random)?;
    let canonical = ids::normalize_pairing_code(&code).unwrap_or_default();
    let ttl_ms = i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX);
    let expires_ms = now_ms.saturating_add(ttl_ms);
    c.prepare_cached(
        "INSERT INTO pairing_codes (code_sha256, account, created_ms, expires_ms) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![secrets::sha256(&canonical), account, now_ms, expires_ms])?;
    let expires_at =
        DateTime::from_timestamp_millis(expires_ms).unwrap_or(DateTime::<Utc>::MAX_UTC);
    Ok(Code {
        account: account.to_owned(),
        code,
        expires_at,
    })
}

fn revoke(
    c: &Connection,
    account: &str,
    device: &str,
    now: DateTime<Utc>,
) -> Result<(bool, Option<Committed>), StoreError> {
    let changed = c
        .prepare_cached("UPDATE devices SET revoked_ms = ?1 WHERE id = ?2 AND account = ?3 AND revoked_ms IS NULL")?
        .execute(params![now.timestamp_millis(), device, account])?;
    let found = changed == 1
        || c.prepare_cached("SELECT 1 FROM devices WHERE id = ?1 AND account = ?2")?
            .exists(params![device, account])?;
    // Reported even when it was revoked already: closing twice is harmless.
    let event = found.then(|| Committed::Revoked {
        account: account.to_owned(),
        device: device.to_owned(),
    });
    Ok((found, event))
}

/// Compacts `account` once `keep` ops arrived since the last compaction.
fn maybe_compact(conn: &mut Connection, account: &str, keep: u64) -> Result<(), StoreError> {
    let tx = conn.transaction()?;
    let (head, floor, compacted) = tx.query_row(
        "SELECT head, floor, compacted_head FROM accounts WHERE id = ?1",
        [account],
        |r| Ok((to_u64(r.get(0)?), to_u64(r.get(1)?), to_u64(r.get(2)?))),
    )?;
    if head.saturating_sub(compacted) < keep.max(1) {
        return Ok(());
    }
    let cutoff = head.saturating_sub(keep);
    let rows: Vec<(u64, String, Hlc, Effect)> = {
        let mut stmt = tx.prepare_cached(
            "SELECT seq, entity, hlc, kind, until_ms FROM ops WHERE account = ?1 ORDER BY seq",
        )?;
        let mut out = Vec::new();
        let mut rows = stmt.query([account])?;
        while let Some(r) = rows.next()? {
            let seq = to_u64(r.get(0)?);
            let hlc: String = r.get(2)?;
            let hlc = hlc.parse().map_err(|e: kairos_proto::HlcParseError| {
                StoreError::Corrupt(seq, e.to_string())
            })?;
            let kind: String = r.get(3)?;
            let effect = match (kind.as_str(), r.get::<_, Option<i64>>(4)?) {
                ("reminder.dismiss", _) => Effect::Dismiss,
                ("reminder.snooze", Some(ms)) => Effect::Snooze(
                    DateTime::from_timestamp_millis(ms)
                        .ok_or_else(|| StoreError::Corrupt(seq, "until".into()))?,
                ),
                _ => Effect::Write,
            };
            out.push((seq, r.get(1)?, hlc, effect));
        }
        out
    };
    let keep_set = survivors(rows.iter().map(|(seq, entity, hlc, effect)| Stored {
        seq: *seq,
        entity,
        hlc,
        effect: *effect,
    }));
    let mut new_floor = floor;
    let mut removed = 0usize;
    {
        let mut del = tx.prepare_cached("DELETE FROM ops WHERE account = ?1 AND seq = ?2")?;
        for (seq, ..) in rows
            .iter()
            .filter(|(s, ..)| *s <= cutoff && !keep_set.contains(s))
        {
            del.execute(params![account, to_i64(*seq)])?;
            new_floor = new_floor.max(*seq);
            removed += 1;
        }
    }
    tx.execute(
        "UPDATE accounts SET floor = ?1, compacted_head = ?2 WHERE id = ?3",
        params![to_i64(new_floor), to_i64(head), account],
    )?;
    tx.commit()?;
    tracing::info!(%account, removed, floor = new_floor, head, "compacted");
    Ok(())
}
