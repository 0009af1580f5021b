//! Compaction off the writers' path: one task per instance, on a pooled
//! connection of its own, fed the accounts due by the writers (each
//! account queued at most once at a time).
//!
//! A compaction reads the account's head and then its live ops without
//! any lock, decides which of the ops up to `head - keep` no longer decide
//! the state (`kairos_proto::survivors`), and then, in one short
//! transaction, empties those rows and moves `floor` and `compacted_head`
//! forward (`GREATEST`). That is safe whatever committed in between:
//!
//! - `survivors` is monotone: the best op of each entity and kind in a
//!   prefix of the log either stays the best when ops are added or loses
//!   to a later one, and an op that is not the best never becomes it
//!   again. So an op found removable in the log up to `head` stays
//!   removable after any later push, and only ops up to `head` are looked
//!   at.
//! - Another compaction (this instance's earlier one, or another
//!   instance's) only empties ops that are not the best of their prefix;
//!   the bests are never emptied, so reading after it decides the same.
//! - Emptying a row twice changes nothing; `floor` and `compacted_head`
//!   only move forward.
//!
//! The transaction empties the rows before it takes the account's row
//! (the `UPDATE accounts`): a writer holds that row for the length of its
//! group, and the compaction waits for it there without holding the
//! writer up. A writer waits on a row being emptied only if it stores
//! that very op id again; if that meets the compaction's wait on the
//! account, PostgreSQL ends one of the two (a deadlock error): the
//! writer's group then goes again with the lookup, or the compaction is
//! dropped and runs again when due. Nothing is lost either way.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use deadpool_postgres::Pool;
use kairos_proto::{Effect, Hlc, Stored, survivors};
use tokio::sync::mpsc;

use super::super::StoreError;
use super::super::tx::{decisive, to_i64, to_u64};
use super::get;

/// The writers' handle on the instance's compaction task.
#[derive(Clone)]
pub(super) struct Compactor {
    queue: mpsc::UnboundedSender<String>,
    /// Accounts queued and not yet started.
    queued: Arc<Mutex<HashSet<String>>>,
}

impl Compactor {
    /// Starts the task; it ends when every handle is dropped.
    pub(super) fn start(pool: Pool, keep: u64) -> Self {
        let (queue, rx) = mpsc::unbounded_channel();
        let queued = Arc::new(Mutex::new(HashSet::new()));
        tokio::spawn(run(pool, keep, rx, Arc::clone(&queued)));
        Self { queue, queued }
    }

    /// Queues `account` for compaction unless it is queued already (a
    /// compaction running does not count: it may have read the log before
    /// the ops that made the account due again).
    pub(super) fn request(&self, account: &str) {
        if lock(&self.queued).insert(account.to_owned()) {
            let _ = self.queue.send(account.to_owned());
        }
    }
}

fn lock(m: &Mutex<HashSet<String>>) -> std::sync::MutexGuard<'_, HashSet<String>> {
    // Only plain inserts and removes under it: a panic spoils nothing.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

async fn run(
    pool: Pool,
    keep: u64,
    mut rx: mpsc::UnboundedReceiver<String>,
    queued: Arc<Mutex<HashSet<String>>>,
) {
    while let Some(account) = rx.recv().await {
        lock(&queued).remove(&account);
        if let Err(e) = compact(&pool, &account, keep).await {
            tracing::warn!(%account, "compaction failed: {e}");
        }
    }
}

/// Compacts `account` if `keep` ops or more arrived since its last
/// compaction (see the module's comment for why no lock is held while the
/// log is read).
pub(super) async fn compact(pool: &Pool, account: &str, keep: u64) -> Result<(), StoreError> {
    let mut c = get(pool).await?;
    let r = c
        .query_one(
            "SELECT head, floor, compacted_head, num FROM accounts WHERE id = $1",
            &[&account],
        )
        .await?;
    let (head, floor, compacted) = (to_u64(r.get(0)), to_u64(r.get(1)), to_u64(r.get(2)));
    let num: i64 = r.get(3);
    if head.saturating_sub(compacted) < keep.max(1) {
        return Ok(());
    }
    let cutoff = head.saturating_sub(keep);
    // Every op up to `head` is committed (its head moved in the same
    // transaction); the entity, hlc and effect come from the op itself
    // (the row keeps only its JSON, see migration 0008).
    let mut rows: Vec<(u64, String, Hlc, Effect)> = Vec::new();
    for r in c
        .query(
            "SELECT seq, op_json FROM ops WHERE account_num = $1 AND seq <= $2 AND op_json IS NOT NULL ORDER BY seq",
            &[&num, &to_i64(head)],
        )
        .await?
    {
        let seq = to_u64(r.get(0));
        let (entity, hlc, effect) = decisive(seq, r.get(1))?;
        rows.push((seq, entity, hlc, effect));
    }
    let keep_set = survivors(rows.iter().map(|(seq, entity, hlc, effect)| Stored {
        seq: *seq,
        entity,
        hlc,
        effect: *effect,
    }));
    let gone: Vec<i64> = rows
        .iter()
        .filter(|(s, ..)| *s <= cutoff && !keep_set.contains(s))
        .map(|(s, ..)| to_i64(*s))
        .collect();
    drop(rows);
    let new_floor = gone
        .iter()
        .copied()
        .map(to_u64)
        .max()
        .unwrap_or(0)
        .max(floor);
    // The rows stay, emptied: their ids stay known, so a device that sends
    // one again gets its first seq and it is not stored again (migration
    // 0011; every reader skips the empty rows).
    let tx = c.transaction().await?;
    tx.execute(
        "UPDATE ops SET op_json = NULL WHERE account_num = $1 AND seq = ANY($2) AND op_json IS NOT NULL",
        &[&num, &gone],
    )
    .await?;
    tx.execute(
        "UPDATE accounts SET floor = GREATEST(floor, $1), compacted_head = GREATEST(compacted_head, $2) WHERE id = $3",
        &[&to_i64(new_floor), &to_i64(head), &account],
    )
    .await?;
    tx.commit().await?;
    tracing::info!(%account, removed = gone.len(), floor = new_floor, head, "compacted");
    Ok(())
}
