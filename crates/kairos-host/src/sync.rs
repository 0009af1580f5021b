//! The live sync connection of a host: a supervisor thread that keeps the
//! connection in step with the database's pairing. It starts the live
//! client (a thread of its own, the sync client's) when the database is
//! paired, and looks again whenever the pairing may have changed — the
//! host was told ([`super::Waker::account_changed`]: the app joined or
//! left) or the database changed under it (`kairos sync join|leave` from
//! the CLI notify the lock holder) — so a join takes effect without a
//! restart, and a leave stops the connection.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use kairos_engine::engine::{EngineEvent, Notice, NoticeSender};
use kairos_engine::sync::Identity;
use kairos_store::Store;
use kairos_sync::LinkState;
use tokio::sync::broadcast::{self, error::RecvError};
use tokio::sync::watch;

use super::{HostError, Waker};

/// What the supervisor needs to start live clients.
pub(super) struct Setup {
    pub db: PathBuf,
    pub applier: kairos_sync::Applier,
    pub wake: Waker,
    pub notices: NoticeSender,
    pub state: watch::Sender<LinkState>,
}

/// The running supervisor.
pub(super) struct Supervisor {
    stop: watch::Sender<bool>,
    thread: JoinHandle<()>,
    /// Whether a live client runs now (for [`super::Host::syncing`]).
    running: Arc<AtomicBool>,
}

impl Supervisor {
    /// Starts the live client at once when the database is paired (so a
    /// host that returns from `start` on a paired database is syncing),
    /// then the supervisor thread.
    pub(super) fn start(
        setup: Setup,
        events: broadcast::Receiver<EngineEvent>,
    ) -> Result<Self, HostError> {
        let store = Store::open(&setup.db)?;
        let running = Arc::new(AtomicBool::new(false));
        let mut link = None;
        refresh(&setup, &store, &mut link, &running);
        let (stop, stopped) = watch::channel(false);
        let flag = Arc::clone(&running);
        let thread = std::thread::Builder::new()
            .name("kairos-sync-host".into())
            .spawn(move || supervise(&setup, &store, link, &flag, events, stopped))?;
        Ok(Self {
            stop,
            thread,
            running,
        })
    }

    pub(super) fn syncing(&self) -> bool {
        self.running.load(Ordering::SeqCst)
    }

    /// Stops the live client and the supervisor, and waits for both.
    pub(super) fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.thread.join();
    }
}

fn supervise(
    setup: &Setup,
    store: &Store,
    mut link: Option<Link>,
    running: &AtomicBool,
    mut events: broadcast::Receiver<EngineEvent>,
    mut stopped: watch::Receiver<bool>,
) {
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        eprintln!("kairos: sync: cannot start its supervisor's runtime");
        return;
    };
    let account = Arc::clone(&setup.wake.account);
    rt.block_on(async {
        loop {
            tokio::select! {
                _ = stopped.changed() => break,
                () = account.notified() => refresh(setup, store, &mut link, running),
                event = events.recv() => match event {
                    // Another process or device changed the database: it
                    // may have joined or left (a few meta reads).
                    Ok(EngineEvent::Changed) | Err(RecvError::Lagged(_)) => {
                        refresh(setup, store, &mut link, running);
                    }
                    Ok(_) => {}
                    Err(RecvError::Closed) => break,
                },
            }
        }
    });
    if let Some(l) = link.take() {
        l.stop();
    }
    running.store(false, Ordering::SeqCst);
}

/// Brings the live client in line with the stored pairing: started when
/// paired, restarted for another identity, stopped (state "not paired")
/// when the database left its account.
fn refresh(setup: &Setup, store: &Store, link: &mut Option<Link>, running: &AtomicBool) {
    let id = match kairos_engine::sync::identity(store) {
        Ok(id) => id,
        Err(e) => {
            eprintln!("kairos: sync: reading the pairing: {e}");
            return;
        }
    };
    let same = match (&id, link.as_ref()) {
        (Some(id), Some(l)) => same_identity(id, &l.id),
        (None, None) => true,
        _ => false,
    };
    if same {
        return;
    }
    if let Some(old) = link.take() {
        old.stop();
        // Not running before the state says so: a subscriber that sees
        // "not paired" finds `syncing()` false too.
        running.store(false, Ordering::SeqCst);
        setup.state.send_replace(LinkState::not_paired());
    }
    if let Some(id) = id {
        match Link::start(&setup.db, id, setup, store) {
            Ok(l) => {
                *link = Some(l);
                running.store(true, Ordering::SeqCst);
            }
            Err(e) => eprintln!("kairos: sync not started: {e}"),
        }
    }
}

fn same_identity(a: &Identity, b: &Identity) -> bool {
    (&a.server, &a.account, &a.device, &a.token) == (&b.server, &b.account, &b.device, &b.token)
}

/// A running live connection.
struct Link {
    /// Whom it connects as.
    id: Identity,
    stop: watch::Sender<bool>,
    thread: JoinHandle<()>,
}

impl Link {
    fn start(db: &Path, id: Identity, setup: &Setup, store: &Store) -> Result<Self, HostError> {
        let tls = kairos_sync::Tls::stored(store)?;
        let (stop, stopped) = watch::channel(false);
        let to_engine = setup.notices.clone();
        let changed = setup.wake.changed.clone();
        // A subscription from another device (`calendar.feed`) is fetched
        // at once, not at the feeds' loop's next look.
        let feeds = setup.wake.feeds.clone();
        let live = kairos_sync::live::Live {
            db: db.to_owned(),
            applier: setup.applier.clone(),
            tls,
            outbox: setup.wake.outbox.clone(),
            on_applied: Box::new(move |applied| {
                let any = applied.applied > 0;
                // Withdrawals and acknowledgements from other devices.
                for n in applied.notices() {
                    let _ = to_engine.send(n);
                }
                if any {
                    let _ = to_engine.send(Notice::Announce(EngineEvent::Changed));
                    changed.notify_one();
                    feeds.notify_one();
                }
            }),
            stop: stopped,
            state: setup.state.clone(),
        };
        let thread = kairos_sync::live::spawn(live)?;
        Ok(Self { id, stop, thread })
    }

    /// Closes the connection and waits for its thread.
    fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.thread.join();
    }
}
