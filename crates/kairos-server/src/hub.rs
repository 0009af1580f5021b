//! Who is connected, and the live fan-out: one broadcast channel per
//! account with a connected device, fed by the store's writer thread after
//! each commit, in commit order. A session that falls behind the channel
//! is told so (`Lagged`) and catches up from the store: the cursor is the
//! truth, the channel only a fast path.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use tokio::sync::broadcast;

use crate::rate::Bucket;
use crate::store::Committed;

/// Events per account the channel holds for a slow session before it lags
/// (and catches up from the store, which costs only time). Small, because
/// tokio allocates every slot when the channel is made: at 1,024 slots an
/// account with a connected device cost 33 KB of idle memory (sync-bench,
/// docs/benchmarks.md).
const CAPACITY: usize = 16;

/// The server's live state.
pub struct Hub {
    accounts: Mutex<HashMap<String, Account>>,
    /// Each device's op budget per second.
    ops_per_sec: u32,
    /// Devices whose first session opened or last closed since
    /// `presence.rs` last asked (only once it asked: on SQLite, never).
    /// Taken after `accounts`, never before.
    changes: Mutex<Changes>,
}

/// The most changes kept between two presence rounds; past it they are
/// dropped and the next round writes every session again.
const MAX_CHANGES: usize = 100_000;

#[derive(Default)]
struct Changes {
    tracking: bool,
    overflowed: bool,
    /// (account, device, connected), in order.
    events: Vec<(String, String, bool)>,
}

impl Changes {
    fn record(&mut self, account: &str, device: &str, connected: bool) {
        if !self.tracking || self.overflowed {
            return;
        }
        if self.events.len() >= MAX_CHANGES {
            self.overflowed = true;
            self.events = Vec::new();
            return;
        }
        self.events
            .push((account.to_owned(), device.to_owned(), connected));
    }
}

/// A committed event and when it was published (the start of the
/// fan-out latency, `/metrics`).
pub struct Event {
    /// What was committed.
    pub committed: Committed,
    /// When the hub got it.
    pub at: Instant,
}

struct Account {
    tx: broadcast::Sender<Arc<Event>>,
    /// The highest head this instance published ops up to: a hint that
    /// the log reached a head no higher (this instance's own `NOTIFY` on
    /// PostgreSQL, one per commit) tells the sessions nothing, and is not
    /// sent to them (two wake-ups a push at 10,000 pushes a second).
    head: u64,
    /// The devices with an open session (one map, not one per field: an
    /// idle account's memory, docs/benchmarks.md).
    devices: HashMap<String, Device>,
}

struct Device {
    /// Its open sessions.
    sessions: usize,
    /// Its rate budget, shared by its sessions.
    bucket: Arc<Mutex<Bucket>>,
}

/// A session's place in the hub; leaving is dropping it.
pub struct Member {
    hub: Arc<Hub>,
    account: String,
    device: String,
    /// Committed events of the account.
    pub rx: broadcast::Receiver<Arc<Event>>,
    /// The device's rate budget.
    pub bucket: Arc<Mutex<Bucket>>,
}

impl Hub {
    /// A hub whose devices may push `ops_per_sec` ops a second.
    #[must_use]
    pub fn new(ops_per_sec: u32) -> Self {
        Self {
            accounts: Mutex::default(),
            ops_per_sec,
            changes: Mutex::default(),
        }
    }

    fn changes(&self) -> MutexGuard<'_, Changes> {
        // Plain pushes and swaps under it: a panic spoils nothing.
        self.changes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Account>> {
        // A panic while holding this lock leaves the maps consistent (each
        // update is one insert or remove), so a poisoned lock is still usable.
        self.accounts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Registers a session of `device`.
    pub fn join(self: &Arc<Self>, account: &str, device: &str) -> Member {
        let mut accounts = self.lock();
        let a = accounts
            .entry(account.to_owned())
            .or_insert_with(|| Account {
                tx: broadcast::channel(CAPACITY).0,
                head: 0,
                devices: HashMap::new(),
            });
        let rate = self.ops_per_sec;
        let d = a
            .devices
            .entry(device.to_owned())
            .or_insert_with(|| Device {
                sessions: 0,
                bucket: Arc::new(Mutex::new(Bucket::new(rate))),
            });
        d.sessions += 1;
        if d.sessions == 1 {
            self.changes().record(account, device, true);
        }
        let bucket = Arc::clone(&d.bucket);
        Member {
            hub: Arc::clone(self),
            account: account.to_owned(),
            device: device.to_owned(),
            rx: a.tx.subscribe(),
            bucket,
        }
    }

    /// Sends a committed event to the account's sessions, if any.
    pub fn publish(&self, event: Committed) {
        let account = match &event {
            Committed::Ops { account, .. }
            | Committed::Head { account, .. }
            | Committed::Revoked { account, .. } => account,
        };
        if let Some(a) = self.lock().get_mut(account) {
            match &event {
                Committed::Ops { head, .. } => a.head = a.head.max(*head),
                Committed::Head { head, .. } if *head <= a.head => return,
                _ => {}
            }
            // No receiver left is fine: nobody is connected.
            let _ = a.tx.send(Arc::new(Event {
                committed: event,
                at: Instant::now(),
            }));
        }
    }

    /// The accounts with an open session here.
    pub fn accounts(&self) -> Vec<String> {
        self.lock().keys().cloned().collect()
    }

    /// How many devices have an open session (`/metrics`).
    pub fn device_count(&self) -> usize {
        self.lock().values().map(|a| a.devices.len()).sum()
    }

    /// Every (account, device) with an open session here, and from now on
    /// the changes to it for [`Self::presence_changes`] (`presence.rs`).
    pub fn presence_snapshot(&self) -> Vec<(String, String)> {
        let accounts = self.lock();
        let mut changes = self.changes();
        *changes = Changes {
            tracking: true,
            ..Changes::default()
        };
        accounts
            .iter()
            .flat_map(|(a, acc)| acc.devices.keys().map(|d| (a.clone(), d.clone())))
            .collect()
    }

    /// The changes since the last snapshot or call, in order: (account,
    /// device, connected). `None` when there were too many to keep (then
    /// take a snapshot).
    pub fn presence_changes(&self) -> Option<Vec<(String, String, bool)>> {
        let mut changes = self.changes();
        if changes.overflowed {
            return None;
        }
        Some(std::mem::take(&mut changes.events))
    }

    /// The account's devices with an open session.
    pub fn connected(&self, account: &str) -> Vec<String> {
        self.lock()
            .get(account)
            .map(|a| a.devices.keys().cloned().collect())
            .unwrap_or_default()
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        let mut accounts = self.hub.lock();
        let Some(a) = accounts.get_mut(&self.account) else {
            return;
        };
        if let Some(d) = a.devices.get_mut(&self.device) {
            d.sessions -= 1;
            if d.sessions == 0 {
                a.devices.remove(&self.device);
                self.hub
                    .changes()
                    .record(&self.account, &self.device, false);
            }
        }
        if a.devices.is_empty() {
            accounts.remove(&self.account);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(account: &str, head: u64) -> Committed {
        Committed::Head {
            account: account.into(),
            head,
        }
    }

    /// This instance's own hint (its `NOTIFY` after each commit on
    /// PostgreSQL) reaches its hub after the ops it announces: the
    /// sessions are not woken for it; another instance's ops are.
    #[test]
    fn a_hint_for_ops_already_published_is_not_sent_to_the_sessions() {
        let hub = Arc::new(Hub::new(100));
        let mut m = hub.join("acct", "dev");
        hub.publish(Committed::Ops {
            account: "acct".into(),
            from: "other".into(),
            ops: Vec::new(),
            prev: 4,
            head: 5,
        });
        hub.publish(head("acct", 5));
        hub.publish(head("acct", 4));
        hub.publish(head("acct", 6));
        let heads: Vec<u64> = std::iter::from_fn(|| m.rx.try_recv().ok())
            .map(|e| match e.committed {
                Committed::Ops { head, .. } | Committed::Head { head, .. } => head,
                Committed::Revoked { .. } => 0,
            })
            .collect();
        assert_eq!(heads, [5, 6]);
    }
}
