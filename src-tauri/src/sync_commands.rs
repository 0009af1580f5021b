//! Settings → Sync's commands: each runs on the blocking pool with a handle
//! of its own ([`crate::commands::unlocked`]), so a slow server never holds
//! the app's lock.

use kairos_app::SyncAccounts;
use kairos_app::api::{DeviceView, JoinRequest, PairingCode, SyncAccount};

use crate::commands::{R, S, unlocked};

/// A Settings → Sync request (see [`unlocked`]).
async fn sync_call<T: Send + 'static>(
    s: &S<'_>,
    f: impl FnOnce(&SyncAccounts, chrono::DateTime<chrono::Utc>) -> R<T> + Send + 'static,
) -> R<T> {
    unlocked(s, kairos_app::App::sync_accounts, f).await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn sync_account(s: S<'_>) -> R<SyncAccount> {
    sync_call(&s, |a, _| a.account()).await
}

/// Joins; the host starts the live connection at once.
#[tauri::command(rename_all = "snake_case")]
pub async fn sync_join(s: S<'_>, request: JoinRequest) -> R<SyncAccount> {
    let joined = sync_call(&s, move |a, now| a.join(&request, now)).await?;
    s.wake.account_changed();
    Ok(joined)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn sync_pair(s: S<'_>) -> R<PairingCode> {
    sync_call(&s, |a, _| a.pair()).await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn sync_devices(s: S<'_>) -> R<Vec<DeviceView>> {
    sync_call(&s, |a, _| a.devices()).await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn sync_revoke(s: S<'_>, device: String) -> R<()> {
    sync_call(&s, move |a, _| a.revoke(&device)).await
}

/// Leaves; the host stops the live connection.
#[tauri::command(rename_all = "snake_case")]
pub async fn sync_leave(s: S<'_>, force: bool) -> R<SyncAccount> {
    let left = sync_call(&s, move |a, _| a.leave(force)).await?;
    s.wake.account_changed();
    Ok(left)
}
