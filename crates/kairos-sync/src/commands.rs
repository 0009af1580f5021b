//! The one-shot commands behind `kairos sync …`: join, pair, status, now,
//! devices, revoke, leave; and [`push_outbox`] for a `dismiss`/`snooze`
//! made while no daemon runs.

use std::time::Duration;

use chrono::{DateTime, Utc};
use kairos_engine::sync::{self as esync, Identity, keys};
use kairos_proto::{ClientMsg, DeviceInfo, ServerMsg};
use kairos_store::Store;
use serde_json::json;

use crate::SyncError;
use crate::conn::{self, Tls};
use crate::session::{ANSWER, Applier, Session, cursor, note_error};

fn identity(store: &Store) -> Result<Identity, SyncError> {
    esync::identity(store)?.ok_or(SyncError::NotPaired)
}

/// Percent-encodes a device name for the join URL's query.
fn query_value(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `kairos sync join URL CODE`: pairs the database with the account the
/// one-time code belongs to, and records a `put` of everything it keeps.
/// Returns the identity.
///
/// # Errors
/// A used, expired or wrong code ([`SyncError::Refused`] with the server's
/// reason); the server cannot be reached; store failures.
pub async fn join(
    store: &mut Store,
    server: &str,
    code: &str,
    name: &str,
    tls: &Tls,
    now: DateTime<Utc>,
) -> Result<Identity, SyncError> {
    let url = conn::url(server, &format!("/v1/join?name={}", query_value(name)))?;
    let mut ws = conn::connect(&url, &format!("Pairing {}", code.trim()), tls).await?;
    let msg = conn::recv(&mut ws, ANSWER).await?;
    conn::close(&mut ws).await;
    let ServerMsg::Joined {
        account,
        device,
        token,
    } = msg
    else {
        return Err(SyncError::Protocol(format!("expected joined, got {msg:?}")));
    };
    let id = Identity {
        server: server.trim_end_matches('/').to_owned(),
        account,
        device,
        token,
    };
    esync::join(store, &id, now)?;
    Ok(id)
}

/// Opens a session on a paired database.
async fn session(store: &Store, tls: &Tls) -> Result<Session, SyncError> {
    Session::open(store, &identity(store)?, tls).await
}

/// `kairos sync pair`: a new one-time code for this account.
///
/// # Errors
/// Not paired; the server's refusal; network failures.
pub async fn pair(store: &Store, tls: &Tls) -> Result<(String, DateTime<Utc>), SyncError> {
    let mut s = session(store, tls).await?;
    let answer = s.request(&ClientMsg::Pair).await?;
    conn::close(&mut s.ws).await;
    match answer {
        ServerMsg::Code { code, expires_at } => Ok((code, expires_at)),
        other => Err(SyncError::Protocol(format!("expected code, got {other:?}"))),
    }
}

/// `kairos sync devices`: the account's devices.
///
/// # Errors
/// As [`pair`].
pub async fn devices(store: &Store, tls: &Tls) -> Result<Vec<DeviceInfo>, SyncError> {
    let mut s = session(store, tls).await?;
    let answer = s.request(&ClientMsg::Devices).await?;
    conn::close(&mut s.ws).await;
    match answer {
        ServerMsg::DeviceList { devices } => Ok(devices),
        other => Err(SyncError::Protocol(format!(
            "expected device_list, got {other:?}"
        ))),
    }
}

/// `kairos sync revoke DEVICE`: that device's token stops working and its
/// open connection is closed.
///
/// # Errors
/// As [`pair`]; an unknown device.
pub async fn revoke(store: &Store, device: &str, tls: &Tls) -> Result<(), SyncError> {
    let mut s = session(store, tls).await?;
    let answer = s
        .request(&ClientMsg::Revoke {
            device: device.to_owned(),
        })
        .await?;
    conn::close(&mut s.ws).await;
    match answer {
        ServerMsg::Revoked { .. } => Ok(()),
        other => Err(SyncError::Protocol(format!(
            "expected revoked, got {other:?}"
        ))),
    }
}

/// `kairos sync leave`: revokes this device on the server (when it can be
/// reached; `force` leaves locally anyway) and forgets the account. Events
/// and reminders stay.
///
/// # Errors
/// The server cannot be reached and `force` is off; store failures.
pub async fn leave(store: &mut Store, tls: &Tls, force: bool) -> Result<(), SyncError> {
    let id = identity(store)?;
    match revoke(store, &id.device, tls).await {
        Ok(()) => {}
        // Already revoked (elsewhere): nothing left to tell the server.
        Err(SyncError::Refused { status: 401, .. }) => {}
        Err(e) if !force => return Err(e),
        Err(_) => {}
    }
    esync::leave(store)?;
    Ok(())
}

/// `kairos sync now`: pull everything after the cursor, push the outbox,
/// close. Returns (pushed, pulled). A server that closes the session for
/// going over its rate limit (4429: a server configured below this
/// client's pacing) is given a second and asked again, up to
/// [`RATE_LIMIT_RETRIES`] times; what was confirmed stays confirmed.
///
/// # Errors
/// As [`pair`]; recorded for `kairos sync status` too.
pub async fn now(
    store: &mut Store,
    applier: &Applier,
    tls: &Tls,
) -> Result<(usize, usize), SyncError> {
    let (mut pushed, mut pulled) = (0, 0);
    let mut tries = 0;
    let result = loop {
        let round: Result<(), SyncError> = async {
            let mut s = session(store, tls).await?;
            let mut sink = |_| {};
            let got = s.catch_up(store, applier, &mut sink).await;
            pulled += got.as_ref().copied().unwrap_or(0);
            got?;
            let sent = s.push_outbox(store, applier, &mut sink, &mut pushed).await;
            sent?;
            conn::close(&mut s.ws).await;
            Ok(())
        }
        .await;
        match round {
            Err(e) if e.is_rate_limited() && tries < RATE_LIMIT_RETRIES => {
                tries += 1;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            other => break other.map(|()| (pushed, pulled)),
        }
    };
    finish(store, applier, &result);
    result
}

/// How many times [`now`] starts again after a rate-limit close.
pub const RATE_LIMIT_RETRIES: u32 = 30;

/// Pushes the outbox in a short session, no catch-up wait beyond what the
/// server sends first (a `dismiss` with no daemon running). Returns how
/// many ops went.
///
/// # Errors
/// As [`now`].
pub async fn push_outbox(
    store: &mut Store,
    applier: &Applier,
    tls: &Tls,
    wait: Duration,
) -> Result<usize, SyncError> {
    tokio::time::timeout(wait, now(store, applier, tls))
        .await
        .unwrap_or(Err(SyncError::Timeout(wait.as_secs())))
        .map(|(pushed, _)| pushed)
}

fn finish<T>(store: &mut Store, applier: &Applier, result: &Result<T, SyncError>) {
    let now = applier.clock.now();
    match result {
        Ok(_) => {
            let _ = store.meta_set(keys::LAST_SYNC_AT, &now.to_rfc3339());
        }
        Err(e) => note_error(store, e, now),
    }
}

/// What `kairos sync status` prints.
#[derive(Debug, Clone)]
pub struct Status {
    /// The status as JSON.
    pub json: serde_json::Value,
}

/// `kairos sync status`: identity, connection, cursor, outbox, last error.
/// `connected` says whether a daemon on this database holds a live
/// session now.
///
/// # Errors
/// Store failures.
pub fn status(store: &Store, daemon_running: bool) -> Result<Status, SyncError> {
    let id = esync::identity(store)?;
    let get = |k| store.meta_get(k);
    let connected = daemon_running && get(keys::CONNECTED)?.as_deref() == Some("1");
    Ok(Status {
        json: json!({
            "paired": id.is_some(),
            "server": id.as_ref().map(|i| &i.server),
            "account": id.as_ref().map(|i| &i.account),
            "device": id.as_ref().map(|i| &i.device),
            "connected": connected,
            "last_sequence": cursor(store)?,
            "outbox": store.read(|r| r.outbox_len())?,
            "snapshot": get(keys::SNAPSHOT)?.as_deref() == Some("1"),
            "last_sync_at": get(keys::LAST_SYNC_AT)?,
            "last_error": get(keys::LAST_ERROR)?,
            "last_error_at": get(keys::LAST_ERROR_AT)?,
        }),
    })
}
