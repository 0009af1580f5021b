//! The reminder engine, embedded through the one host start-up every
//! engine host uses (`kairos_host`): its own thread and runtime and store
//! connection, so firing never waits for the UI; the same per-database lock
//! as `kairos daemon`, so the app and a CLI daemon never both deliver from
//! one database; and, on a paired database, the live sync connection.
//!
//! The shell listens to the host's events, one path for every change: a
//! round fired (the reminder window lists them), the database changed under
//! it (the CLI, another device), a reminder acknowledged elsewhere (its
//! notification is closed). The live sync connection's state goes, as it
//! changes, to the app (status bar event, tray tooltip) from here alone.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use kairos_app::shown::ShownIds;
use kairos_engine::engine::{Config, EngineEvent};
use kairos_host::{Host, LinkState, Options};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::watch;

use crate::notifier::{self, DesktopChannel};
use crate::state::Shared;

/// Starts the engine host. Returns at once; problems are reported on
/// stderr and in the app status (reminders would not fire: that must be
/// loud, not silent).
pub fn start(shared: Arc<Shared>, db: PathBuf) {
    let spawned = std::thread::Builder::new()
        .name("kairos-host".into())
        .spawn(move || {
            if let Err(e) = run(&shared, db) {
                eprintln!("kairos: reminder engine stopped: {e}");
                shared.show_main(Some(crate::window::Intent::ShowReminders));
            }
        });
    if let Err(e) = spawned {
        eprintln!("kairos: cannot start the reminder engine: {e}");
    }
}

fn run(shared: &Arc<Shared>, db: PathBuf) -> anyhow::Result<()> {
    // Asked once, off the main thread (a D-Bus round trip).
    let state = notifier::probe();
    shared.lock().notifier = state;
    shared.refresh_policy();
    let floating = shared.lock().display_tz();
    // This thread's runtime: the notification server's identity now, the
    // host's events below (it keeps the D-Bus connection served).
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let servers = rt.block_on(crate::notify_server::Servers::connect());
    // The ids a repeat may need are read once this process holds the lock,
    // before recovery moves `firing` instances on (`on_locked`).
    let shown = Arc::new(Mutex::new(ShownIds::unloaded(&db)));
    let channel = DesktopChannel::new(Arc::clone(shared), Arc::clone(&shown), servers);
    let s = Arc::clone(shared);
    let fired_shown = Arc::clone(&shown);
    let host = Host::start(Options {
        db,
        clock: Arc::clone(&shared.clock),
        channels: vec![Box::new(channel)],
        config: Config {
            floating,
            ..Config::default()
        },
        sync: true,
        on_fired: Box::new(move |_| {
            // Outcomes are committed: the reminder window can list them.
            // (What was answered meanwhile the engine took back itself.)
            compact(&s, &fired_shown);
            let _ = tauri::Emitter::emit(&s.handle, kairos_app::api::events::REMINDERS_CHANGED, ());
            crate::tray::refresh(&s);
        }),
        waker: shared.wake.clone(),
        on_locked: Box::new(move |store| {
            lock(&shown).load(|k| store.get(k).ok().flatten().map(|i| i.state));
        }),
    })?;
    let mut events = host.subscribe();
    let mut sync = host.sync_state();
    let mut sync_open = true;
    rt.block_on(async {
        forward_sync(shared, &mut sync).await;
        loop {
            tokio::select! {
                // The host follows the pairing (a join or leave in
                // Settings → Sync or from the CLI): the state goes on.
                changed = sync.changed(), if sync_open => match changed {
                    Ok(()) => forward_sync(shared, &mut sync).await,
                    Err(_) => sync_open = false,
                },
                event = events.recv() => match event {
                    // A fired round is handled by `on_fired` (once per round).
                    Ok(EngineEvent::Fired { .. }) => {}
                    Ok(EngineEvent::Changed) | Err(RecvError::Lagged(_)) => {
                        // Store reads: on the worker thread, not this loop.
                        shared.on_worker(|s| s.reminders_changed()).await;
                        // Calendars may have changed too (another process,
                        // another device, a feed's refresh or its error):
                        // open views reload.
                        let _ = tauri::Emitter::emit(&shared.handle, kairos_app::api::events::DATA_CHANGED, ());
                    }
                    Ok(EngineEvent::Acknowledged { .. } | EngineEvent::Withdrawn(_)) => {
                        shared.on_worker(|s| s.reminders_changed()).await;
                    }
                    Err(RecvError::Closed) => break,
                },
                () = host.ended() => break,
            }
        }
    });
    host.stop()?;
    Ok(())
}

fn lock(shown: &Mutex<ShownIds>) -> std::sync::MutexGuard<'_, ShownIds> {
    shown
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Keeps `<database>-notified` bounded in a long run: rewritten with only
/// the reminders still shown once enough was appended (off the delivery
/// path: after a commit).
fn compact(s: &Shared, shown: &Mutex<ShownIds>) {
    let mut shown = lock(shown);
    if shown.wants_compaction() {
        let mut app = s.lock();
        shown.compact(|k| app.store().get(k).ok().flatten().map(|i| i.state));
    }
}

/// Hands the host's current sync state to the app, the UI and the tray.
async fn forward_sync(shared: &Arc<Shared>, sync: &mut watch::Receiver<LinkState>) {
    let state = sync.borrow_and_update().clone();
    // The app's lock and the tray's store read: on the worker thread.
    shared.on_worker(move |s| s.sync_changed(&state)).await;
}
