//! A small group of new ops in one round trip: `BEGIN`, the account locks,
//! one statement that inserts the ops and moves the heads, and `COMMIT`,
//! all pipelined (`batch.rs` takes two: the seqs come from the heads the
//! locks read). Here PostgreSQL hands the seqs out itself, each op at its
//! account's head plus its place among the group's new ops of that
//! account; the heads the locks read give the same seqs to the replies.
//!
//! Only without the lookup of stored ids (an id stored before makes the
//! insert fail on its unique key; the caller goes again with the lookup,
//! in `batch.rs`) and only when every push brings ops (a missing account
//! then has an op whose account number is NULL, which `ops` refuses, and
//! the whole group fails; nothing commits).
//!
//! Why this is safe: `COMMIT` counts only when `BEGIN`, the locks and the
//! write before it were answered without an error (after a failed one
//! PostgreSQL answers `COMMIT` with a rollback). Under the locks the head
//! the write reads is the one the locks read. And the write is one
//! statement, so even outside a transaction (a `BEGIN` that failed) its
//! ops and heads go in together or not at all, and the keys on
//! (account, seq) and (account, op id) refuse a seq or an id twice.

use std::collections::HashMap;

use deadpool_postgres::Object;
use tokio_postgres::types::ToSql;

use super::super::StoreError;
use super::super::tx::{to_i64, to_u64};
use super::batch::{LOCK, Placed, Push};

type Arg<'a> = dyn ToSql + Sync + 'a;

/// The ops at their account's head plus their place, and the heads moved
/// on: one statement (its CTE and its main part see the same head).
const WRITE: &str = "WITH ins AS (
         INSERT INTO ops (account_num, seq, op_id, op_json)
         SELECT a.num, a.head + t.k, t.i, t.j
         FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[]) AS t(a, k, i, j)
         LEFT JOIN accounts a ON a.id = t.a
     )
     UPDATE accounts a SET head = a.head + t.n
     FROM unnest($5::text[], $6::bigint[]) AS t(id, n)
     WHERE a.id = t.id";

/// Whether [`write`] takes the group.
pub(super) fn fits(pushes: &[Push<'_>], look_up: bool, at_most: usize) -> bool {
    !look_up
        && pushes.iter().all(|p| !p.ops.is_empty())
        && pushes.iter().map(|p| p.ops.len()).sum::<usize>() <= at_most
}

/// A push's place among the group's new ops of its account: before it,
/// after it, and each op's (an op pushed earlier in the group: that one's).
struct Offsets {
    before: u64,
    after: u64,
    ops: Vec<(u64, bool)>,
}

/// `pushes` (every one with ops) in one round trip on `c`, in a
/// transaction of its own. `Ok(None)`: the heads read miss an account
/// (the write failed, or went in for an account made meanwhile: the
/// caller goes again with the lookup, which answers stored ids with their
/// seqs). `Err`: a statement failed; nothing committed.
pub(super) async fn write(
    c: &Object,
    pushes: &[Push<'_>],
) -> Result<Option<(Vec<Placed>, Result<(), String>)>, StoreError> {
    let client: &tokio_postgres::Client = c;
    let mut counts: HashMap<&str, u64> = HashMap::new();
    let mut seen: HashMap<(&str, &str), u64> = HashMap::new();
    let (mut col_a, mut col_k, mut col_i, mut col_j) = (vec![], vec![], vec![], vec![]);
    let mut offsets = Vec::with_capacity(pushes.len());
    for p in pushes {
        let n = counts.entry(p.account).or_insert(0);
        let before = *n;
        let mut ops = Vec::with_capacity(p.ops.len());
        for new in p.ops {
            if let Some(&k) = seen.get(&(p.account, new.op.id.as_str())) {
                ops.push((k, false));
                continue;
            }
            *n += 1;
            seen.insert((p.account, &new.op.id), *n);
            col_a.push(p.account);
            col_k.push(to_i64(*n));
            col_i.push(new.op.id.as_str());
            col_j.push(new.json.as_str());
            ops.push((*n, true));
        }
        offsets.push(Offsets {
            before,
            after: *n,
            ops,
        });
    }
    let mut accounts: Vec<&str> = counts.keys().copied().collect();
    accounts.sort_unstable();
    let moves: Vec<i64> = accounts.iter().map(|a| to_i64(counts[a])).collect();
    let (lock, write) = tokio::try_join!(c.prepare_cached(LOCK), c.prepare_cached(WRITE))?;
    let lock_args: [&Arg<'_>; 1] = [&accounts];
    let write_args: [&Arg<'_>; 6] = [&col_a, &col_k, &col_i, &col_j, &accounts, &moves];
    // One flight, in this order: futures_util's joins poll (and so send)
    // their futures in the order given.
    let ((begun, locked), (wrote, commit)) = futures_util::future::join(
        futures_util::future::join(
            client.batch_execute("BEGIN"),
            client.query(&lock, &lock_args),
        ),
        futures_util::future::join(
            client.execute(&write, &write_args),
            client.batch_execute("COMMIT"),
        ),
    )
    .await;
    begun?;
    let locked = locked?;
    wrote?;
    let heads: HashMap<&str, u64> = locked
        .iter()
        .map(|r| (r.get::<_, &str>(0), to_u64(r.get(1))))
        .collect();
    let mut placed = Vec::with_capacity(pushes.len());
    for (p, o) in pushes.iter().zip(offsets) {
        let Some(&head) = heads.get(p.account) else {
            return Ok(None);
        };
        placed.push(Placed {
            prev: head + o.before,
            head: head + o.after,
            seqs: o.ops.into_iter().map(|(k, f)| (head + k, f)).collect(),
        });
    }
    Ok(Some((placed, commit.map_err(|e| e.to_string()))))
}
