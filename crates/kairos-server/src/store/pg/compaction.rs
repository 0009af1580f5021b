//! Which accounts a writer's group made due for compaction, without a
//! round trip per group: each account's compacted head is read once and
//! kept, and the group's new heads come with its commit.
//!
//! The kept value can only be behind the database's (compaction moves it
//! forward; another instance may have compacted since): then an account
//! looks due when it is not, and `tx::maybe_compact`, which checks again
//! under the account's lock, does nothing. The writer forgets an account
//! after compacting it, so the next check reads it again.

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
    pub(super) async fn due(&self, c: &Object, heads: &[(String, u64)], keep: u64) -> Vec<String> {
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
        let mut due: Vec<String> = heads
            .iter()
            .filter(|(a, head)| {
                known
                    .get(a)
                    .is_some_and(|&compacted| head.saturating_sub(compacted) >= keep)
            })
            .map(|(a, _)| a.clone())
            .collect();
        due.sort_unstable();
        due.dedup();
        due
    }

    /// After compacting `account`: read its compacted head again next time.
    pub(super) fn forget(&self, account: &str) {
        self.lock().remove(account);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, u64>> {
        // Only plain inserts and removes under it: a panic spoils nothing.
        self.compacted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
