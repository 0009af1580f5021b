//! A group's pushes in four set-based statements, whatever the number of
//! pushes and accounts: lock the accounts (reading their heads) and look up
//! the known op ids, pipelined; then `COPY` the new ops with their ids in
//! (`copy.rs`) and set the heads. A few round trips where the
//! job-by-job path (`writer.rs`) takes five per push plus a savepoint's
//! two. No savepoints: if any statement fails, the caller rolls the whole
//! transaction back and runs the group again job by job, so a bad push
//! still fails alone.
//!
//! Seqs are handed out exactly as job by job: in job order, each account
//! from the head read under its row lock, an id already stored (or pushed
//! earlier in the same group) answered with its first seq and not stored
//! again.

use std::collections::HashMap;

use deadpool_postgres::Transaction;
use kairos_proto::{PushResult, SeqOp};
use tokio_postgres::types::ToSql;

use super::super::tx::{to_i64, to_u64};
use super::super::writer::Committed;
use super::super::{NewOp, StoreError};
use super::copy;

type Arg<'a> = dyn ToSql + Sync + 'a;

/// One push of the group, borrowed from its job.
pub(super) struct Push<'a> {
    pub(super) account: &'a str,
    pub(super) ops: &'a [NewOp],
}

/// Where a push's ops went: the account's head before and after it, and
/// each op's seq (`fresh` when stored by this push).
pub(super) struct Placed {
    prev: u64,
    head: u64,
    seqs: Vec<(u64, bool)>,
}

/// Every new op of the group, as rows for one `COPY` into `ops`
/// (`copy.rs`): the account's number, the seq, the op's id and its JSON in
/// one row (PostgreSQL migration 0011).
struct NewRows(copy::Rows);

impl NewRows {
    fn new() -> Self {
        Self(copy::Rows::new(4))
    }

    fn add(&mut self, num: i64, seq: u64, new: &NewOp) {
        self.0
            .row()
            .int8(num)
            .int8(to_i64(seq))
            .text(&new.op.id)
            .text(&new.json);
    }
}

/// Writes `pushes` (in job order) inside `tx`. `Ok(None)`: an account is
/// missing, which only the job-by-job path reports (nothing was written).
/// `Err`: a statement failed and `tx` is spoilt.
///
/// `look_up`: false skips the lookup of the ids stored before this group
/// (about a seventh of the database's time per op). An id stored before
/// then makes the `ops` COPY fail on its unique key, so nothing is
/// stored twice either way; the caller runs the group again with the
/// lookup (`writer.rs`).
pub(super) async fn write(
    tx: &Transaction<'_>,
    pushes: &[Push<'_>],
    look_up: bool,
) -> Result<Option<Vec<Placed>>, StoreError> {
    let mut accounts: Vec<&str> = pushes.iter().map(|p| p.account).collect();
    accounts.sort_unstable();
    accounts.dedup();
    let (find_accounts, find_ids): (Vec<&str>, Vec<&str>) = if look_up {
        pushes
            .iter()
            .flat_map(|p| p.ops.iter().map(|o| (p.account, o.op.id.as_str())))
            .unzip()
    } else {
        (Vec::new(), Vec::new())
    };
    // Every account's row in id order before anything else (see
    // `writer.rs`); the lookup runs after it on the same connection, so
    // it sees every id committed before the locks were had.
    let (lock, find) = tokio::try_join!(
        tx.prepare_cached(
            "SELECT id, head, num FROM accounts WHERE id = ANY($1) ORDER BY id FOR NO KEY UPDATE"
        ),
        tx.prepare_cached(
            "SELECT t.a, t.i, o.seq
             FROM unnest($1::text[], $2::text[]) AS t(a, i)
             JOIN accounts a ON a.id = t.a
             JOIN ops o ON o.account_num = a.num AND o.op_id = t.i"
        ),
    )?;
    let lock_args: [&Arg<'_>; 1] = [&accounts];
    let find_args: [&Arg<'_>; 2] = [&find_accounts, &find_ids];
    let (locked, found) = if look_up {
        tokio::try_join!(tx.query(&lock, &lock_args), tx.query(&find, &find_args))?
    } else {
        (tx.query(&lock, &lock_args).await?, Vec::new())
    };
    let mut heads: HashMap<&str, u64> = locked
        .iter()
        .map(|r| (r.get::<_, &str>(0), to_u64(r.get(1))))
        .collect();
    let nums: HashMap<&str, i64> = locked
        .iter()
        .map(|r| (r.get::<_, &str>(0), r.get(2)))
        .collect();
    let mut known: HashMap<(&str, &str), u64> = found
        .iter()
        .map(|r| ((r.get::<_, &str>(0), r.get::<_, &str>(1)), to_u64(r.get(2))))
        .collect();
    let mut rows = NewRows::new();
    let mut fresh = 0_usize;
    let mut placed = Vec::with_capacity(pushes.len());
    for p in pushes {
        let (Some(head), Some(&num)) = (heads.get_mut(p.account), nums.get(p.account)) else {
            return Ok(None);
        };
        let prev = *head;
        let mut seqs = Vec::with_capacity(p.ops.len());
        for new in p.ops {
            if let Some(&seq) = known.get(&(p.account, new.op.id.as_str())) {
                seqs.push((seq, false));
                continue;
            }
            *head += 1;
            known.insert((p.account, &new.op.id), *head);
            rows.add(num, *head, new);
            fresh += 1;
            seqs.push((*head, true));
        }
        placed.push(Placed {
            prev,
            head: *head,
            seqs,
        });
    }
    if fresh == 0 {
        return Ok(Some(placed));
    }
    let (moved, new_heads): (Vec<&str>, Vec<i64>) = accounts
        .iter()
        .filter_map(|a| heads.get(a).map(|h| (*a, to_i64(*h))))
        .unzip();
    let set_heads = tx
        .prepare_cached(
            "UPDATE accounts a SET head = t.h
             FROM unnest($1::text[], $2::bigint[]) AS t(id, h)
             WHERE a.id = t.id AND a.head <> t.h",
        )
        .await?;
    let heads_args: [&Arg<'_>; 2] = [&moved, &new_heads];
    // The COPY finished before the heads are set: pipelined, a COPY that
    // failed on a stored id was dropped mid-stream and the connection
    // closed under the group's retry (`ingest-pg2`).
    rows.0
        .send(
            tx,
            "COPY ops (account_num, seq, op_id, op_json) FROM STDIN (FORMAT binary)",
        )
        .await?;
    tx.execute(&set_heads, &heads_args).await?;
    Ok(Some(placed))
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
