//! Settings → Sync: join an account with a pairing code, show it, make a
//! code (with its QR) for another device, list and revoke devices, leave.
//!
//! These talk to the server, so they are not [`crate::App`] methods: the
//! shell runs them on the blocking pool through a [`SyncAccounts`] handle
//! with a store connection of its own, and never holds the app's lock
//! meanwhile (the views and the reminder window stay usable while a server
//! takes its time). Each request ends within [`LIMIT`] whatever the server
//! does. A failure changes nothing stored: a join that is refused records
//! nothing, a leave that cannot reach the server keeps the pairing (unless
//! forced), and events and reminders are never touched.
//!
//! The running host notices a join or leave (the shell tells it through
//! `kairos_host::Waker::account_changed`) and starts or stops its live
//! connection.

use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use kairos_engine::sync::identity;
use kairos_store::Store;
use kairos_sync::{SyncError, Tls};

use crate::api::{ApiError, DeviceView, ErrorKind, JoinRequest, PairingCode, SyncAccount};
use crate::error::ApiResult;
use crate::sync_errors::{Step, api_error};

/// The longest any one sync request takes before it gives up (a server
/// that accepts the connection and never answers): the connection's own
/// 10 s, and a little for the answer.
pub const LIMIT: Duration = Duration::from_secs(12);

/// `meta` key: the name this device joined with in the app (the server
/// keeps it too, but the settings show it without a connection).
const DEVICE_NAME: &str = "app.sync_device_name";

/// Settings → Sync, on one database.
#[derive(Debug, Clone)]
pub struct SyncAccounts {
    db: PathBuf,
}

fn rfc(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Runs one request of the async client here, bounded by [`LIMIT`].
fn run<T>(f: impl Future<Output = Result<T, SyncError>>) -> Result<T, SyncError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| SyncError::Connection {
            url: "server".into(),
            message: format!("cannot start the network runtime: {e}"),
        })?;
    rt.block_on(async {
        tokio::time::timeout(LIMIT, f)
            .await
            .unwrap_or(Err(SyncError::Timeout(LIMIT.as_secs())))
    })
}

/// Percent-encodes a query value.
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

/// The computer's name, for a device name left empty.
fn host_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::env::var("COMPUTERNAME").ok())
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "Kairos desktop".to_owned())
}

/// The server URL as typed: trimmed; a bare `HOST:PORT` is taken as `ws://`.
fn server_url(typed: &str) -> ApiResult<String> {
    let s = typed.trim();
    if s.is_empty() {
        return Err(ApiError::invalid(
            "server: enter the sync server's address, e.g. ws://192.168.1.10:8443",
        ));
    }
    let (scheme, rest) = s.split_once("://").unwrap_or(("ws", s));
    let rest = rest.trim_end_matches('/');
    if rest.is_empty() || rest.contains(char::is_whitespace) {
        return Err(api_error(SyncError::BadUrl(s.to_owned()), Step::Join));
    }
    Ok(format!("{scheme}://{rest}"))
}

impl SyncAccounts {
    /// Settings → Sync on the database at `db`.
    #[must_use]
    pub fn new(db: &Path) -> Self {
        Self { db: db.to_owned() }
    }

    fn store(&self) -> ApiResult<Store> {
        Ok(Store::open(&self.db)?)
    }

    /// The account this database joined, from the database alone.
    ///
    /// # Errors
    /// The database cannot be read.
    pub fn account(&self) -> ApiResult<SyncAccount> {
        account_of(&self.store()?)
    }

    /// Joins the account a one-time code belongs to. Everything the
    /// database keeps is then sent to the account.
    ///
    /// # Errors
    /// A bad URL, code or name (`invalid`, `sync_bad_url`); already paired;
    /// every `sync_*` kind of the server's answer or its silence.
    pub fn join(&self, req: &JoinRequest, now: DateTime<Utc>) -> ApiResult<SyncAccount> {
        let server = server_url(&req.server)?;
        let code = req.code.trim();
        if code.is_empty() {
            return Err(ApiError::invalid(
                "code: enter the pairing code shown on the other device",
            ));
        }
        let typed = req.device_name.trim();
        let name = if typed.is_empty() {
            host_name()
        } else {
            typed.to_owned()
        };
        kairos_proto::ids::check_name("device name", &name).map_err(ApiError::invalid)?;
        let mut store = self.store()?;
        if let Some(id) = identity(&store)? {
            return Err(ApiError {
                kind: ErrorKind::SyncAlreadyPaired,
                message: format!(
                    "this database is already paired with account {} on {}: leave first",
                    id.account, id.server
                ),
            });
        }
        let tls = Tls::stored(&store)?;
        run(kairos_sync::join(
            &mut store, &server, code, &name, &tls, now,
        ))
        .map_err(|e| api_error(e, Step::Join))?;
        store.meta_set(DEVICE_NAME, &name)?;
        account_of(&store)
    }

    /// A new one-time code for another device, with a link and its QR.
    ///
    /// # Errors
    /// Not paired; the server's refusal or silence.
    pub fn pair(&self) -> ApiResult<PairingCode> {
        let store = self.store()?;
        let server = paired(&store)?.server;
        let tls = Tls::stored(&store)?;
        let (code, expires) =
            run(kairos_sync::pair(&store, &tls)).map_err(|e| api_error(e, Step::Session))?;
        let link = format!(
            "kairos://join?server={}&code={}",
            query_value(&server),
            query_value(&code)
        );
        let qr = qrcode::QrCode::new(link.as_bytes())
            .map_err(|e| ApiError::internal(format!("QR code of the pairing link: {e}")))?;
        let qr_svg = qr
            .render::<qrcode::render::svg::Color<'_>>()
            .min_dimensions(220, 220)
            .dark_color(qrcode::render::svg::Color("#000000"))
            .light_color(qrcode::render::svg::Color("#ffffff"))
            .build();
        Ok(PairingCode {
            code,
            expires_at: rfc(expires),
            link,
            qr_svg,
        })
    }

    /// The account's devices: this one first, then by name.
    ///
    /// # Errors
    /// As [`SyncAccounts::pair`].
    pub fn devices(&self) -> ApiResult<Vec<DeviceView>> {
        let store = self.store()?;
        let me = paired(&store)?.device;
        let tls = Tls::stored(&store)?;
        let list =
            run(kairos_sync::devices(&store, &tls)).map_err(|e| api_error(e, Step::Session))?;
        let mut out: Vec<DeviceView> = list
            .into_iter()
            .map(|d| DeviceView {
                this_device: d.device == me,
                device: d.device,
                name: d.name,
                created_at: rfc(d.created_at),
                last_seen: d.last_seen.map(rfc),
                connected: d.connected,
                revoked: d.revoked,
            })
            .collect();
        out.sort_by(|a, b| {
            (!a.this_device, a.revoked, &a.name, &a.device).cmp(&(
                !b.this_device,
                b.revoked,
                &b.name,
                &b.device,
            ))
        });
        Ok(out)
    }

    /// Revokes another device: its token stops working at once.
    ///
    /// # Errors
    /// This device (use [`SyncAccounts::leave`]); an unknown device; as
    /// [`SyncAccounts::pair`].
    pub fn revoke(&self, device: &str) -> ApiResult<()> {
        let store = self.store()?;
        if paired(&store)?.device == device {
            return Err(ApiError::invalid(
                "device: this is this device; use Leave to take it off the account",
            ));
        }
        let tls = Tls::stored(&store)?;
        run(kairos_sync::revoke(&store, device, &tls)).map_err(|e| api_error(e, Step::Session))
    }

    /// Leaves the account: the server is told (this device is revoked) and
    /// the pairing is forgotten; events and reminders stay. With `force`,
    /// leaves even when the server cannot be reached.
    ///
    /// # Errors
    /// Not paired; the server cannot be reached and `force` is off (nothing
    /// changed then).
    pub fn leave(&self, force: bool) -> ApiResult<SyncAccount> {
        let mut store = self.store()?;
        paired(&store)?;
        let tls = Tls::stored(&store)?;
        run(kairos_sync::leave(&mut store, &tls, force))
            .map_err(|e| api_error(e, Step::Session))?;
        store.write(|tx| tx.meta_delete(DEVICE_NAME))?;
        account_of(&store)
    }
}

fn paired(store: &Store) -> ApiResult<kairos_engine::sync::Identity> {
    identity(store)?.ok_or_else(|| api_error(SyncError::NotPaired, Step::Session))
}

fn account_of(store: &Store) -> ApiResult<SyncAccount> {
    let id = identity(store)?;
    Ok(SyncAccount {
        paired: id.is_some(),
        device_name: match id {
            Some(_) => store.meta_get(DEVICE_NAME)?,
            None => None,
        },
        server: id.as_ref().map(|i| i.server.clone()),
        account: id.as_ref().map(|i| i.account.clone()),
        device: id.map(|i| i.device),
    })
}
