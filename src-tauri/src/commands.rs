//! One `#[tauri::command]` per entry of `kairos_app::ipc_commands!`, each a
//! call of the [`kairos_app::App`] method of the same name on the blocking
//! pool. Arguments keep their snake_case names (as the generated TypeScript
//! sends them). Nothing here decides anything.

use std::sync::Arc;

use kairos_app::api::{
    ApiError, AppStatus, CaldavAccountView, CaldavAddRequest, CaldavDiscovery, CaldavLogin,
    CalendarInfo, CalendarInput, DeleteEvent, EventDetail, EventDraft, EventRef, ExportIcs,
    ImportIcs, ImportSummary, MoveEvent, Occurrences, Pause, RangeQuery, SaveEvent, Settings,
    ShownReminder, SnoozeRequest, SubscribeRequest, SubscriptionView, TaskItem, events,
};
use kairos_app::{CaldavAccounts, Feeds};
use tauri::{Emitter, State};
use tauri_plugin_autostart::ManagerExt;

use crate::state::Shared;

pub(crate) type S<'a> = State<'a, Arc<Shared>>;
pub(crate) type R<T> = Result<T, ApiError>;

#[tauri::command(rename_all = "snake_case")]
pub async fn app_status(s: S<'_>) -> R<AppStatus> {
    s.call(|a, now| a.app_status(now)).await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn get_settings(s: S<'_>) -> R<Settings> {
    s.call(|a, _| a.get_settings()).await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn save_settings(s: S<'_>, settings: Settings) -> R<Settings> {
    let login = settings.start_at_login;
    let saved = s.call(move |a, now| a.save_settings(settings, now)).await?;
    // A new display zone moves the pending reminders of floating events:
    // the engine re-plans its wake-up and sync pushes the moves.
    s.reminders_changed();
    let auto = s.handle.autolaunch();
    let res = if login { auto.enable() } else { auto.disable() };
    if let Err(e) = res.or_else(|e| if login { Err(e) } else { Ok(()) }) {
        return Err(ApiError::io(format!("start at login: {e}")));
    }
    Ok(saved)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn list_calendars(s: S<'_>) -> R<Vec<CalendarInfo>> {
    s.call(|a, _| a.list_calendars()).await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn save_calendar(s: S<'_>, input: CalendarInput) -> R<CalendarInfo> {
    let saved = s.call(move |a, now| a.save_calendar(input, now)).await?;
    // A new working week or holiday flag moves working-day reminders.
    s.reminders_changed();
    Ok(saved)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn delete_calendar(s: S<'_>, id: i64) -> R<()> {
    s.call(move |a, now| a.delete_calendar(id, now)).await?;
    s.reminders_changed();
    Ok(())
}

#[tauri::command(rename_all = "snake_case")]
pub async fn occurrences(s: S<'_>, range: RangeQuery) -> R<Occurrences> {
    let r = s.call(move |a, _| a.occurrences(&range)).await;
    crate::startup::first_view_served();
    r
}

#[tauri::command(rename_all = "snake_case")]
pub async fn new_draft(s: S<'_>, calendar_id: i64, start: String) -> R<EventDraft> {
    s.call(move |a, now| a.new_draft(calendar_id, &start, now))
        .await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn get_event(s: S<'_>, event: EventRef) -> R<EventDetail> {
    s.call(move |a, _| a.get_event(&event)).await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn save_event(s: S<'_>, request: SaveEvent) -> R<EventRef> {
    let r = s.call(move |a, now| a.save_event(request, now)).await?;
    s.reminders_changed();
    Ok(r)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn move_event(s: S<'_>, request: MoveEvent) -> R<()> {
    s.call(move |a, now| a.move_event(&request, now)).await?;
    s.reminders_changed();
    Ok(())
}

#[tauri::command(rename_all = "snake_case")]
pub async fn delete_event(s: S<'_>, request: DeleteEvent) -> R<()> {
    s.call(move |a, now| a.delete_event(&request, now)).await?;
    s.reminders_changed();
    Ok(())
}

#[tauri::command(rename_all = "snake_case")]
pub async fn import_ics(s: S<'_>, request: ImportIcs) -> R<ImportSummary> {
    let r = s.call(move |a, now| a.import_ics(&request, now)).await?;
    s.reminders_changed();
    let _ = s.handle.emit(events::DATA_CHANGED, ());
    Ok(r)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn export_ics(s: S<'_>, request: ExportIcs) -> R<u32> {
    s.call(move |a, now| a.export_ics(&request, now)).await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn shown_reminders(s: S<'_>) -> R<Vec<ShownReminder>> {
    s.call(|a, now| a.shown_reminders(now)).await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn snooze(s: S<'_>, request: SnoozeRequest) -> R<()> {
    s.call(move |a, now| a.snooze(&request, now)).await?;
    s.reminders_changed();
    Ok(())
}

#[tauri::command(rename_all = "snake_case")]
pub async fn dismiss(s: S<'_>, key: String) -> R<()> {
    s.call(move |a, now| a.dismiss(&key, now)).await?;
    s.reminders_changed();
    Ok(())
}

/// "Dismiss here only": acknowledged on this device, not synced.
#[tauri::command(rename_all = "snake_case")]
pub async fn dismiss_here(s: S<'_>, key: String) -> R<()> {
    s.call(move |a, now| a.dismiss_here(&key, now)).await?;
    s.reminders_changed();
    Ok(())
}

#[tauri::command(rename_all = "snake_case")]
pub async fn dismiss_all(s: S<'_>) -> R<u32> {
    let n = s.call(|a, now| a.dismiss_all(now)).await?;
    s.reminders_changed();
    Ok(n)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn pause_reminders(s: S<'_>, pause: Pause) -> R<AppStatus> {
    let st = s.call(move |a, now| a.pause_reminders(pause, now)).await?;
    s.reminders_changed();
    Ok(st)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn time_zones(s: S<'_>) -> R<Vec<String>> {
    s.call(|a, _| a.time_zones()).await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn list_tasks(s: S<'_>) -> R<Vec<TaskItem>> {
    s.call(|a, now| a.list_tasks(now)).await
}

/// Ticks a task off; a notification of it on screen is closed.
#[tauri::command(rename_all = "snake_case")]
pub async fn complete_task(s: S<'_>, event: EventRef) -> R<()> {
    s.call(move |a, now| a.complete_task(&event, now)).await?;
    s.reminders_changed();
    Ok(())
}

/// The UI registered its event listeners: what the shell wanted shown
/// while it loaded (the reminder panel, an event) comes now.
#[tauri::command(rename_all = "snake_case")]
pub async fn ui_ready(s: S<'_>) -> R<()> {
    s.windows.ui_ready(&s.handle);
    Ok(())
}

/// Runs a request that may wait on the network (Settings → Sync, up to
/// `kairos_app::sync_account::LIMIT`; a feed's fetch, bounded by the feed
/// limits) on the blocking pool, with a handle that has its own store
/// connection: the app's lock is held only to make the handle, so the UI
/// stays usable meanwhile.
pub(crate) async fn unlocked<H: 'static, T: Send + 'static>(
    s: &S<'_>,
    handle: fn(&kairos_app::App) -> H,
    f: impl FnOnce(&H, chrono::DateTime<chrono::Utc>) -> R<T> + Send + 'static,
) -> R<T> {
    let me = Arc::clone(s);
    tauri::async_runtime::spawn_blocking(move || {
        // The lock only for the path (it may wait for an import).
        let h = handle(&me.lock());
        f(&h, me.now())
    })
    .await
    .map_err(|e| ApiError::internal(format!("command failed: {e}")))?
}

/// A subscription request (see [`unlocked`]).
async fn feed_call<T: Send + 'static>(
    s: &S<'_>,
    f: impl FnOnce(&Feeds, chrono::DateTime<chrono::Utc>) -> R<T> + Send + 'static,
) -> R<T> {
    unlocked(s, kairos_app::App::feeds, f).await
}

/// After a subscription changed calendars: the engine re-plans, sync
/// pushes, the feeds' loop looks again, and the views reload.
pub(crate) fn feeds_changed(s: &S<'_>) {
    s.reminders_changed();
    let _ = s.handle.emit(events::DATA_CHANGED, ());
}

#[tauri::command(rename_all = "snake_case")]
pub async fn list_subscriptions(s: S<'_>) -> R<Vec<SubscriptionView>> {
    feed_call(&s, |f, _| f.list()).await
}

/// Fetches at once; a failure stores nothing.
#[tauri::command(rename_all = "snake_case")]
pub async fn add_subscription(s: S<'_>, request: SubscribeRequest) -> R<SubscriptionView> {
    let sub = feed_call(&s, move |f, now| f.add(&request, now)).await?;
    feeds_changed(&s);
    Ok(sub)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn refresh_subscription(s: S<'_>, calendar_id: i64) -> R<SubscriptionView> {
    let sub = feed_call(&s, move |f, now| f.refresh(calendar_id, now)).await?;
    feeds_changed(&s);
    Ok(sub)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn remove_subscription(s: S<'_>, calendar_id: i64) -> R<()> {
    feed_call(&s, move |f, now| f.remove(calendar_id, now)).await?;
    feeds_changed(&s);
    Ok(())
}

/// A CalDAV account request (see [`unlocked`]; each of its requests is
/// bounded by kairos-caldav's timeout).
pub(crate) async fn caldav_call<T: Send + 'static>(
    s: &S<'_>,
    f: impl FnOnce(&CaldavAccounts, chrono::DateTime<chrono::Utc>) -> R<T> + Send + 'static,
) -> R<T> {
    unlocked(s, kairos_app::App::caldav, f).await
}

/// Signs in and lists the calendars; stores nothing.
#[tauri::command(rename_all = "snake_case")]
pub async fn caldav_discover(s: S<'_>, request: CaldavLogin) -> R<CaldavDiscovery> {
    caldav_call(&s, move |c, _| c.discover(&request)).await
}

/// Adds the account; waking the host makes its CalDAV loop run the first
/// sync in the background (a new account is due at once), and its
/// outcome reaches the window as `kairos://data-changed` and the list.
#[tauri::command(rename_all = "snake_case")]
pub async fn add_caldav_account(s: S<'_>, request: CaldavAddRequest) -> R<CaldavAccountView> {
    let added = caldav_call(&s, move |c, now| c.add(&request, now)).await?;
    feeds_changed(&s);
    Ok(added)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn list_caldav_accounts(s: S<'_>) -> R<Vec<CaldavAccountView>> {
    caldav_call(&s, |c, _| c.list()).await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn sync_caldav_account(s: S<'_>, id: i64) -> R<CaldavAccountView> {
    let synced = caldav_call(&s, move |c, now| c.sync_now(id, now)).await?;
    feeds_changed(&s);
    Ok(synced)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn remove_caldav_account(s: S<'_>, id: i64) -> R<()> {
    caldav_call(&s, move |c, _| c.remove(id)).await?;
    feeds_changed(&s);
    Ok(())
}

/// The handler with every command; `kairos_app::bindings::COMMAND_NAMES`
/// lists the same names (checked by the test below).
#[macro_export]
macro_rules! handler {
    () => {
        tauri::generate_handler![
            commands::app_status,
            commands::get_settings,
            commands::save_settings,
            commands::list_calendars,
            commands::save_calendar,
            commands::delete_calendar,
            commands::occurrences,
            commands::new_draft,
            commands::get_event,
            commands::save_event,
            commands::move_event,
            commands::delete_event,
            commands::import_ics,
            commands::export_ics,
            commands::shown_reminders,
            commands::snooze,
            commands::dismiss,
            commands::dismiss_here,
            commands::dismiss_all,
            commands::pause_reminders,
            commands::time_zones,
            commands::list_tasks,
            commands::complete_task,
            commands::ui_ready,
            sync_commands::sync_account,
            sync_commands::sync_join,
            sync_commands::sync_pair,
            sync_commands::sync_devices,
            sync_commands::sync_revoke,
            sync_commands::sync_leave,
            commands::list_subscriptions,
            commands::add_subscription,
            commands::refresh_subscription,
            commands::remove_subscription,
            commands::caldav_discover,
            commands::add_caldav_account,
            commands::list_caldav_accounts,
            commands::sync_caldav_account,
            commands::remove_caldav_account,
            caldav_commands::edit_caldav_account,
            caldav_commands::refresh_caldav_account,
        ]
    };
}

#[cfg(test)]
mod tests {
    /// Every declared command is registered here, and nothing else: the
    /// names in `handler!` (read from this file) equal the declared list.
    #[test]
    fn every_declared_command_is_registered() {
        let src = include_str!("commands.rs");
        let body = &src[src.find("generate_handler![").unwrap_or(0)..];
        let body = &body[..body.find(']').unwrap_or(body.len())];
        let registered: Vec<&str> = body
            .split(',')
            .map(|s| s.trim().rsplit("::").next().unwrap_or(""))
            .filter(|s| !s.is_empty() && !s.starts_with('['))
            .collect();
        assert_eq!(registered, kairos_app::bindings::COMMAND_NAMES);
    }
}
