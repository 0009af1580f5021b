//! The desktop channel: a fired reminder becomes an OS notification (XDG
//! D-Bus, via notify-rust) with Snooze and Dismiss buttons (and "Dismiss
//! here only" where the server shows a third), and a row in the
//! in-app reminder window. Where the notification service is missing, shows
//! no buttons, or pop-ups are paused, the reminder window comes forward
//! instead. A notification whose reminder was dismissed or snoozed
//! elsewhere (the reminder window, the CLI, another device) is closed.
//!
//! Measured (FINDINGS.md): notify-rust listens for actions only after
//! `Notify` returns, and the blocking wait cannot also close the same
//! notification, so the async API is used and each notification's handle
//! is kept until it is answered or closed.
//!
//! A reminder delivered again after a crash (`Reminder::repeat`, the attempt
//! in flight when the app was killed) replaces the notification the dead
//! process showed, found by its id in `<database>-notified`
//! ([`kairos_app::shown`]), instead of showing a second one.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use chrono::Duration;
use kairos_app::api::{EventRef, NotifierState};
use kairos_app::shown::ShownIds;
use kairos_engine::channel::{Channel, Delivery, Reminder, Withdrawal};
use notify_rust::{Notification, NotificationHandle, NotificationResponse, Timeout};

use crate::notify_server::Servers;
use crate::state::Shared;
use crate::window::Intent;

/// Notifications on screen, by instance key.
fn on_screen() -> &'static Mutex<HashMap<String, Arc<NotificationHandle>>> {
    static SHOWN: OnceLock<Mutex<HashMap<String, Arc<NotificationHandle>>>> = OnceLock::new();
    SHOWN.get_or_init(Mutex::default)
}

fn screen() -> std::sync::MutexGuard<'static, HashMap<String, Arc<NotificationHandle>>> {
    on_screen()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What the notification service can do (asked once at start).
#[must_use]
pub fn probe() -> NotifierState {
    match notify_rust::get_capabilities() {
        Ok(caps) if caps.iter().any(|c| c == "actions") => NotifierState::Actions,
        Ok(_) => NotifierState::NoActions,
        Err(_) => NotifierState::Unavailable,
    }
}

/// Notification servers known to show a third action (as a button, or in
/// a menu of every action). The XDG spec has no capability that says how
/// many actions a server shows, so "Dismiss here only" is offered only
/// where the server is known to show it; elsewhere the notification keeps
/// Snooze and Dismiss and the reminder window has the third button.
/// GNOME Shell shows up to three buttons ("default" is the click, not a
/// button); dunst, mako and swaync list every action in a menu;
/// xfce4-notifyd shows them all; `kairos-fake-notifyd` is the e2e tests'.
const SHOWS_THREE_ACTIONS: &[&str] = &[
    "gnome-shell",
    "dunst",
    "mako",
    "swaync",
    "xfce4-notifyd",
    "kairos-fake-notifyd",
];

/// Whether a server with these capabilities and this name shows "Dismiss
/// here only" beside Snooze and Dismiss.
fn offers_here_only(caps: &[String], server: &str) -> bool {
    caps.iter().any(|c| c == "actions")
        && SHOWS_THREE_ACTIONS
            .iter()
            .any(|s| s.eq_ignore_ascii_case(server.trim()))
}

/// Asks the server (a D-Bus round trip; the engine's thread calls it once).
fn probe_here_only() -> bool {
    match (
        notify_rust::get_capabilities(),
        notify_rust::get_server_information(),
    ) {
        (Ok(caps), Ok(info)) => offers_here_only(&caps, &info.name),
        _ => false,
    }
}

/// Longest one notification may take to be shown (the service's answer
/// to `Notify`) before the engine records a timeout and retries it.
pub const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// The channel the embedded engine delivers to.
pub struct DesktopChannel {
    shared: Arc<Shared>,
    /// The server shows a third action: notifications offer "Dismiss here
    /// only" (see [`SHOWS_THREE_ACTIONS`]).
    here_only: bool,
    /// The ids of the notifications shown, by key, also on disk: what a
    /// repeat after a crash replaces. Shared with the engine loop, which
    /// compacts it after commits (see `engine`); never locked across an
    /// `.await`.
    shown: Arc<Mutex<ShownIds>>,
    /// Which server instance issues the ids (an id is replaced only by the
    /// instance that issued it).
    servers: Servers,
}

impl DesktopChannel {
    /// A channel for this app, remembering ids in `shown`. Asks the
    /// notification server what it shows (call it off the UI thread).
    #[must_use]
    pub fn new(shared: Arc<Shared>, shown: Arc<Mutex<ShownIds>>, servers: Servers) -> Self {
        Self {
            shared,
            here_only: probe_here_only(),
            shown,
            servers,
        }
    }

    fn shown(&self) -> MutexGuard<'_, ShownIds> {
        self.shown
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn body(r: &Reminder) -> String {
    let when = r.occurrence_start.replace('T', " ");
    let when = when.get(..16).unwrap_or(&when).to_owned();
    let mut b = match r.status {
        "missed" => format!("Missed · {when}"),
        _ => when,
    };
    if let Some(l) = r.location.as_deref().filter(|l| !l.is_empty()) {
        b.push_str(" · ");
        b.push_str(l);
    }
    b
}

impl Channel for DesktopChannel {
    fn name(&self) -> &'static str {
        "desktop"
    }

    /// A notification service that does not answer within this is given
    /// up on: a failed attempt, retried, and the other reminders go on.
    fn timeout(&self) -> std::time::Duration {
        TIMEOUT
    }

    /// Acknowledged on another device (or its event deleted): its
    /// notification is closed here at once, from the engine's own notice
    /// (the reminder window follows by the host's `Withdrawn` event).
    fn withdraw(&self, w: &Withdrawal) {
        if let Some(h) = screen().remove(&w.key) {
            tauri::async_runtime::spawn(async move { h.close_async().await });
        }
    }

    fn deliver<'a>(&'a self, r: &'a Reminder) -> Delivery<'a> {
        Box::pin(async move {
            let s = &self.shared;
            // Never the app's lock here: firing must not wait for the UI.
            let policy = s.policy();
            let (state, quiet) = (policy.notifier, policy.is_quiet(s.now()));
            if state == NotifierState::Unavailable || quiet {
                // The reminder window is the delivery; the row appears when
                // the engine has recorded it (see `engine::fired`).
                if !quiet {
                    s.show_main(Some(Intent::ShowReminders));
                }
                return Ok(());
            }
            let mut n = Notification::new();
            n.appname("Kairos")
                .summary(r.summary.as_deref().unwrap_or("Reminder"))
                .body(&body(r))
                .icon("appointment-soon")
                .timeout(Timeout::Never);
            if state == NotifierState::Actions {
                let snooze = format!("Snooze {} min", policy.default_snooze);
                n.action("default", "Open")
                    .action("snooze", &snooze)
                    .action("dismiss", "Dismiss");
                if self.here_only {
                    n.action("dismiss_here", "Dismiss here only");
                }
            }
            // A repeat (the engine was killed while this very delivery was
            // in flight) may already be on screen: the server replaces the
            // notification the dead process showed (XDG `replaces_id`) rather
            // than adding a second one. Without a remembered id (the kill came
            // before the server's answer was written down), or when another
            // server instance issued it (restarted, another login: its id may
            // be another app's notification), it is shown anew.
            let mut server = self.servers.current().await;
            let prev = if r.repeat {
                self.shown().get(&r.key, &server)
            } else {
                None
            };
            if let Some(prev) = prev {
                n.id(prev);
            }
            match n.show_async().await {
                Ok(handle) => {
                    // On disk before `deliver` returns, so before the engine
                    // journals the delivery as done: whenever a repeat can
                    // follow, the id it must replace is known.
                    if server.is_empty() {
                        // Started (D-Bus activation) by this very Notify.
                        server = self.servers.current().await;
                    }
                    self.shown().remember(&r.key, handle.id(), &server);
                    let handle = Arc::new(handle);
                    // A repetition of an escalating reminder replaces the
                    // notification of the one before.
                    let base = kairos_engine::sync::acks::base_key(&r.key);
                    let before: Vec<Arc<NotificationHandle>> = {
                        let mut on = screen();
                        let keys: Vec<String> = on
                            .keys()
                            .filter(|k| {
                                *k != &r.key && kairos_engine::sync::acks::base_key(k) == base
                            })
                            .cloned()
                            .collect();
                        keys.iter().filter_map(|k| on.remove(k)).collect()
                    };
                    for h in before {
                        tokio::spawn(async move { h.close_async().await });
                    }
                    screen().insert(r.key.clone(), Arc::clone(&handle));
                    if state == NotifierState::Actions {
                        tokio::spawn(answer(Arc::clone(s), r.key.clone(), r.uid.clone(), handle));
                    } else {
                        s.show_main(Some(Intent::ShowReminders));
                    }
                }
                Err(e) => {
                    eprintln!("kairos: notification failed ({e}); showing the reminder window");
                    s.show_main(Some(Intent::ShowReminders));
                }
            }
            Ok(())
        })
    }
}

/// Waits for the person's answer to one notification and acts on it.
async fn answer(s: Arc<Shared>, key: String, uid: String, handle: Arc<NotificationHandle>) {
    let mut response = None;
    handle
        .wait_for_action_async(|r| response = Some(r.clone()))
        .await;
    screen().remove(&key);
    let s2 = Arc::clone(&s);
    let k = key.clone();
    let acted = tauri::async_runtime::spawn_blocking(move || {
        let now = s2.now();
        let mut app = s2.lock();
        match response {
            Some(NotificationResponse::Action(a)) if a == "dismiss" => {
                app.dismiss(&k, now).map(|()| true)
            }
            Some(NotificationResponse::Action(a)) if a == "dismiss_here" => {
                app.dismiss_here(&k, now).map(|()| true)
            }
            Some(NotificationResponse::Action(a)) if a == "snooze" => {
                let len = s2.snooze_override.unwrap_or_else(|| {
                    Duration::minutes(i64::from(
                        app.get_settings().map(|x| x.default_snooze).unwrap_or(10),
                    ))
                });
                app.snooze_for(&k, len, now).map(|()| true)
            }
            Some(NotificationResponse::Action(a)) if a == "default" => Ok(false),
            Some(NotificationResponse::Default) => Ok(false),
            _ => Ok(true),
        }
    })
    .await;
    match acted {
        Ok(Ok(true)) => s.reminders_changed(),
        Ok(Ok(false)) => {
            // "Open": the event in the editor, and the reminder stays listed.
            let cal = s
                .lock()
                .store()
                .get(&key)
                .ok()
                .flatten()
                .map_or(0, |i| i.calendar.0);
            s.show_main(Some(Intent::OpenEvent(EventRef {
                calendar_id: cal,
                uid,
                recurrence_id: None,
            })));
        }
        Ok(Err(e)) => eprintln!("kairos: notification action on {key}: {}", e.message),
        Err(e) => eprintln!("kairos: notification action on {key}: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::offers_here_only;

    fn caps(c: &[&str]) -> Vec<String> {
        c.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn here_only_is_offered_only_where_a_third_action_shows() {
        let with = caps(&["actions", "body"]);
        assert!(offers_here_only(&with, "dunst"));
        assert!(offers_here_only(&with, "gnome-shell"));
        assert!(offers_here_only(&with, "kairos-fake-notifyd"));
        // No buttons at all, or a server not known to show three.
        assert!(!offers_here_only(&caps(&["body"]), "dunst"));
        assert!(!offers_here_only(&with, "notify-osd"));
        assert!(!offers_here_only(&with, ""));
    }
}
