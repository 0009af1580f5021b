//! The tray: keeps Kairos (and its reminders) running with the window
//! closed. Menu: open, the next reminders, pause pop-ups for an hour or
//! until tomorrow (do-not-disturb), resume, quit. How sync is doing
//! (synced at, offline since, error, changes waiting) is a line of the menu
//! and the tooltip (which Linux's AppIndicator does not show).

use std::sync::Arc;

use chrono::{DateTime, Local};
use kairos_app::api::{AppStatus, Pause};
use tauri::menu::{Menu, MenuItem, PredefinedMenuItem, Submenu};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Manager, Wry};

use crate::state::Shared;

const TRAY: &str = "kairos";

fn local(t: &str) -> String {
    DateTime::parse_from_rfc3339(t)
        .map(|t| t.with_timezone(&Local).format("%a %H:%M").to_string())
        .unwrap_or_else(|_| t.to_owned())
}

fn menu(h: &AppHandle, st: Option<&AppStatus>, sync: Option<&str>) -> tauri::Result<Menu<Wry>> {
    let open = MenuItem::with_id(h, "open", "Open Kairos", true, None::<&str>)?;
    let reminders = MenuItem::with_id(h, "reminders", "Reminders…", true, None::<&str>)?;
    let next = Submenu::with_id(h, "next", "Next reminders", true)?;
    match st.map(|s| s.next.as_slice()) {
        Some(list) if !list.is_empty() => {
            for r in list {
                let label = format!("{}  {}", local(&r.trigger), r.title);
                next.append(&MenuItem::new(h, label, false, None::<&str>)?)?;
            }
        }
        _ => next.append(&MenuItem::new(h, "None scheduled", false, None::<&str>)?)?,
    }
    let paused = st.and_then(|s| s.paused_until.as_deref());
    let status = MenuItem::with_id(
        h,
        "status",
        paused.map_or_else(
            || "Reminders on".to_owned(),
            |p| format!("Paused until {}", local(p)),
        ),
        false,
        None::<&str>,
    )?;
    let hour = MenuItem::with_id(h, "pause-hour", "Pause for 1 hour", true, None::<&str>)?;
    let tomorrow = MenuItem::with_id(
        h,
        "pause-tomorrow",
        "Pause until tomorrow",
        true,
        None::<&str>,
    )?;
    let resume = MenuItem::with_id(
        h,
        "resume",
        "Resume reminders",
        paused.is_some(),
        None::<&str>,
    )?;
    let quit = MenuItem::with_id(h, "quit", "Quit Kairos", true, None::<&str>)?;
    let sep = || PredefinedMenuItem::separator(h);
    let m = Menu::with_items(
        h,
        &[
            &open,
            &reminders,
            &next,
            &sep()?,
            &status,
            &hour,
            &tomorrow,
            &resume,
            &sep()?,
        ],
    )?;
    if let Some(line) = sync {
        m.append(&MenuItem::with_id(h, "sync", line, false, None::<&str>)?)?;
        m.append(&sep()?)?;
    }
    m.append(&quit)?;
    Ok(m)
}

/// Creates the tray icon.
///
/// # Errors
/// The desktop has no tray (the app still runs; the window stays the way in).
pub fn create(h: &AppHandle) -> tauri::Result<()> {
    let icon = tauri::image::Image::from_bytes(include_bytes!("../../icons/tray.png"))?;
    TrayIconBuilder::with_id(TRAY)
        .icon(icon)
        .tooltip("Kairos")
        .menu(&menu(h, None, None)?)
        .on_menu_event(|h, e| {
            let Some(s) = h.try_state::<Arc<Shared>>().map(|s| Arc::clone(&s)) else {
                return;
            };
            match e.id.as_ref() {
                "open" => s.show_main(None),
                "reminders" => {
                    s.show_main(Some(crate::window::Intent::ShowReminders));
                }
                "pause-hour" => pause(&s, Pause::Hour),
                "pause-tomorrow" => pause(&s, Pause::UntilTomorrow),
                "resume" => pause(&s, Pause::Off),
                "quit" => h.exit(0),
                _ => {}
            }
        })
        .build(h)?;
    Ok(())
}

fn pause(s: &Arc<Shared>, p: Pause) {
    let now = s.now();
    if let Err(e) = s.lock().pause_reminders(p, now) {
        eprintln!("kairos: pause: {}", e.message);
    }
    // The delivery policy, the UI and the menu, by the one path.
    s.reminders_changed();
}

/// Rebuilds the menu from the current status (next reminders, pause) and
/// sets the tooltip (sync).
pub fn refresh(s: &Arc<Shared>) {
    let now = s.now();
    let (st, line, tip) = {
        let app = s.lock();
        (
            app.app_status(now).ok(),
            app.tray_sync_line(now),
            app.tray_tooltip(now),
        )
    };
    let h = s.handle.clone();
    let _ = s.handle.run_on_main_thread(move || {
        if let Some(tray) = h.tray_by_id(TRAY) {
            if let Ok(m) = menu(&h, st.as_ref(), line.as_deref()) {
                let _ = tray.set_menu(Some(m));
            }
            let _ = tray.set_tooltip(Some(tip));
        }
    });
}
