//! Kairos desktop: a thin Tauri 2 shell. It opens the database, embeds the
//! reminder engine on its own thread, registers the IPC commands (each one
//! call into `kairos-app`), the tray, and OS notifications. It decides
//! nothing itself: behaviour lives in `crates/`.
//!
//! Closing the window destroys it (and WebKit's web and network processes);
//! reminders keep firing from the tray until "Quit". One instance per user:
//! a second launch brings the first forward.

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod caldav_commands;
mod commands;
mod engine;
mod network_process;
// Notifications: XDG D-Bus with buttons (Linux, BSD); elsewhere plain OS
// notifications and the reminder window.
#[cfg(all(unix, not(target_os = "macos")))]
mod notifier;
#[cfg(not(all(unix, not(target_os = "macos"))))]
#[path = "notifier_plain.rs"]
mod notifier;
mod notify_server;
mod startup;
mod state;
mod sync_commands;
mod tray;
mod webkit_env;
mod window;
mod worker;

use std::sync::Arc;

use kairos_app::App;
use tauri::{Manager, RunEvent, WindowEvent};

use crate::state::Shared;

fn system_zone() -> String {
    std::env::var("TZ")
        .ok()
        .filter(|z| z.parse::<chrono_tz::Tz>().is_ok())
        .or_else(|| iana_time_zone::get_timezone().ok())
        .unwrap_or_else(|| "UTC".into())
}

fn main() {
    // Before anything else (it may replace this process's image).
    webkit_env::ensure();
    startup::begin();
    let db = state::db_path();
    let clock = state::clock();
    if let Some(dir) = db.parent().filter(|d| !d.as_os_str().is_empty())
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        eprintln!("kairos: cannot create {}: {e}", dir.display());
        std::process::exit(1);
    }
    let app = match App::open(&db, &system_zone(), clock.now()) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("kairos: {}: {}", db.display(), e.message);
            std::process::exit(1);
        }
    };
    let built = tauri::Builder::default()
        .plugin(tauri_plugin_single_instance::init(|h, _argv, _cwd| {
            if let Some(s) = h.try_state::<Arc<Shared>>() {
                s.show_main(None);
            }
        }))
        .plugin(tauri_plugin_autostart::init(
            tauri_plugin_autostart::MacosLauncher::LaunchAgent,
            None,
        ))
        .plugin(tauri_plugin_dialog::init())
        .invoke_handler(handler!())
        .setup(move |a| {
            let shared = Arc::new(Shared::new(app, clock, a.handle().clone())?);
            a.manage(Arc::clone(&shared));
            if let Err(e) = tray::create(a.handle()) {
                eprintln!(
                    "kairos: no tray ({e}); closing the window will not quit while reminders run"
                );
            }
            // The window before the engine: a reminder that fires at once
            // (missed while Kairos was down) finds it there.
            shared.show_main(None);
            engine::start(shared, db);
            Ok(())
        })
        .on_window_event(|w, e| {
            // Closing destroys the window and its web process; reminders
            // keep firing from the tray (see `window`). With no window left,
            // WebKit's network process goes too (`network_process`).
            if let WindowEvent::Destroyed = e {
                if let Some(s) = w.try_state::<Arc<Shared>>() {
                    s.windows.closed();
                }
                if w.webview_windows().keys().all(|l| l == w.label()) {
                    network_process::end();
                }
            }
        })
        .build(tauri::generate_context!());
    let built = match built {
        Ok(b) => b,
        Err(e) => {
            eprintln!("kairos: cannot start the desktop app: {e}");
            std::process::exit(1);
        }
    };
    built.run(|_, e| {
        // No window left is not a reason to stop reminding; only "Quit"
        // (an explicit exit code) is.
        if let RunEvent::ExitRequested {
            api, code: None, ..
        } = e
        {
            api.prevent_exit();
        }
    });
}
