//! This instance's sessions, for the other instances' device lists
//! (PostgreSQL only: on SQLite one process holds every session). Every
//! [`EVERY`] the task writes which devices opened or closed their last
//! session here since its last round, and keeps its own row alive for
//! [`ALIVE_FOR`]: a device list answered anywhere shows a device connected
//! while an alive instance holds it, within a round of a change. A killed
//! instance's devices stop counting when its row expires.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;

use crate::Ctx;
use crate::hub::Hub;
use crate::store::{PresenceRound, Store};

/// Time between rounds.
pub const EVERY: Duration = Duration::from_secs(2);

/// How long an instance counts as alive after a round: a few rounds, so
/// one slow round does not make its devices blink.
const ALIVE_FOR: Duration = Duration::from_secs(10);

/// The task; stops when dropped.
pub(crate) struct Presence(tokio::task::JoinHandle<()>);

impl Drop for Presence {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Starts the task on a shared store; `None` on SQLite or when no id
/// could be drawn (then the others see this instance's devices as not
/// connected, as before: nothing else depends on it).
pub(crate) fn start(ctx: &Ctx) -> Option<Presence> {
    if !ctx.store.is_shared() {
        return None;
    }
    let instance = match crate::secrets::new_instance_id() {
        Ok(id) => id,
        Err(e) => {
            tracing::warn!("no instance id, presence not shared: {e}");
            return None;
        }
    };
    let (store, hub) = (ctx.store.clone(), Arc::clone(&ctx.hub));
    Some(Presence(tokio::spawn(run(store, hub, instance))))
}

async fn run(store: Store, hub: Arc<Hub>, instance: String) {
    let mut tick = tokio::time::interval(EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // What the database holds for this instance, as far as it knows.
    let mut written: BTreeSet<(String, String)> = BTreeSet::new();
    loop {
        tick.tick().await;
        let now = hub.all_connected();
        let opened: Vec<(String, String)> = now.difference(&written).cloned().collect();
        let closed: Vec<String> = written.difference(&now).map(|(_, d)| d.clone()).collect();
        let now_ms = Utc::now().timestamp_millis();
        let alive_ms = i64::try_from(ALIVE_FOR.as_millis()).unwrap_or(i64::MAX);
        let round = PresenceRound {
            instance: &instance,
            now_ms,
            alive_until_ms: now_ms.saturating_add(alive_ms),
            opened: &opened,
            closed: &closed,
        };
        match store.presence(&round).await {
            Ok(true) => written = now,
            // The row was missing: the rows may be gone too (a crash
            // empties unlogged tables). All of them again next round.
            Ok(false) => written.clear(),
            // Written in part, perhaps: the same difference next round
            // (both statements are idempotent).
            Err(e) => tracing::warn!("presence not written: {e}"),
        }
    }
}
