//! The main window's life. Closing it **destroys** it, and WebKit's web
//! process with it (half the app's memory: 180 → 92 MB PSS, see
//! docs/benchmarks.md), then its network process (`network_process`);
//! the engine, the tray and notifications live on in this process, and the
//! window is made again when it is wanted (tray "Open", a notification's
//! "Open", a second launch, a reminder with no notification service).
//!
//! What the shell wants the UI to show (the reminder panel, an event) is an
//! [`Intent`]. A fresh window's UI cannot hear events until its listeners are
//! registered, so intents wait in [`Windows`] until the UI calls `ui_ready`.

use std::sync::{Mutex, MutexGuard};

use kairos_app::api::{EventRef, events};
use tauri::{AppHandle, Emitter, Manager, WebviewWindowBuilder};

const MAIN: &str = "main";

/// Something the UI should show.
#[derive(Debug, Clone)]
pub enum Intent {
    /// The reminder panel.
    ShowReminders,
    /// An event in the editor (a notification's "Open": XDG notifier only).
    #[cfg_attr(not(all(unix, not(target_os = "macos"))), allow(dead_code))]
    OpenEvent(EventRef),
}

/// Whether the current window's UI listens, and what waits until it does.
#[derive(Default)]
pub struct Windows {
    state: Mutex<UiState>,
}

#[derive(Default)]
struct UiState {
    listening: bool,
    pending: Vec<Intent>,
}

impl Windows {
    fn lock(&self) -> MutexGuard<'_, UiState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Brings the main window forward (making it if it was closed), then
    /// shows `intent` in it now or as soon as its UI listens.
    pub fn show(&self, handle: &AppHandle, intent: Option<Intent>) {
        if let Some(w) = handle.get_webview_window(MAIN) {
            let _ = w.show();
            let _ = w.unminimize();
            let _ = w.set_focus();
        } else {
            self.lock().listening = false;
            if let Err(e) = create(handle) {
                eprintln!("kairos: cannot open the window: {e}");
                return;
            }
        }
        let Some(intent) = intent else { return };
        let mut st = self.lock();
        if st.listening {
            drop(st);
            emit(handle, &intent);
        } else {
            st.pending.push(intent);
        }
    }

    /// The UI registered its listeners: deliver what waited.
    pub fn ui_ready(&self, handle: &AppHandle) {
        let pending = {
            let mut st = self.lock();
            st.listening = true;
            std::mem::take(&mut st.pending)
        };
        for i in &pending {
            emit(handle, i);
        }
    }

    /// The window was destroyed: nobody listens until the next one is ready.
    pub fn closed(&self) {
        self.lock().listening = false;
    }
}

fn emit(handle: &AppHandle, intent: &Intent) {
    let _ = match intent {
        Intent::ShowReminders => handle.emit(events::SHOW_REMINDERS, ()),
        Intent::OpenEvent(r) => handle.emit(events::OPEN_EVENT, r.clone()),
    };
}

/// Makes the main window from its entry in `tauri.conf.json` (which has
/// `"create": false`: this is the only place windows are made).
///
/// # Errors
/// No window in the configuration, or Tauri failed to make it.
pub fn create(handle: &AppHandle) -> tauri::Result<()> {
    let config = handle
        .config()
        .app
        .windows
        .iter()
        .find(|w| w.label == MAIN)
        .cloned()
        .ok_or_else(|| tauri::Error::WindowNotFound)?;
    let w = WebviewWindowBuilder::from_config(handle, &config)?.build()?;
    software_rendering(&w);
    Ok(())
}

/// WebKitGTK composites with OpenGL by default. A calendar gains nothing
/// from it, and where there is no GPU (Mesa's llvmpipe) it costs ≈ 80 MB
/// and seconds of CPU per first paint. `KAIROS_WEBVIEW_GPU=1` keeps
/// WebKit's default.
#[cfg(target_os = "linux")]
fn software_rendering(w: &tauri::WebviewWindow) {
    if std::env::var_os("KAIROS_WEBVIEW_GPU").is_some_and(|v| v == "1") {
        return;
    }
    let _ = w.with_webview(|pw| {
        use webkit2gtk::{HardwareAccelerationPolicy, SettingsExt, WebViewExt};
        if let Some(settings) = pw.inner().settings() {
            settings.set_hardware_acceleration_policy(HardwareAccelerationPolicy::Never);
        }
    });
}

#[cfg(not(target_os = "linux"))]
fn software_rendering(_: &tauri::WebviewWindow) {}
