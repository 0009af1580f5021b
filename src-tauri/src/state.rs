//! What every part of the shell shares: the [`App`] service behind a mutex,
//! the clock, and the way to wake the engine. Store calls block, so IPC
//! commands run them on the shell's one worker thread ([`Shared::call`],
//! `worker.rs`), never on an async worker or the GTK main thread.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use chrono::{DateTime, Duration, Utc};
use kairos_app::api::{ApiError, events};
use kairos_app::{App, DeliveryPolicy};
use kairos_engine::clock::{Clock, SystemClock};
use tauri::{AppHandle, Emitter};

/// Shared by the IPC commands, the engine thread, the notifier and the tray.
pub struct Shared {
    /// The service; one connection, used by commands and notification
    /// actions (the engine has its own).
    app: Mutex<App>,
    /// How a reminder firing now is shown (notifier, pause, quiet hours,
    /// snooze length), refreshed after every change: the desktop channel
    /// reads it on the engine's thread without the app's lock, so firing
    /// never waits for an IPC call (an import holds that lock for a file).
    policy: Mutex<DeliveryPolicy>,
    /// "Now" for everything in the app (shifted in tests, see [`clock`]).
    pub clock: Arc<dyn Clock>,
    /// Wakes the engine: the database changed (an edit, a snooze, a dismissal).
    pub wake: kairos_host::Waker,
    /// The running Tauri app, for events and windows.
    pub handle: AppHandle,
    /// Test only (`KAIROS_TEST_SNOOZE_SECS`): what a notification's Snooze
    /// button snoozes for, instead of the setting's minutes.
    // Read by the XDG notifier only (notifier_plain.rs has no buttons).
    #[cfg_attr(not(all(unix, not(target_os = "macos"))), allow(dead_code))]
    pub snooze_override: Option<Duration>,
    /// The main window's life and what waits for its UI.
    pub windows: crate::window::Windows,
    /// The thread that runs the store work (see `worker.rs`).
    worker: crate::worker::Worker,
}

/// The database: `$KAIROS_DB`, else `$XDG_DATA_HOME/kairos/kairos.db`
/// (`%LOCALAPPDATA%\kairos\kairos.db` on Windows): the same file the
/// `kairos` CLI uses by default.
#[must_use]
pub fn db_path() -> PathBuf {
    std::env::var_os("KAIROS_DB")
        .map_or_else(kairos_engine::platform::dirs::default_db, PathBuf::from)
}

fn env_secs(name: &str) -> Option<i64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// The system clock, shifted by `KAIROS_TEST_CLOCK_OFFSET_SECS` (test only:
/// "restart ten minutes later" without waiting ten minutes).
#[must_use]
pub fn clock() -> Arc<dyn Clock> {
    let off = env_secs("KAIROS_TEST_CLOCK_OFFSET_SECS").unwrap_or(0);
    Arc::new(SystemClock::shifted(Duration::seconds(off)))
}

impl Shared {
    /// Wraps an opened service.
    ///
    /// # Errors
    /// The worker thread cannot be started.
    pub fn new(app: App, clock: Arc<dyn Clock>, handle: AppHandle) -> std::io::Result<Self> {
        Ok(Self {
            app: Mutex::new(app),
            policy: Mutex::new(DeliveryPolicy::default()),
            clock,
            wake: kairos_host::Waker::default(),
            handle,
            snooze_override: env_secs("KAIROS_TEST_SNOOZE_SECS")
                .filter(|s| *s > 0)
                .map(Duration::seconds),
            windows: crate::window::Windows::default(),
            worker: crate::worker::Worker::start()?,
        })
    }

    /// The service, locked. A panic while it was held cannot leave the
    /// store half-written (every write is one transaction), so a poisoned
    /// lock is taken over rather than propagated.
    pub fn lock(&self) -> MutexGuard<'_, App> {
        self.app
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Current time.
    #[must_use]
    pub fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    /// Runs `f` on the worker thread with the service and "now".
    pub async fn call<T: Send + 'static>(
        self: &Arc<Self>,
        f: impl FnOnce(&mut App, DateTime<Utc>) -> Result<T, ApiError> + Send + 'static,
    ) -> Result<T, ApiError> {
        let me = Arc::clone(self);
        self.worker
            .run(move || {
                let now = me.now();
                f(&mut me.lock(), now)
            })
            .await?
    }

    /// Runs `f` with this `Shared` on the worker thread (store work outside
    /// an IPC command: the refreshes after an engine event).
    pub async fn on_worker(self: &Arc<Self>, f: impl FnOnce(&Arc<Self>) + Send + 'static) {
        let me = Arc::clone(self);
        if let Err(e) = self.worker.run(move || f(&me)).await {
            eprintln!("kairos: {}", e.message);
        }
    }

    /// The delivery policy in effect (a copy; never waits for the app).
    pub fn policy(&self) -> DeliveryPolicy {
        self.policy
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Reads the delivery policy from the app again (after a change to the
    /// settings, a pause, the notifier's abilities).
    pub fn refresh_policy(&self) {
        let now = self.now();
        let fresh = self.lock().delivery_policy(now);
        match fresh {
            Ok(p) => {
                *self
                    .policy
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = p;
            }
            Err(e) => eprintln!("kairos: reading the delivery policy: {}", e.message),
        }
    }

    /// After a change to reminders or how they are shown: the delivery
    /// policy read again, the engine woken (it takes back the notifications
    /// of reminders answered meanwhile), the UI and the tray refreshed.
    pub fn reminders_changed(self: &Arc<Self>) {
        self.refresh_policy();
        self.wake.wake();
        let _ = self.handle.emit(events::REMINDERS_CHANGED, ());
        crate::tray::refresh(self);
    }

    /// The sync connection's state changed: the app keeps it (for
    /// `app_status`), the UI and the tray's tooltip are told.
    pub fn sync_changed(self: &Arc<Self>, state: &kairos_host::LinkState) {
        let status = self.lock().set_sync(state);
        let _ = self.handle.emit(events::SYNC_CHANGED, status);
        crate::tray::refresh(self);
    }

    /// Brings the main window to the front (making it if it was closed)
    /// and shows `intent` in it.
    pub fn show_main(&self, intent: Option<crate::window::Intent>) {
        self.windows.show(&self.handle, intent);
    }
}
