//! The engine thread: runtime, signal listener, lock, store and engine,
//! then the engine's loop until the host stops.

use std::path::PathBuf;
use std::sync::Arc;
use std::thread::JoinHandle;

use kairos_engine::channel::Channel;
use kairos_engine::clock::Clock;
use kairos_engine::daemon::{InstanceLock, run_observed};
use kairos_engine::engine::{Config, Engine, Stats};
use kairos_engine::platform::changed::Listener;
use kairos_store::Store;
use tokio::sync::oneshot;

use crate::{HostError, OnLocked, Started, Waker};

pub(crate) fn join(engine: JoinHandle<Result<Stats, HostError>>) -> Result<Stats, HostError> {
    engine.join().unwrap_or(Err(HostError::Gone))
}

/// Everything the engine thread owns.
pub(crate) struct EngineRun {
    pub(crate) db: PathBuf,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) channels: Vec<Box<dyn Channel>>,
    pub(crate) config: Config,
    pub(crate) wake: Waker,
    pub(crate) on_fired: Box<dyn FnMut(usize) + Send>,
    pub(crate) on_locked: Option<OnLocked>,
}

impl EngineRun {
    pub(crate) fn run(
        mut self,
        ready: &std::sync::mpsc::Sender<Result<Started, HostError>>,
        stopped: oneshot::Receiver<()>,
    ) -> Result<Stats, HostError> {
        let prepared = self.prepare();
        let (rt, signals, _lock, mut engine) = match prepared {
            Ok(p) => p,
            Err(e) => {
                let _ = ready.send(Err(e));
                return Err(HostError::Gone);
            }
        };
        let _ = ready.send(Ok((engine.notices(), engine.subscribe())));
        let notices = engine.notices();
        let wake = self.wake.clone();
        let (clock, changed, on_fired) = (self.clock, self.wake.changed, self.on_fired);
        let engine_ref = &mut engine;
        rt.block_on(async move {
            if let Some(mut notices_in) = signals {
                tokio::spawn(async move {
                    while notices_in.recv().await.is_some() {
                        wake.changed_elsewhere(&notices);
                    }
                });
            }
            let shutdown = async {
                let _ = stopped.await;
            };
            run_observed(engine_ref, clock, changed, shutdown, on_fired).await
        })?;
        Ok(engine.stats)
    }

    /// Runtime, signal listener, lock, store and engine, in that order.
    #[allow(clippy::type_complexity)]
    fn prepare(
        &mut self,
    ) -> Result<
        (
            tokio::runtime::Runtime,
            Option<Listener>,
            InstanceLock,
            Engine,
        ),
        HostError,
    > {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let signals = {
            let _rt = rt.enter();
            Listener::new()?
        };
        let lock = InstanceLock::acquire(&self.db).map_err(HostError::Locked)?;
        let store = Store::open(&self.db)?;
        if let Some(hook) = self.on_locked.take() {
            hook(&store);
        }
        // The channels move into the engine: the thread owns both.
        let channels = std::mem::take(&mut self.channels);
        let engine = Engine::new(
            store,
            Arc::clone(&self.clock),
            channels,
            self.config.clone(),
        );
        Ok((rt, Some(signals), lock, engine))
    }
}
