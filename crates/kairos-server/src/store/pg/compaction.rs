//! Which accounts a writer's group made due for compaction, without a
//! round trip per group: each account's compacted head is read once and
//! kept, and the group's new heads come with its commit.
//!
//! The kept value can only be behind the database's (compaction moves it
//! forward; another instance may have compacted since), or, after a
//! compaction was queued, the head it was queued at: then an account looks
//! due when it is not, and `compactor::compact`, which checks again, does
//! nothing; or a compaction that failed is queued again only `keep` ops
//! later.

use std::collections::HashMap;
use std::sync::Mutex;

use deadpool_postgres::Object;

use super::super::tx::to_u64;

/// Compacted heads as last read, by account.
#[derive(Default)]
pub(super) struct Compaction {
    /// Only the writer's task uses it, never across an `.await`.
    compacted: Mutex<HashMap<String, u64>>,
}

impl Compaction {
    /// The accounts among `heads` (account, its head after the group) with
    /// `keep` ops or more since their last compaction. Reads the compacted
    /// heads of the accounts not seen before (one statement); on an error,
    /// none is due (the next group checks again).
    pub(super) async fn due(
        &self,
        c: &Object,
        heads: &[(String, u64)],
        keep: u64,
    ) -> Vec<(String, u64)> {
        let keep = keep.max(1);
        let unknown: Vec<&str> = {
            let known = self.lock();
            heads
                .iter()
                .filter(|(a, _)| !known.contains_key(a))
                .map(|(a, _)| a.as_str())
                .collect()
        };
        if !unknown.is_empty() {
            match c
                .query(
                    "SELECT id, compacted_head FROM accounts WHERE id = ANY($1)",
                    &[&unknown],
                )
                .await
            {
                Ok(rows) => {
                    let mut known = self.lock();
                    for r in rows {
                        known.insert(r.get(0), to_u64(r.get(1)));
                    }
                }
                Err(e) => {
                    tracing::warn!("compaction check failed: {e}");
                    return Vec::new();
                }
            }
        }
        let known = self.lock();
        let mut due: Vec<(String, u64)> = heads
            .iter()
            .filter(|(a, head)| {
                known
                    .get(a)
                    .is_some_and(|&compacted| head.saturating_sub(compacted) >= keep)
            })
            .cloned()
            .collect();
        // The highest head of each account (a group may push to it twice).
        due.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        due.dedup_by(|a, b| a.0 == b.0);
        due
    }

    /// After queueing `account`'s compaction at `head`: the next is due
    /// `keep` ops later (not at every group while this one waits or runs).
    pub(super) fn queued(&self, account: &str, head: u64) {
        self.lock().insert(account.to_owned(), head);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, u64>> {
        // Only plain inserts and removes under it: a panic spoils nothing.
        self.compacted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
