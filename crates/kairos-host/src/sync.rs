//! The live sync connection of a host, on a paired database: a thread of
//! its own (the sync client's), started after the lock is held.

use std::path::Path;
use std::thread::JoinHandle;

use kairos_engine::engine::{EngineEvent, Notice, NoticeSender};
use kairos_store::Store;
use kairos_sync::LinkState;
use tokio::sync::watch;

use super::{HostError, Waker};

/// A running live connection.
pub(super) struct Link {
    stop: watch::Sender<bool>,
    thread: JoinHandle<()>,
}

impl Link {
    /// Starts it when the database is paired (`None` otherwise).
    pub(super) fn start(
        db: &Path,
        applier: kairos_sync::Applier,
        wake: &Waker,
        notices: &NoticeSender,
        state: watch::Sender<LinkState>,
    ) -> Result<Option<Self>, HostError> {
        let store = Store::open(db)?;
        if kairos_engine::sync::identity(&store)?.is_none() {
            return Ok(None);
        }
        let tls = kairos_sync::Tls::stored(&store)?;
        drop(store);
        let (stop, stopped) = watch::channel(false);
        let to_engine = notices.clone();
        let changed = wake.changed.clone();
        let live = kairos_sync::live::Live {
            db: db.to_owned(),
            applier,
            tls,
            outbox: wake.outbox.clone(),
            on_applied: Box::new(move |applied| {
                let any = applied.applied > 0;
                // Withdrawals and acknowledgements from other devices.
                for n in applied.notices() {
                    let _ = to_engine.send(n);
                }
                if any {
                    let _ = to_engine.send(Notice::Announce(EngineEvent::Changed));
                    changed.notify_one();
                }
            }),
            stop: stopped,
            state,
        };
        let thread = kairos_sync::live::spawn(live)?;
        Ok(Some(Self { stop, thread }))
    }

    /// Closes the connection and waits for its thread.
    pub(super) fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.thread.join();
    }
}
