//! The CalDAV account commands beyond adding and removing one ("Edit
//! account", "Refresh list"): each a call of the [`kairos_app::CaldavAccounts`]
//! method of the same purpose on the blocking pool, without the app's lock
//! (they wait on the server).

use kairos_app::api::{CaldavAccountView, CaldavEditRequest};

use crate::commands::{S, caldav_call, feeds_changed};

/// Changes an account (interval, calendars chosen, password); waking the
/// host makes its CalDAV loop take the change at once.
#[tauri::command(rename_all = "snake_case")]
pub async fn edit_caldav_account(
    s: S<'_>,
    request: CaldavEditRequest,
) -> Result<CaldavAccountView, kairos_app::api::ApiError> {
    let edited = caldav_call(&s, move |c, now| c.edit(&request, now)).await?;
    feeds_changed(&s);
    Ok(edited)
}

/// Fetches an account's calendar list again (new ones listed, unchosen).
#[tauri::command(rename_all = "snake_case")]
pub async fn refresh_caldav_account(
    s: S<'_>,
    id: i64,
) -> Result<CaldavAccountView, kairos_app::api::ApiError> {
    caldav_call(&s, move |c, _| c.refresh(id)).await
}
