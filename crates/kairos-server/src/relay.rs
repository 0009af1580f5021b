//! Other instances' commits, for the sessions on this one (PostgreSQL
//! only; a SQLite store has no other writer). Two paths into the hub:
//! the hints the other instances `NOTIFY` after each commit (fast), and a
//! check of the heads of the accounts connected here every
//! `Config::head_check` (the repair: a hint is not durable, a listener that
//! was reconnecting misses it). Both publish `Committed::Head`; a session
//! behind the head catches up from the store, so the cursor stays the
//! truth and neither path is needed for correctness, only for speed.
//!
//! Revocations take the same two paths: the hint, and (PostgreSQL) the
//! account's count of revocations read with its head — when it moves, the
//! account's sessions here are looked up and each revoked device gets
//! `Committed::Revoked`, so a session revoked on another instance closes
//! within a check even when the hint was lost.
//!
//! The same check, on either store, closes the sessions of an account that
//! no longer exists (`kairos-server account delete`, run by another
//! process): each of its connected devices gets `Committed::Revoked`.

use std::collections::HashMap;
use std::sync::Arc;

use crate::Ctx;
use crate::hub::Hub;
use crate::store::{Committed, Listener, Store};

/// The relay's tasks; stopped when dropped.
pub(crate) struct Relay {
    _listener: Option<Listener>,
    check: tokio::task::JoinHandle<()>,
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.check.abort();
    }
}

/// Starts the relay: the hints (shared store only) and the check.
pub(crate) fn start(ctx: &Ctx) -> Option<Relay> {
    let shared = ctx.store.is_shared();
    let hub = Arc::clone(&ctx.hub);
    let listener = ctx.store.listen(Arc::new(move |event| hub.publish(event)));
    let (store, hub) = (ctx.store.clone(), Arc::clone(&ctx.hub));
    let every = ctx.config.head_check;
    let check = tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // The head and revocation count last seen per account, so an idle
        // account costs its sessions nothing.
        let mut seen: HashMap<String, (u64, u64)> = HashMap::new();
        loop {
            tick.tick().await;
            let accounts = hub.accounts();
            if accounts.is_empty() {
                seen.clear();
                continue;
            }
            match store.heads(accounts.clone()).await {
                Ok(heads) => {
                    let mut next = HashMap::with_capacity(heads.len());
                    for h in heads {
                        let before = seen.get(&h.account).copied();
                        if shared && before.map(|b| b.0) != Some(h.head) {
                            hub.publish(Committed::Head {
                                account: h.account.clone(),
                                head: h.head,
                            });
                        }
                        let mut revocations = h.revocations;
                        if shared
                            && h.revocations > 0
                            && before.map(|b| b.1) != Some(h.revocations)
                            && !close_revoked(&store, &hub, &h.account).await
                        {
                            // Looked up again at the next check.
                            revocations = before.map_or(0, |b| b.1);
                        }
                        next.insert(h.account, (h.head, revocations));
                    }
                    for gone in accounts.iter().filter(|a| !next.contains_key(*a)) {
                        for device in hub.connected(gone) {
                            tracing::info!(account = %gone, %device, "account deleted: closing its session");
                            hub.publish(Committed::Revoked {
                                account: gone.clone(),
                                device,
                            });
                        }
                    }
                    seen = next;
                }
                Err(e) => tracing::warn!("head check failed: {e}"),
            }
        }
    });
    Some(Relay {
        _listener: listener,
        check,
    })
}

/// Closes the sessions here of `account`'s revoked devices; `false` when
/// the store could not say which they are.
async fn close_revoked(store: &Store, hub: &Hub, account: &str) -> bool {
    let connected = hub.connected(account);
    if connected.is_empty() {
        return true;
    }
    match store.revoked_among(connected).await {
        Ok(revoked) => {
            for device in revoked {
                tracing::info!(%account, %device, "revoked elsewhere: closing its session");
                hub.publish(Committed::Revoked {
                    account: account.to_owned(),
                    device,
                });
            }
            true
        }
        Err(e) => {
            tracing::warn!(%account, "revocation check failed: {e}");
            false
        }
    }
}
