//! The daemon's live connection: a session kept open on its own thread,
//! applying ops the moment they arrive and pushing local changes as soon
//! as they are made; on any failure it reconnects with exponential backoff
//! and jitter (0.5 s doubling to 30 s, ±25 %), catching up from the cursor.
//! Its [`LinkState`] is published on a `watch` as it changes.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use kairos_engine::sync::apply::Applied;
use kairos_engine::sync::{self as esync, keys};
use kairos_proto::ServerMsg;
use kairos_store::Store;
use tokio::sync::{Notify, watch};

use crate::SyncError;
use crate::conn::{self, Tls};
use crate::session::{Applier, Session, note_error};
use crate::state::{LinkState, Publisher};

/// Longest wait between reconnection attempts.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// First wait after a failure.
pub const FIRST_BACKOFF: Duration = Duration::from_millis(500);
/// The outbox is looked at this often even when nobody says it changed.
pub const OUTBOX_RECHECK: Duration = Duration::from_secs(30);
/// An open session from which nothing at all arrived this long is taken
/// for dead: the server pings every 30 s (`docs/sync-protocol.md`), so a
/// network that vanished without a close is noticed within this.
pub const SILENCE: Duration = Duration::from_secs(45);

/// What the live client needs.
pub struct Live {
    /// The database (the client opens its own connection).
    pub db: PathBuf,
    /// How to apply ops.
    pub applier: Applier,
    /// TLS trust.
    pub tls: Tls,
    /// Notified when a local change was recorded (push now).
    pub outbox: Arc<Notify>,
    /// Told after each applied batch (withdrawals, counts).
    pub on_applied: Box<dyn FnMut(Applied) + Send>,
    /// Becomes true to stop.
    pub stop: watch::Receiver<bool>,
    /// Where the connection's state is published (see [`LinkState`]).
    pub state: watch::Sender<LinkState>,
}

/// Runs [`run`] on a thread of its own with its own runtime (the store is
/// blocking). The thread ends when `stop` turns true.
///
/// # Errors
/// The thread cannot be started.
pub fn spawn(live: Live) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("kairos-sync".into())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                eprintln!("kairos: sync: cannot start its runtime");
                return;
            };
            rt.block_on(run(live));
        })
}

/// A small xorshift for jitter (no need for a cryptographic generator).
fn jitter(seed: &mut u64) -> f64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    #[allow(clippy::cast_precision_loss)]
    let unit = (*seed % 10_000) as f64 / 10_000.0;
    0.75 + unit / 2.0
}

/// Keeps a session open until `stop`, reconnecting after failures.
pub async fn run(live: Live) {
    let state = Publisher(live.state.clone());
    run_published(live, &state).await;
    state.stopped();
}

async fn run_published(mut live: Live, state: &Publisher) {
    let mut store = match Store::open(&live.db) {
        Ok(s) => s,
        Err(e) => {
            let e = SyncError::from(e);
            eprintln!("kairos: sync: {e}");
            state.failed(&e, live.applier.clock.now(), None);
            return;
        }
    };
    state.load(&store);
    let mut seed = u64::from(std::process::id())
        ^ u64::try_from(live.applier.clock.now().timestamp_micros()).unwrap_or(1)
        | 1;
    let mut backoff = FIRST_BACKOFF;
    while !*live.stop.borrow() {
        state.connecting();
        let outcome = session(&mut store, &mut live, state).await;
        let _ = store.meta_set(keys::CONNECTED, "0");
        match outcome {
            Ok(()) => return,
            Err(e) => {
                let now = live.applier.clock.now();
                note_error(&mut store, &e, now);
                state.failed(&e, now, Some(&store));
                eprintln!("kairos: sync: {e}");
                if matches!(e, SyncError::NotPaired) {
                    return;
                }
                if !e.is_retryable() {
                    // Refused (revoked, wrong token): trying every 30 s is
                    // harmless and picks up a re-join done meanwhile.
                    backoff = MAX_BACKOFF;
                }
            }
        }
        let wait = backoff.mul_f64(jitter(&mut seed));
        backoff = (backoff * 2).min(MAX_BACKOFF);
        let until = tokio::time::Instant::now() + wait;
        loop {
            tokio::select! {
                () = tokio::time::sleep_until(until) => break,
                _ = live.stop.changed() => return,
                // A change made while offline: it waits in the outbox, and
                // the count shown says so (the next session pushes it).
                () = live.outbox.notified() => state.recount(&store),
            }
        }
    }
}

/// One session: catch up, push, then live until it breaks or `stop`.
async fn session(store: &mut Store, live: &mut Live, state: &Publisher) -> Result<(), SyncError> {
    let id = esync::identity(store)?.ok_or(SyncError::NotPaired)?;
    let applier = live.applier.clone();
    // `stop` ends the opening at any await too: a server that never
    // answers would otherwise hold the thread for the connection's and the
    // welcome's timeouts. Ending it there is safe: each batch is applied in
    // one transaction, and an op whose push was not confirmed stays in the
    // outbox.
    let mut stop = live.stop.clone();
    let opening = async {
        let mut s = Session::open(store, &id, &live.tls).await?;
        let on_applied = &mut live.on_applied;
        s.catch_up(store, &applier, &mut |a| on_applied(a)).await?;
        s.push_outbox(store, &applier, &mut |a| on_applied(a), &mut 0)
            .await?;
        Ok::<_, SyncError>(s)
    };
    let mut s = tokio::select! {
        s = opening => s?,
        _ = stop.changed() => return Ok(()),
    };
    let on_applied = &mut live.on_applied;
    store.write(|tx| {
        tx.meta_set(keys::CONNECTED, "1")?;
        tx.meta_set(keys::LAST_SYNC_AT, &applier.clock.now().to_rfc3339())
    })?;
    state.connected(applier.clock.now(), store);
    let mut recheck = tokio::time::interval(OUTBOX_RECHECK);
    loop {
        let mut pushed = 0;
        tokio::select! {
            msg = conn::recv_live(&mut s.ws, SILENCE) => {
                match msg? {
                    ServerMsg::Ops { ops, .. } => {
                        on_applied(applier.apply(store, &ops)?);
                        state.synced(applier.clock.now(), store);
                    }
                    other => return Err(SyncError::Protocol(format!("unexpected live message: {other:?}"))),
                }
            }
            () = live.outbox.notified() => {
                state.recount(store);
                s.push_outbox(store, &applier, &mut |a| on_applied(a), &mut pushed).await?;
            }
            _ = recheck.tick() => {
                s.push_outbox(store, &applier, &mut |a| on_applied(a), &mut pushed).await?;
            }
            _ = live.stop.changed() => {
                conn::close(&mut s.ws).await;
                return Ok(());
            }
        }
        if pushed > 0 {
            state.synced(applier.clock.now(), store);
        }
    }
}
