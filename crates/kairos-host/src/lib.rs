//! One start-up for whatever hosts the reminder engine — `kairos daemon`,
//! the desktop app, the engine bench — so the hosts cannot drift apart.
//!
//! [`Host::start`] does, in this order:
//! 1. a thread of its own with a single-threaded tokio runtime (the store is
//!    blocking: it never runs on a shared async worker, and firing never
//!    waits for anyone else's work);
//! 2. the listener for "another process changed the database"
//!    (`kairos import|snooze|dismiss` notify the lock holder: `SIGUSR1` on
//!    Unix, a named pipe on Windows, see [`kairos_engine::platform::changed`]),
//!    installed **before** the lock is taken, because the lock file is what
//!    tells those processes whom to notify and `SIGUSR1`'s default action
//!    would kill a host still starting;
//! 3. the per-database lock ([`InstanceLock`](kairos_engine::daemon::InstanceLock)): one host per database; a
//!    second is refused with the first one's PID;
//! 4. the engine over its own store connection, with the host's channels;
//! 5. on a paired database, the live sync connection on a thread of its own
//!    (only the lock holder holds it; if it cannot start, that is reported
//!    and the engine runs on: reminders never depend on sync): what it applies wakes the engine,
//!    acknowledgements from other devices withdraw what is shown here, and
//!    a local change (the notice, [`Host::changed`]) is pushed at once;
//!    its state (connected, offline since, refused, the outbox's length)
//!    is published as it changes ([`Host::sync_state`]). The pairing is
//!    followed while the host runs: a join (in the app, told through
//!    [`Waker::account_changed`], or `kairos sync join` in a terminal,
//!    which notifies the lock holder) starts the connection, a leave stops
//!    it, with no restart;
//! 6. the ICS subscriptions' refresh loop ([`kairos_feeds::runner`]) on a
//!    thread of its own: due feeds are fetched (jittered interval, backoff,
//!    `Retry-After`); a refresh that changed a calendar wakes the engine,
//!    pushes the outbox and is announced as [`EngineEvent::Changed`];
//! 7. the CalDAV accounts' background sync (`caldav.rs`) on a thread of
//!    its own: each account when the host starts, then on its interval
//!    (jittered, backoff on errors, its status stored for `kairos caldav
//!    calendars`), and soon after a change made here (woken by the
//!    [`Waker`] and the engine's events, never polled).
//!
//! What happened reaches the host by one path: [`Host::subscribe`] (the
//! engine's [`EngineEvent`]s, plus [`EngineEvent::Changed`] when the
//! database changed under it: another process, another device).
//!
//! The host knows nothing of Tauri, of the CLI's flags or of what a channel
//! does with a reminder.

use std::path::PathBuf;
use std::sync::Arc;
use std::thread::JoinHandle;

use kairos_engine::channel::Channel;
use kairos_engine::clock::Clock;
use kairos_engine::engine::{Config, EngineError, EngineEvent, NoticeSender, Stats};
use kairos_store::{Store, StoreError};
pub use kairos_sync::{LinkState, Phase};
use tokio::sync::{broadcast, oneshot, watch};

mod caldav;
mod feeds;
mod run;
mod sync;
mod waker;

use run::{EngineRun, join};
pub use waker::Waker;

/// What a host runs.
pub struct Options {
    /// The database.
    pub db: PathBuf,
    /// "Now" for the engine and sync.
    pub clock: Arc<dyn Clock>,
    /// Where reminders go.
    pub channels: Vec<Box<dyn Channel>>,
    /// Engine settings (the floating zone among them).
    pub config: Config,
    /// Start the live sync connection when the database is paired.
    pub sync: bool,
    /// Called on the engine thread after each round that delivered `n > 0`
    /// reminders, once their outcomes are committed.
    pub on_fired: Box<dyn FnMut(usize) + Send>,
    /// How the rest of the process wakes the engine and the sync
    /// connection; made before the host (e.g. held by the app's state).
    pub waker: Waker,
    /// Called once on the engine thread when the lock is held, before the
    /// engine recovers what a crash left `firing`: for state a channel keeps
    /// beside the database that only the lock holder may rewrite (the
    /// desktop's notification ids).
    pub on_locked: OnLocked,
}

/// See [`Options::on_locked`].
pub type OnLocked = Box<dyn FnOnce(&Store) + Send>;

/// Why a host did not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// Another host holds the database (the message names its PID).
    #[error("{0}")]
    Locked(String),
    /// The database cannot be used.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The engine failed.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// A thread or the runtime cannot be started, or a signal handler
    /// cannot be installed.
    #[error("starting the engine host: {0}")]
    Io(#[from] std::io::Error),
    /// The engine thread ended without saying why (it panicked).
    #[error("the engine thread ended unexpectedly")]
    Gone,
}

/// A running engine host. Dropping it stops it (see [`Host::stop`]).
pub struct Host {
    engine: Option<JoinHandle<Result<Stats, HostError>>>,
    shutdown: Option<oneshot::Sender<()>>,
    wake: Waker,
    notices: NoticeSender,
    events: broadcast::Receiver<EngineEvent>,
    sync: Option<sync::Supervisor>,
    feeds: Option<feeds::Feeds>,
    caldav: Option<caldav::Caldav>,
    /// The live connection's state ([`Phase::NotPaired`] when none runs).
    sync_state: watch::Receiver<LinkState>,
    /// Turns true when the engine thread ends (stopped or failed).
    ended: watch::Receiver<bool>,
}

/// What the engine thread hands back once it holds the lock.
type Started = (NoticeSender, broadcast::Receiver<EngineEvent>);

impl Host {
    /// Starts the host (see the crate doc for the order). Returns once the
    /// lock is held and the engine is about to run.
    ///
    /// # Errors
    /// Another host holds the database, the database cannot be opened, a
    /// thread cannot be started.
    pub fn start(options: Options) -> Result<Self, HostError> {
        let Options {
            db,
            clock,
            channels,
            config,
            sync,
            on_fired,
            waker: wake,
            on_locked,
        } = options;
        let floating = config.floating;
        let horizon = config.horizon;
        let (shutdown, stopped) = oneshot::channel::<()>();
        let (ready, started) = std::sync::mpsc::channel::<Result<Started, HostError>>();
        let (ending, ended) = watch::channel(false);
        let engine_db = db.clone();
        let engine_clock = Arc::clone(&clock);
        let engine_wake = wake.clone();
        let engine = std::thread::Builder::new()
            .name("kairos-engine".into())
            .spawn(move || {
                let run = EngineRun {
                    db: engine_db,
                    clock: engine_clock,
                    channels,
                    config,
                    wake: engine_wake,
                    on_fired,
                    on_locked: Some(on_locked),
                };
                let result = run.run(&ready, stopped);
                let _ = ending.send(true);
                result
            })?;
        let (notices, events) = match started.recv() {
            Ok(Ok(started)) => started,
            Ok(Err(e)) => {
                let _ = engine.join();
                return Err(e);
            }
            Err(_) => return Err(join(engine).err().unwrap_or(HostError::Gone)),
        };
        let (state, sync_state) = watch::channel(LinkState::not_paired());
        let mut host = Self {
            engine: Some(engine),
            shutdown: Some(shutdown),
            wake,
            notices,
            events,
            sync: None,
            feeds: None,
            caldav: None,
            sync_state,
            ended,
        };
        let feed_clock = Arc::clone(&clock);
        let caldav_clock = Arc::clone(&clock);
        if sync {
            let applier = kairos_sync::Applier {
                clock,
                floating,
                horizon,
            };
            let setup = sync::Setup {
                db: db.clone(),
                applier,
                wake: host.wake.clone(),
                notices: host.notices.clone(),
                state,
            };
            match sync::Supervisor::start(setup, host.events.resubscribe()) {
                Ok(s) => host.sync = Some(s),
                // Reminders must not depend on sync: the engine runs on, and
                // the state stays "not paired".
                Err(e) => eprintln!("kairos: sync not started: {e}"),
            }
        }
        // Like sync, subscriptions are not needed for reminders to fire.
        match feeds::Feeds::start(
            &db,
            feed_clock,
            floating,
            horizon,
            &host.wake,
            &host.notices,
        ) {
            Ok(f) => host.feeds = Some(f),
            Err(e) => eprintln!("kairos: subscriptions not refreshed: {e}"),
        }
        // Nor are CalDAV accounts.
        match caldav::Caldav::start(
            &db,
            caldav_clock,
            floating,
            horizon,
            &host.wake,
            &host.notices,
            host.events.resubscribe(),
        ) {
            Ok(c) => host.caldav = Some(c),
            Err(e) => eprintln!("kairos: CalDAV accounts not synced: {e}"),
        }
        Ok(host)
    }

    /// The database was changed by this process: the engine re-plans and
    /// the sync connection pushes at once (as [`Waker::wake`]).
    pub fn changed(&self) {
        self.wake.wake();
    }

    /// The engine's announcements (fired, acknowledged elsewhere, withdrawn,
    /// changed). A slow subscriber misses old ones, never blocks the engine.
    #[must_use]
    pub fn subscribe(&self) -> broadcast::Receiver<EngineEvent> {
        self.events.resubscribe()
    }

    /// Where other parts of the process hand the engine notices.
    #[must_use]
    pub fn notices(&self) -> NoticeSender {
        self.notices.clone()
    }

    /// Whether the live sync connection runs (the database is paired).
    #[must_use]
    pub fn syncing(&self) -> bool {
        self.sync.as_ref().is_some_and(sync::Supervisor::syncing)
    }

    /// The live sync connection's state, pushed as it changes: connecting,
    /// connected (with the last sync), offline since, refused, and how many
    /// local changes wait in the outbox. [`Phase::NotPaired`] while the
    /// database is not paired.
    #[must_use]
    pub fn sync_state(&self) -> watch::Receiver<LinkState> {
        self.sync_state.clone()
    }

    /// Completes when the engine thread has ended on its own (it failed:
    /// [`Host::stop`] returns why). For a host that waits on other things
    /// too (a signal to stop).
    pub async fn ended(&self) {
        let mut ended = self.ended.clone();
        let _ = ended.wait_for(|e| *e).await;
    }

    /// Stops the engine (after the batch in hand) and the sync connection,
    /// and waits for both. Returns the engine's counters.
    ///
    /// # Errors
    /// The engine had failed (its error).
    pub fn stop(mut self) -> Result<Stats, HostError> {
        self.halt()
    }

    fn halt(&mut self) -> Result<Stats, HostError> {
        if let Some(s) = self.shutdown.take() {
            let _ = s.send(());
        }
        if let Some(sup) = self.sync.take() {
            sup.stop();
        }
        if let Some(feeds) = self.feeds.take() {
            feeds.stop();
        }
        if let Some(c) = self.caldav.take() {
            c.stop();
        }
        match self.engine.take() {
            Some(engine) => join(engine),
            None => Err(HostError::Gone),
        }
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        if self.engine.is_some() {
            let _ = self.halt();
        }
    }
}
