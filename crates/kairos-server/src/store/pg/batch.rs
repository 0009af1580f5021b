//! A group's pushes in a few set-based statements, whatever the number of
//! pushes and accounts: lock the accounts (reading their heads) and look up
//! the known op ids, pipelined; then insert the new ops with their ids and
//! set the heads. No savepoints: if any statement fails, the caller rolls
//! the whole transaction back and runs the group again job by job, so a
//! bad push still fails alone.
//!
//! A group of pushes only (the usual one) runs in a transaction of its own
//! (`write_and_commit`): in one round trip when it is small and needs no
//! lookup (`flight.rs`), else in two when it is small: `BEGIN`
//! pipelined with the locks, then the `INSERT`, the heads' `UPDATE` and
//! `COMMIT` pipelined (seven before: `BEGIN`, the locks, a `COPY` of three
//! as it was prepared each time, the heads, `COMMIT`). A large group
//! `COPY`s its ops in first (fewer WAL records; two round trips more). A
//! group with other jobs uses the writer's transaction (`write`), its
//! jobs then each in a savepoint.
//!
//! Seqs are handed out exactly as job by job: in job order, each account
//! from the head read under its row lock, an id already stored (or pushed
//! earlier in the same group) answered with its first seq and not stored
//! again.

use std::collections::HashMap;

use deadpool_postgres::{Object, Transaction};
use kairos_proto::{PushResult, SeqOp};
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use super::super::tx::{to_i64, to_u64};
use super::super::writer::{Committed, Job};
use super::super::{NewOp, StoreError};
use super::{copy, flight};

type Arg<'a> = dyn ToSql + Sync + 'a;

/// Every account's row in id order before anything else (see
/// `writer.rs`); the lookup runs after it on the same connection, so it
/// sees every id committed before the locks were had.
pub(super) const LOCK: &str =
    "SELECT id, head, num FROM accounts WHERE id = ANY($1) ORDER BY id FOR NO KEY UPDATE";
const FIND: &str = "SELECT t.a, t.i, o.seq
     FROM unnest($1::text[], $2::text[]) AS t(a, i)
     JOIN accounts a ON a.id = t.a
     JOIN ops o ON o.account_num = a.num AND o.op_id = t.i";
const SET_HEADS: &str = "UPDATE accounts a SET head = t.h
     FROM unnest($1::text[], $2::bigint[]) AS t(id, h)
     WHERE a.id = t.id AND a.head <> t.h";
const COPY: &str = "COPY ops (account_num, seq, op_id, op_json) FROM STDIN (FORMAT binary)";
const INSERT: &str = "INSERT INTO ops (account_num, seq, op_id, op_json)
     SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[])";

/// At most this many new ops go in one `INSERT … FROM unnest(…)`,
/// pipelined with what follows; more go in a `COPY`, which is not.
const INSERT_AT_MOST: usize = 64;

/// One push of the group, borrowed from its job.
pub(super) struct Push<'a> {
    pub(super) account: &'a str,
    pub(super) ops: &'a [NewOp],
}

/// The pushes among `jobs`, in order.
pub(super) fn pushes(jobs: &[Job]) -> Vec<Push<'_>> {
    jobs.iter()
        .filter_map(|j| match j {
            Job::Push { account, ops, .. } => Some(Push { account, ops }),
            _ => None,
        })
        .collect()
}

/// Where a push's ops went: the account's head before and after it, and
/// each op's seq (`fresh` when stored by this push).
pub(super) struct Placed {
    pub(super) prev: u64,
    pub(super) head: u64,
    pub(super) seqs: Vec<(u64, bool)>,
}

/// What the group writes, once its seqs are handed out.
struct Plan<'a> {
    placed: Vec<Placed>,
    /// The new ops: the account's number, the seq, the op.
    rows: Vec<(i64, i64, &'a NewOp)>,
    /// Every account of the group and its head after it.
    heads: (Vec<&'a str>, Vec<i64>),
}

/// How a new op is written: in a `COPY` into `ops` (`copy.rs`), or as
/// the columns of one `INSERT`.
enum NewRows<'a> {
    Copy(copy::Rows),
    Insert([Vec<i64>; 2], [Vec<&'a str>; 2]),
}

impl<'a> NewRows<'a> {
    fn new(rows: &[(i64, i64, &'a NewOp)]) -> Self {
        if rows.len() > INSERT_AT_MOST {
            let mut c = copy::Rows::new(4);
            for (num, seq, new) in rows {
                c.row()
                    .int8(*num)
                    .int8(*seq)
                    .text(&new.op.id)
                    .text(&new.json);
            }
            return NewRows::Copy(c);
        }
        let nums = rows.iter().map(|r| r.0).collect();
        let seqs = rows.iter().map(|r| r.1).collect();
        let ids = rows.iter().map(|r| r.2.op.id.as_str()).collect();
        let jsons = rows.iter().map(|r| r.2.json.as_str()).collect();
        NewRows::Insert([nums, seqs], [ids, jsons])
    }
}

/// The accounts of `pushes`, sorted, once each; the ids to look up.
fn keys<'a>(pushes: &[Push<'a>], look_up: bool) -> (Vec<&'a str>, (Vec<&'a str>, Vec<&'a str>)) {
    let mut accounts: Vec<&str> = pushes.iter().map(|p| p.account).collect();
    accounts.sort_unstable();
    accounts.dedup();
    let find = if look_up {
        pushes
            .iter()
            .flat_map(|p| p.ops.iter().map(|o| (p.account, o.op.id.as_str())))
            .unzip()
    } else {
        (Vec::new(), Vec::new())
    };
    (accounts, find)
}

/// Hands out the seqs from the heads `locked` and the ids `found`; `None`
/// when an account is missing.
fn plan<'a>(
    pushes: &[Push<'a>],
    accounts: &[&'a str],
    locked: &[Row],
    found: &[Row],
) -> Option<Plan<'a>> {
    let mut heads: HashMap<&str, (u64, i64)> = locked
        .iter()
        .map(|r| (r.get::<_, &str>(0), (to_u64(r.get(1)), r.get(2))))
        .collect();
    let mut known: HashMap<(&str, &str), u64> = found
        .iter()
        .map(|r| ((r.get::<_, &str>(0), r.get::<_, &str>(1)), to_u64(r.get(2))))
        .collect();
    let mut rows = Vec::new();
    let mut placed = Vec::with_capacity(pushes.len());
    for p in pushes {
        let (head, num) = heads.get_mut(p.account)?;
        let prev = *head;
        let mut seqs = Vec::with_capacity(p.ops.len());
        for new in p.ops {
            if let Some(&seq) = known.get(&(p.account, new.op.id.as_str())) {
                seqs.push((seq, false));
                continue;
            }
            *head += 1;
            known.insert((p.account, &new.op.id), *head);
            rows.push((*num, to_i64(*head), new));
            seqs.push((*head, true));
        }
        placed.push(Placed {
            prev,
            head: *head,
            seqs,
        });
    }
    let heads = accounts
        .iter()
        .filter_map(|a| heads.get(a).map(|(h, _)| (*a, to_i64(*h))))
        .unzip();
    Some(Plan {
        placed,
        rows,
        heads,
    })
}

/// Writes `pushes` (in job order) inside the writer's transaction `tx`.
/// `Ok(None)`: an account is missing, which only the job-by-job path
/// reports (nothing was written). `Err`: a statement failed and `tx` is
/// spoilt.
///
/// `look_up`: false skips the lookup of the ids stored before this group
/// (about a seventh of the database's time per op). An id stored before
/// then makes the insert fail on its unique key, so nothing is stored
/// twice either way; the caller runs the group again with the lookup
/// (`writer.rs`).
pub(super) async fn write(
    tx: &Transaction<'_>,
    pushes: &[Push<'_>],
    look_up: bool,
) -> Result<Option<Vec<Placed>>, StoreError> {
    let (accounts, (find_accounts, find_ids)) = keys(pushes, look_up);
    let (lock, find) = tokio::try_join!(tx.prepare_cached(LOCK), tx.prepare_cached(FIND))?;
    let lock_args: [&Arg<'_>; 1] = [&accounts];
    let find_args: [&Arg<'_>; 2] = [&find_accounts, &find_ids];
    let (locked, found) = if look_up {
        tokio::try_join!(tx.query(&lock, &lock_args), tx.query(&find, &find_args))?
    } else {
        (tx.query(&lock, &lock_args).await?, Vec::new())
    };
    let Some(plan) = plan(pushes, &accounts, &locked, &found) else {
        return Ok(None);
    };
    if plan.rows.is_empty() {
        return Ok(Some(plan.placed));
    }
    let (insert, set_heads, copy) = tokio::try_join!(
        tx.prepare_cached(INSERT),
        tx.prepare_cached(SET_HEADS),
        tx.prepare_cached(COPY)
    )?;
    let heads_args: [&Arg<'_>; 2] = [&plan.heads.0, &plan.heads.1];
    match NewRows::new(&plan.rows) {
        // The COPY finished before the heads are set: pipelined, a COPY
        // that failed on a stored id was dropped mid-stream and the
        // connection closed under the group's retry (`ingest-pg2`).
        NewRows::Copy(rows) => {
            rows.send(tx, &copy).await?;
            tx.execute(&set_heads, &heads_args).await?;
        }
        NewRows::Insert([nums, seqs], [ids, jsons]) => {
            let args: [&Arg<'_>; 4] = [&nums, &seqs, &ids, &jsons];
            // In order: futures_util's join polls (and so sends) its
            // futures in the order given.
            let (a, b) = futures_util::future::join(
                tx.execute(&insert, &args),
                tx.execute(&set_heads, &heads_args),
            )
            .await;
            a?;
            b?;
        }
    }
    Ok(Some(plan.placed))
}

/// A group of pushes only, in a transaction of its own on `c`: `BEGIN`
/// pipelined with the locks (and the lookup), then for a small group its
/// `INSERT`, the heads' `UPDATE` and `COMMIT` pipelined. `Ok(Some)` gives
/// the commit's own result beside the placed pushes; `Ok(None)` and `Err`
/// as for [`write`], with nothing written and no transaction left open.
///
/// `COMMIT` goes only after `BEGIN` and the locks were answered, and
/// counts only when the statements before it in the same flight were
/// answered without an error: after a failed one PostgreSQL answers
/// `COMMIT` with a rollback, not an error.
pub(super) async fn write_and_commit(
    c: &Object,
    pushes: &[Push<'_>],
    look_up: bool,
) -> Result<Option<(Vec<Placed>, Result<(), String>)>, StoreError> {
    let r = if flight::fits(pushes, look_up, INSERT_AT_MOST) {
        flight::write(c, pushes).await
    } else {
        in_own_transaction(c, pushes, look_up).await
    };
    if !matches!(&r, Ok(Some((_, Ok(()))))) {
        // Whatever is left open ends (PostgreSQL only warns when nothing is).
        let _ = c.batch_execute("ROLLBACK").await;
    }
    r
}

async fn in_own_transaction(
    c: &Object,
    pushes: &[Push<'_>],
    look_up: bool,
) -> Result<Option<(Vec<Placed>, Result<(), String>)>, StoreError> {
    let client: &tokio_postgres::Client = c;
    let (accounts, (find_accounts, find_ids)) = keys(pushes, look_up);
    let (lock, find, insert, set_heads, copy) = tokio::try_join!(
        c.prepare_cached(LOCK),
        c.prepare_cached(FIND),
        c.prepare_cached(INSERT),
        c.prepare_cached(SET_HEADS),
        c.prepare_cached(COPY),
    )?;
    let lock_args: [&Arg<'_>; 1] = [&accounts];
    let find_args: [&Arg<'_>; 2] = [&find_accounts, &find_ids];
    // First flight, in this order (futures_util's joins poll, and so send,
    // their futures in the order given).
    let (begun, locked, found) = if look_up {
        futures_util::future::join3(
            client.batch_execute("BEGIN"),
            client.query(&lock, &lock_args),
            client.query(&find, &find_args),
        )
        .await
    } else {
        let (begun, locked) = futures_util::future::join(
            client.batch_execute("BEGIN"),
            client.query(&lock, &lock_args),
        )
        .await;
        (begun, locked, Ok(Vec::new()))
    };
    begun?;
    let (locked, found) = (locked?, found?);
    let Some(plan) = plan(pushes, &accounts, &locked, &found) else {
        return Ok(None);
    };
    let heads_args: [&Arg<'_>; 2] = [&plan.heads.0, &plan.heads.1];
    // Second flight: the writes and COMMIT.
    let (wrote, commit) = match (plan.rows.is_empty(), NewRows::new(&plan.rows)) {
        (true, _) => (Ok(0), client.batch_execute("COMMIT").await),
        (false, NewRows::Copy(rows)) => {
            rows.send(client, &copy).await?;
            futures_util::future::join(
                client.execute(&set_heads, &heads_args),
                client.batch_execute("COMMIT"),
            )
            .await
        }
        (false, NewRows::Insert([nums, seqs], [ids, jsons])) => {
            let args: [&Arg<'_>; 4] = [&nums, &seqs, &ids, &jsons];
            let (inserted, set, commit) = futures_util::future::join3(
                client.execute(&insert, &args),
                client.execute(&set_heads, &heads_args),
                client.batch_execute("COMMIT"),
            )
            .await;
            (inserted.and(set), commit)
        }
    };
    wrote?;
    Ok(Some((plan.placed, commit.map_err(|e| e.to_string()))))
}

/// A push's reply and event once `write` placed its ops.
pub(super) fn finish(
    account: String,
    device: String,
    ops: Vec<NewOp>,
    placed: Placed,
) -> (Vec<PushResult>, Option<Committed>) {
    let mut results = Vec::with_capacity(ops.len());
    let mut fresh = Vec::new();
    for (new, (seq, stored)) in ops.into_iter().zip(placed.seqs) {
        results.push(PushResult {
            id: new.op.id.clone(),
            seq,
        });
        if stored {
            fresh.push(SeqOp { seq, op: new.op });
        }
    }
    let event = (!fresh.is_empty()).then_some(Committed::Ops {
        account,
        from: device,
        ops: fresh,
        prev: placed.prev,
        head: placed.head,
    });
    (results, event)
}
