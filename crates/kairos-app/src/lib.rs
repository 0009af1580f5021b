//! What the Kairos desktop app *does*, without the desktop: the IPC contract
//! ([`api`]), and the service behind every command ([`App`]) — calendars,
//! event editing with "this / this and following / all", the views' window
//! queries, the reminder window's list, snooze and dismiss (everywhere or here only), settings; and the
//! notification ids that let a restarted app replace, not repeat, what it
//! showed ([`shown`]); and Settings → Sync ([`SyncAccounts`]: join, pair
//! with a QR code, devices, revoke, leave; failures as stable error kinds);
//! and ICS subscriptions ([`Feeds`]: add from a URL, list with the last
//! refresh and error, refresh now, remove); and CalDAV accounts
//! ([`CaldavAccounts`]: discover, add with the calendars chosen, list with
//! the background sync's state, sync now, remove).
//!
//! It knows no Tauri, no webview and no D-Bus: `src-tauri` wraps each method
//! of [`App`] in a `#[tauri::command]` of the same name and does nothing
//! else, so everything here is tested on a real SQLite file without a window.
//! Errors cross IPC as [`api::ApiError`] `{kind, message}`.
//!
//! ```
//! use kairos_app::{App, api::RangeQuery};
//! let dir = tempfile::tempdir().unwrap();
//! let now = "2026-03-09T08:00:00Z".parse().unwrap();
//! let mut app = App::open(&dir.path().join("k.db"), "Europe/Berlin", now).unwrap();
//! let cal = app.list_calendars().unwrap()[0].id;
//! let mut draft = app.new_draft(cal, "2026-03-10T09:00", now).unwrap();
//! draft.title = "Dentist".into();
//! app.save_event(kairos_app::api::SaveEvent { event: None, scope: kairos_app::api::Scope::All, draft }, now).unwrap();
//! let week = app.occurrences(&RangeQuery { from: "2026-03-09T00:00".into(), to: "2026-03-16T00:00".into(), per_day: None }).unwrap();
//! assert_eq!(week.items[0].start, "2026-03-10T09:00:00");
//! ```

pub mod api;
pub mod caldav;
mod caldav_edit;
mod caldav_errors;
mod calendars;
mod chunks;
mod convert;
mod edit;
mod error;
pub mod feeds;
mod files;
mod history;
mod policy;
mod reminders;
mod service;
mod settings;
pub mod shown;
pub mod sync_account;
mod sync_errors;
mod sync_status;
mod task_edit;
mod tasks;
mod views;

pub use caldav::CaldavAccounts;
pub use error::ApiResult;
pub use feeds::Feeds;
pub use policy::DeliveryPolicy;
pub use service::App;
pub use sync_account::SyncAccounts;

/// The IPC commands, declared once: name, argument (name and type) and
/// result. `src-tauri` registers a command of each name; the TypeScript
/// wrappers in `ui/src/ipc/bindings.ts` are generated from this list.
#[macro_export]
#[doc(hidden)]
macro_rules! ipc_commands {
    ($m:ident) => {
        $m! {
            app_status() -> AppStatus;
            get_settings() -> Settings;
            save_settings(settings: Settings) -> Settings;
            list_calendars() -> Vec<CalendarInfo>;
            save_calendar(input: CalendarInput) -> CalendarInfo;
            delete_calendar(id: i64) -> ();
            occurrences(range: RangeQuery) -> Occurrences;
            new_draft(calendar_id: i64, start: String) -> EventDraft;
            get_event(event: EventRef) -> EventDetail;
            save_event(request: SaveEvent) -> EventRef;
            move_event(request: MoveEvent) -> ();
            delete_event(request: DeleteEvent) -> ();
            import_ics(request: ImportIcs) -> ImportSummary;
            export_ics(request: ExportIcs) -> u32;
            shown_reminders() -> Vec<ShownReminder>;
            snooze(request: SnoozeRequest) -> ();
            dismiss(key: String) -> ();
            dismiss_here(key: String) -> ();
            dismiss_all() -> u32;
            pause_reminders(pause: Pause) -> AppStatus;
            time_zones() -> Vec<String>;
            list_tasks() -> Vec<TaskItem>;
            complete_task(event: EventRef) -> ();
            ui_ready() -> ();
            sync_account() -> SyncAccount;
            sync_join(request: JoinRequest) -> SyncAccount;
            sync_pair() -> PairingCode;
            sync_devices() -> Vec<DeviceView>;
            sync_revoke(device: String) -> ();
            sync_leave(force: bool) -> SyncAccount;
            list_subscriptions() -> Vec<SubscriptionView>;
            add_subscription(request: SubscribeRequest) -> SubscriptionView;
            refresh_subscription(calendar_id: i64) -> SubscriptionView;
            remove_subscription(calendar_id: i64) -> ();
            caldav_discover(request: CaldavLogin) -> CaldavDiscovery;
            add_caldav_account(request: CaldavAddRequest) -> CaldavAccountView;
            list_caldav_accounts() -> Vec<CaldavAccountView>;
            sync_caldav_account(id: i64) -> CaldavAccountView;
            remove_caldav_account(id: i64) -> ();
            edit_caldav_account(request: CaldavEditRequest) -> CaldavAccountView;
            refresh_caldav_account(id: i64) -> CaldavAccountView;
        }
    };
}

pub mod bindings;
