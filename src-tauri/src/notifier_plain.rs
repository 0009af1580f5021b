//! The desktop channel where notifications are not XDG D-Bus (Windows
//! toasts, macOS): a fired reminder becomes a plain OS notification
//! without buttons, and the in-app reminder window comes forward to snooze
//! or dismiss it (what Linux does for a service without actions). Nothing
//! is closed when a reminder is dismissed elsewhere: notify-rust gives no
//! handle to close a toast with; the reminder window is the truth.
//!
//! Built and type-checked for Windows from Linux (`make check-windows`);
//! not run here (no Windows desktop).

use std::sync::{Arc, Mutex};

use kairos_app::api::NotifierState;
use kairos_app::shown::ShownIds;
use kairos_engine::channel::{Channel, Delivery, Reminder};
use notify_rust::Notification;

use crate::state::Shared;
use crate::window::Intent;

/// What the notification service can do: show, without buttons.
#[must_use]
pub fn probe() -> NotifierState {
    NotifierState::NoActions
}

/// Longest one notification may take to be shown (the service's answer
/// to `Notify`) before the engine records a timeout and retries it.
pub const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// The channel the embedded engine delivers to.
pub struct DesktopChannel {
    shared: Arc<Shared>,
}

impl DesktopChannel {
    /// A channel for this app. (Same shape as the XDG channel's; a repeat
    /// after a crash is shown anew here: there is no id to replace a toast
    /// by, so `shown` and `servers` are not used.)
    #[must_use]
    pub fn new(
        shared: Arc<Shared>,
        _shown: Arc<Mutex<ShownIds>>,
        _servers: crate::notify_server::Servers,
    ) -> Self {
        Self { shared }
    }
}

fn body(r: &Reminder) -> String {
    let when = r.occurrence_start.replace('T', " ");
    let when = when.get(..16).unwrap_or(&when).to_owned();
    match r.location.as_deref().filter(|l| !l.is_empty()) {
        Some(l) => format!("{when} · {l}"),
        None => when,
    }
}

impl Channel for DesktopChannel {
    fn name(&self) -> &'static str {
        "desktop"
    }

    /// As on Linux: a notification service that does not answer within
    /// this is given up on (a failed attempt, retried).
    fn timeout(&self) -> std::time::Duration {
        TIMEOUT
    }

    fn deliver<'a>(&'a self, r: &'a Reminder) -> Delivery<'a> {
        Box::pin(async move {
            let s = &self.shared;
            // Never the app's lock here: firing must not wait for the UI.
            let quiet = s.policy().is_quiet(s.now());
            if quiet {
                // Recorded by the engine; the row waits in the reminder window.
                return Ok(());
            }
            let mut n = Notification::new();
            n.appname("Kairos")
                .summary(r.summary.as_deref().unwrap_or("Reminder"))
                .body(&body(r));
            // Showing a toast returns at once (it is handed to the OS).
            if let Err(e) = n.show().map(drop) {
                eprintln!("kairos: notification failed ({e}); showing the reminder window");
            }
            s.show_main(Some(Intent::ShowReminders));
            Ok(())
        })
    }
}
