//! This instance's sessions, for the other instances' device lists
//! (PostgreSQL only: on SQLite one process holds every session). Every
//! [`EVERY`] the task writes which devices opened or closed their last
//! session here since its last round (the hub records those changes, so a
//! round costs what changed, not what is connected: 10,000 idle sessions
//! cost nothing after the first round), and keeps its own row alive for
//! [`ALIVE_FOR`]: a device list answered anywhere shows a device connected
//! while an alive instance holds it, within a round of a change. A killed
//! instance's devices stop counting when its row expires.

use std::collections::HashMap;
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
    // Whether the next round writes every session (the first one, and
    // after anything that may have lost a change).
    let mut all = true;
    loop {
        tick.tick().await;
        let (opened, closed) = if all {
            (hub.presence_snapshot(), Vec::new())
        } else if let Some(changes) = hub.presence_changes() {
            net(changes)
        } else {
            all = true;
            (hub.presence_snapshot(), Vec::new())
        };
        let now_ms = Utc::now().timestamp_millis();
        let alive_ms = i64::try_from(ALIVE_FOR.as_millis()).unwrap_or(i64::MAX);
        let round = PresenceRound {
            instance: &instance,
            now_ms,
            alive_until_ms: now_ms.saturating_add(alive_ms),
            all,
            opened: &opened,
            closed: &closed,
        };
        all = match store.presence(&round).await {
            // Unless the row was missing: the rows may be gone too (a
            // crash empties unlogged tables).
            Ok(found) => !found,
            Err(e) => {
                tracing::warn!("presence not written: {e}");
                true
            }
        };
    }
}

/// The round's changes, netted: each device's last change wins.
fn net(changes: Vec<(String, String, bool)>) -> (Vec<(String, String)>, Vec<String>) {
    let mut last: HashMap<String, (String, bool)> = HashMap::new();
    for (account, device, connected) in changes {
        last.insert(device, (account, connected));
    }
    let (mut opened, mut closed) = (Vec::new(), Vec::new());
    for (device, (account, connected)) in last {
        if connected {
            opened.push((account, device));
        } else {
            closed.push(device);
        }
    }
    (opened, closed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_devices_last_change_wins() {
        let ev = |a: &str, d: &str, c| (a.to_owned(), d.to_owned(), c);
        let (mut opened, mut closed) = net(vec![
            ev("x", "d1", true),
            ev("x", "d1", false),
            ev("x", "d2", false),
            ev("x", "d2", true),
            ev("y", "d3", true),
        ]);
        opened.sort();
        closed.sort();
        assert_eq!(
            opened,
            [("x".into(), "d2".into()), ("y".into(), "d3".into())]
        );
        assert_eq!(closed, ["d1"]);
    }
}
