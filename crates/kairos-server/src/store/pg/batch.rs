//! A group's pushes in five set-based statements, whatever the number of
//! pushes and accounts: lock the accounts (reading their heads) and look up
//! the known op ids, pipelined; then insert the new ids, insert the new ops
//! and set the heads, pipelined. Two round trips of statements where the
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

type Arg<'a> = dyn ToSql + Sync + 'a;

/// One push of the group, borrowed from its job.
pub(super) struct Push<'a> {
    pub(super) account: &'a str,
    pub(super) device: &'a str,
    pub(super) ops: &'a [NewOp],
}

/// Where a push's ops went: the account's head before and after it, and
/// each op's seq (`fresh` when stored by this push).
pub(super) struct Placed {
    prev: u64,
    head: u64,
    seqs: Vec<(u64, bool)>,
}

/// The columns of every new op of the group, for one `unnest` insert each.
#[derive(Default)]
struct Columns<'a> {
    account: Vec<&'a str>,
    seq: Vec<i64>,
    id: Vec<&'a str>,
    device: Vec<&'a str>,
    entity: Vec<&'a str>,
    hlc: Vec<&'a str>,
    kind: Vec<&'a str>,
    until: Vec<Option<i64>>,
    json: Vec<&'a str>,
}

impl<'a> Columns<'a> {
    fn add(&mut self, p: &Push<'a>, seq: u64, new: &'a NewOp) {
        self.account.push(p.account);
        self.seq.push(to_i64(seq));
        self.id.push(&new.op.id);
        self.device.push(p.device);
        self.entity.push(&new.entity);
        self.hlc.push(&new.hlc);
        self.kind.push(new.kind);
        self.until.push(new.until_ms);
        self.json.push(&new.json);
    }
}

/// Writes `pushes` (in job order) inside `tx`. `Ok(None)`: an account is
/// missing, which only the job-by-job path reports (nothing was written).
/// `Err`: a statement failed and `tx` is spoilt.
pub(super) async fn write(
    tx: &Transaction<'_>,
    pushes: &[Push<'_>],
) -> Result<Option<Vec<Placed>>, StoreError> {
    let mut accounts: Vec<&str> = pushes.iter().map(|p| p.account).collect();
    accounts.sort_unstable();
    accounts.dedup();
    let (find_accounts, find_ids): (Vec<&str>, Vec<&str>) = pushes
        .iter()
        .flat_map(|p| p.ops.iter().map(|o| (p.account, o.op.id.as_str())))
        .unzip();
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
    let (locked, found) =
        tokio::try_join!(tx.query(&lock, &lock_args), tx.query(&find, &find_args),)?;
    let mut heads: HashMap<&str, u64> = locked
        .iter()
        .map(|r| (r.get::<_, &str>(0), to_u64(r.get(1))))
        .collect();
    let mut known: HashMap<(&str, &str), u64> = found
        .iter()
        .map(|r| ((r.get::<_, &str>(0), r.get::<_, &str>(1)), to_u64(r.get(2))))
        .collect();
    let mut columns = Columns::default();
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
            columns.add(p, *head, new);
            seqs.push((*head, true));
        }
        placed.push(Placed {
            prev,
            head: *head,
            seqs,
        });
    }
    if columns.seq.is_empty() {
        return Ok(Some(placed));
    }
    let (moved, new_heads): (Vec<&str>, Vec<i64>) = accounts
        .iter()
        .filter_map(|a| heads.get(a).map(|h| (*a, to_i64(*h))))
        .unzip();
    let (add_ids, add_ops, set_heads) = tokio::try_join!(
        tx.prepare_cached(
            "INSERT INTO op_ids (account, op_id, seq)
             SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])"
        ),
        tx.prepare_cached(
            "INSERT INTO ops (account, seq, op_id, device, entity, hlc, kind, until_ms, op_json)
             SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[],
                                  $6::text[], $7::text[], $8::bigint[], $9::text[])"
        ),
        tx.prepare_cached(
            "UPDATE accounts a SET head = t.h
             FROM unnest($1::text[], $2::bigint[]) AS t(id, h)
             WHERE a.id = t.id AND a.head <> t.h"
        ),
    )?;
    let c = &columns;
    let ids_args: [&Arg<'_>; 3] = [&c.account, &c.id, &c.seq];
    let ops_args: [&Arg<'_>; 9] = [
        &c.account, &c.seq, &c.id, &c.device, &c.entity, &c.hlc, &c.kind, &c.until, &c.json,
    ];
    let heads_args: [&Arg<'_>; 2] = [&moved, &new_heads];
    tokio::try_join!(
        tx.execute(&add_ids, &ids_args),
        tx.execute(&add_ops, &ops_args),
        tx.execute(&set_heads, &heads_args),
    )?;
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
