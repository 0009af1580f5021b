//! The reminder engine, embedded: its own thread with a single-threaded
//! tokio runtime and its own store connection, so firing never waits for
//! the UI and store calls never block a shared async worker. It holds the
//! same per-database lock as `kairos daemon`, so the app and a CLI daemon
//! never both deliver from one database.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use kairos_app::shown::ShownIds;
use kairos_engine::daemon::{InstanceLock, run_observed};
use kairos_engine::engine::{Config, Engine};
use kairos_store::Store;

use crate::notifier::{self, DesktopChannel};
use crate::state::Shared;

/// Starts the engine thread. Returns at once; problems are reported on
/// stderr and in the app status (reminders would not fire: that must be
/// loud, not silent).
pub fn start(shared: Arc<Shared>, db: PathBuf) {
    let spawned = std::thread::Builder::new()
        .name("kairos-engine".into())
        .spawn(move || {
            if let Err(e) = run(&shared, &db) {
                eprintln!("kairos: reminder engine stopped: {e}");
                shared.show_main(Some(crate::window::Intent::ShowReminders));
            }
        });
    if let Err(e) = spawned {
        eprintln!("kairos: cannot start the reminder engine: {e}");
    }
}

fn run(shared: &Arc<Shared>, db: &std::path::Path) -> anyhow::Result<()> {
    let state = notifier::probe();
    shared.lock().notifier = state;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    // `kairos import|snooze|dismiss` signal the lock holder: re-plan, and
    // close notifications they made stale. The handler goes in before the
    // lock is taken: SIGUSR1's default action would kill the app.
    let mut usr1 = {
        let _rt = rt.enter();
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::user_defined1())?
    };
    let _lock = InstanceLock::acquire(db).map_err(anyhow::Error::msg)?;
    rt.block_on(async {
        let floating = shared.lock().display_tz();
        let store = Store::open(db)?;
        // Under the instance lock and before `recover` (in `run_observed`)
        // moves `firing` instances on: the ids a repeat may need are kept.
        let shown = ShownIds::open(db, |k| store.get(k).ok().flatten().map(|i| i.state));
        let shown = Arc::new(Mutex::new(shown));
        let servers = crate::notify_server::Servers::connect().await;
        let channel = DesktopChannel::new(Arc::clone(shared), Arc::clone(&shown), servers);
        let config = Config {
            floating,
            ..Config::default()
        };
        let mut engine = Engine::new(
            store,
            Arc::clone(&shared.clock),
            vec![Box::new(channel)],
            config,
        );
        let s = Arc::clone(shared);
        tokio::spawn(async move {
            while usr1.recv().await.is_some() {
                s.reminders_changed();
            }
        });
        let s = Arc::clone(shared);
        run_observed(
            &mut engine,
            Arc::clone(&shared.clock),
            Arc::clone(&shared.wake),
            std::future::pending::<()>(),
            move |_| {
                // Outcomes are committed: the reminder window can list them.
                crate::notifier::reconcile(&s);
                compact(&s, &shown);
                let _ =
                    tauri::Emitter::emit(&s.handle, kairos_app::api::events::REMINDERS_CHANGED, ());
                crate::tray::refresh(&s);
            },
        )
        .await?;
        Ok(())
    })
}

/// Keeps `<database>-notified` bounded in a long run: rewritten with only
/// the reminders still shown once enough was appended (off the delivery
/// path: after a commit).
fn compact(s: &Shared, shown: &Mutex<ShownIds>) {
    let mut shown = shown
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if shown.wants_compaction() {
        let mut app = s.lock();
        shown.compact(|k| app.store().get(k).ok().flatten().map(|i| i.state));
    }
}
