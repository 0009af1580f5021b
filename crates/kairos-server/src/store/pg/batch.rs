//! A group's pushes in five set-based statements, whatever the number of
//! pushes and accounts: lock the accounts (reading their heads) and look up
//! the known op ids, pipelined; then `COPY` the new ids and the new ops in
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

/// Every new op of the group, as rows for one `COPY` into `op_ids` and
/// one into `ops` (`copy.rs`).
struct NewRows {
    ids: copy::Rows,
    ops: copy::Rows,
}

impl NewRows {
    fn new() -> Self {
        Self {
            ids: copy::Rows::new(3),
            ops: copy::Rows::new(3),
        }
    }

    fn add(&mut self, p: &Push<'_>, seq: u64, new: &NewOp) {
        let seq = to_i64(seq);
        self.ids.row().text(p.account).text(&new.op.id).int8(seq);
        self.ops.row().text(p.account).int8(seq).text(&new.json);
    }
}

/// Writes `pushes` (in job order) inside `tx`. `Ok(None)`: an account is
/// missing, which only the job-by-job path reports (nothing was written).
/// `Err`: a statement failed and `tx` is spoilt.
///
/// `look_up`: false skips the lookup of the ids stored before this group
/// (about a seventh of the database's time per op). An id stored before
/// then makes the `op_ids` COPY fail on its primary key, so nothing is
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
            "SELECT id, head FROM accounts WHERE id = ANY($1) ORDER BY id FOR NO KEY UPDATE"
        ),
        tx.prepare_cached(
            "SELECT o.account, o.op_id, o.seq
             FROM unnest($1::text[], $2::text[]) AS t(a, i)
             JOIN op_ids o ON o.account = t.a AND o.op_id = t.i"
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
    let mut known: HashMap<(&str, &str), u64> = found
        .iter()
        .map(|r| ((r.get::<_, &str>(0), r.get::<_, &str>(1)), to_u64(r.get(2))))
        .collect();
    let mut rows = NewRows::new();
    let mut fresh = 0_usize;
    let mut placed = Vec::with_capacity(pushes.len());
    for p in pushes {
        let Some(head) = heads.get_mut(p.account) else {
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
            rows.add(p, *head, new);
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
    // One after the other, each COPY finished before the next starts.
    // Pipelined (`try_join!`), a failing `op_ids` COPY (an id stored
    // before) dropped the `ops` COPY mid-stream, and the connection then
    // closed under the group's retry: 2 of 8 runs of the PostgreSQL tests
    // that push a known id, 0 of 16 since. A few more round trips per
    // group of thousands of ops.
    let NewRows { ids, ops } = rows;
    ids.send(
        tx,
        "COPY op_ids (account, op_id, seq) FROM STDIN (FORMAT binary)",
    )
    .await?;
    ops.send(
        tx,
        "COPY ops (account, seq, op_json) FROM STDIN (FORMAT binary)",
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
