//! `kairos-server`: the sync server of `docs/sync-protocol.md`. It
//! authenticates devices (tokens from pairing, stored as SHA-256), stores
//! each account's ops with a sequence number in SQLite, de-duplicates them
//! by op id, answers a push once it is durable, catches a connecting device
//! up from its cursor (or sends a snapshot after compaction), and fans new
//! ops out live to the account's other connected devices.
//!
//! How the pieces fit:
//! - [`run`] / [`Server::run`] accept connections until the shutdown future
//!   completes, then close every session with 1001 and wait for them;
//! - `handshake` takes one connection through TLS and the HTTP upgrade,
//!   refusing bad credentials with a 401 before any frame;
//! - `session` is one device's session; `hub` the live fan-out (one
//!   broadcast channel per account, fed after each commit) and the
//!   per-device rate budgets (`rate`);
//! - `store` is the store, SQLite (embedded, the default) or PostgreSQL:
//!   one writer that commits in groups, and reads;
//! - `relay` brings other instances' commits to this instance's sessions
//!   (PostgreSQL): their `NOTIFY` hints, and a periodic check of the heads
//!   of the accounts connected here that repairs a lost hint (and, on
//!   either store, closes the sessions of a deleted account);
//! - `http` answers plain HTTP on the same port (`/healthz`, `/readyz`,
//!   `/metrics`), `metrics` holds what `/metrics` reports.
//!
//! Architecture exception: kairos-store is the only crate that knows the
//! *device* schema; this crate keeps its own, separate SQL store (its schema
//! is in this crate's `migrations/`), behind the `store` module so that
//! another engine can replace it. The wire format, ops and merge rules are
//! kairos-proto's; this crate never merges ops (compaction asks
//! `kairos_proto::survivors` what to keep). It knows nothing of the
//! device's database; what it knows of iCalendar and reminders is in
//! `remind` (server-side reminders for the accounts that opted in), which
//! plans them with kairos-engine's planner, never its own.

mod handshake;
mod http;
mod hub;
pub mod metrics;
mod presence;
mod rate;
mod relay;
pub mod remind;
mod secrets;
mod session;
pub mod store;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::runtime::{Handle, RuntimeFlavor};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;

pub use store::{Database, Store};

/// How long sessions get to close after the shutdown signal.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// The server's settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// The data directory (created 0700; the database in it 0600).
    pub data: PathBuf,
    /// The TLS settings, for `wss://`.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// For TLS and the upgrade, and again for `hello` after the upgrade.
    pub handshake_timeout: Duration,
    /// Compaction keeps each account's newest this many ops (and the ops
    /// that decide the state, however old).
    pub compact_keep: u64,
    /// How long a code from `pair` works.
    pub code_ttl: Duration,
    /// How often the server pings a session; one silent for three intervals
    /// (not even a pong) is closed.
    pub ping_interval: Duration,
    /// Ops a device may push per second (its bucket holds one second's).
    pub ops_per_sec: u32,
    /// A PostgreSQL URL: the store is there (migrated beforehand with
    /// `kairos-server migrate`), shared with any other instances, and
    /// `data` is not used. `None`: SQLite in `data`.
    pub postgres: Option<String>,
    /// With PostgreSQL: send the other instances a hint after each commit.
    /// Off only in tests of the repair.
    pub hints: bool,
    /// How often the accounts connected here are checked: with PostgreSQL
    /// their heads, the bound on how late a lost hint's ops arrive; with
    /// either store whether they still exist (a deleted account's sessions
    /// are closed).
    pub head_check: Duration,
    /// Server-side reminders and their fallback channels (`remind`).
    pub reminders: remind::serve::Settings,
}

impl Config {
    /// The protocol's defaults for `data`.
    #[must_use]
    pub fn new(data: PathBuf) -> Self {
        Self {
            data,
            tls: None,
            handshake_timeout: kairos_proto::HELLO_TIMEOUT,
            compact_keep: 10_000,
            code_ttl: kairos_proto::PAIRING_TTL,
            ping_interval: Duration::from_secs(30),
            ops_per_sec: kairos_proto::RATE_OPS_PER_SEC,
            postgres: None,
            hints: true,
            head_check: Duration::from_millis(500),
            reminders: remind::serve::Settings::default(),
        }
    }

    /// Where the store is.
    #[must_use]
    pub fn database(&self) -> Database {
        match &self.postgres {
            Some(url) => Database::Postgres(url.clone()),
            None => Database::Sqlite(self.data.clone()),
        }
    }
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The store could not be opened.
    #[error(transparent)]
    Store(#[from] store::StoreError),
    /// The reminder task could not start.
    #[error("reminders: {0}")]
    Reminders(String),
    /// The certificate or key could not be read or used.
    #[error("TLS: {0}")]
    Tls(String),
    /// The server needs tokio's multi-thread runtime (the upgrade callback
    /// checks credentials with `block_in_place`).
    #[error("kairos-server needs tokio's multi-thread runtime")]
    Runtime,
}

/// What every connection task shares.
#[derive(Clone)]
pub(crate) struct Ctx {
    pub(crate) config: Arc<Config>,
    pub(crate) store: Store,
    pub(crate) hub: Arc<hub::Hub>,
    pub(crate) tls: Option<TlsAcceptor>,
    pub(crate) metrics: Arc<metrics::Metrics>,
}

/// An opened server, ready to [`Server::run`].
pub struct Server {
    ctx: Ctx,
}

impl Server {
    /// Opens the SQLite store (creating the data directory and database if
    /// needed) and starts its writer thread. A configuration with
    /// `postgres` needs [`Server::connect`].
    ///
    /// # Errors
    /// The store cannot be opened.
    pub fn open(config: Config) -> Result<Self, ServerError> {
        if config.postgres.is_some() {
            return Err(ServerError::Store(store::StoreError::Url(
                "a PostgreSQL store is opened with Server::connect".into(),
            )));
        }
        let hub = Arc::new(hub::Hub::new(config.ops_per_sec));
        let metrics = Arc::default();
        let store = Store::open(&config.data, config.compact_keep, on_commit(&hub, &metrics))?;
        Ok(Self::with(config, store, hub, metrics))
    }

    /// Opens the store of `config`, SQLite or PostgreSQL (whose schema must
    /// be this server's: see `kairos-server migrate`).
    ///
    /// # Errors
    /// The store cannot be opened, or its schema is not this server's.
    pub async fn connect(config: Config) -> Result<Self, ServerError> {
        if config.postgres.is_none() {
            return Self::open(config);
        }
        let hub = Arc::new(hub::Hub::new(config.ops_per_sec));
        let metrics = Arc::default();
        let store = Store::connect(
            &config.database(),
            config.compact_keep,
            config.hints,
            on_commit(&hub, &metrics),
        )
        .await?;
        Ok(Self::with(config, store, hub, metrics))
    }

    fn with(
        config: Config,
        store: Store,
        hub: Arc<hub::Hub>,
        metrics: Arc<metrics::Metrics>,
    ) -> Self {
        let tls = config.tls.clone().map(TlsAcceptor::from);
        Self {
            ctx: Ctx {
                config: Arc::new(config),
                store,
                hub,
                tls,
                metrics,
            },
        }
    }

    /// Accepts connections on `listener` until `shutdown` completes, then
    /// closes every session with 1001, waits for them (at most 5 s), and
    /// stops the store after its last commit.
    ///
    /// # Errors
    /// Not on tokio's multi-thread runtime.
    pub async fn run(
        self,
        listener: TcpListener,
        shutdown: impl Future,
    ) -> Result<(), ServerError> {
        if Handle::current().runtime_flavor() != RuntimeFlavor::MultiThread {
            return Err(ServerError::Runtime);
        }
        let (stop_tx, stop_rx) = watch::channel(false);
        let relay = relay::start(&self.ctx);
        let presence = presence::start(&self.ctx);
        let reminders = remind::serve::start(
            &self.ctx.config.reminders,
            &self.ctx.config.database(),
            Arc::clone(&self.ctx.metrics),
        )
        .await
        .map_err(ServerError::Reminders)?;
        let mut tasks = JoinSet::new();
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                () = async { (&mut shutdown).await; } => break,
                accepted = listener.accept() => match accepted {
                    Ok((tcp, peer)) => {
                        let (ctx, stop) = (self.ctx.clone(), stop_rx.clone());
                        if let Some(tls) = ctx.tls.clone() {
                            tasks.spawn(handshake::serve_tls(ctx, tls, tcp, peer, stop));
                        } else {
                            let conn = handshake::serve(ctx, tcp, peer, stop);
                            // What an idle connection's task holds
                            // (docs/benchmarks.md).
                            static SIZE: std::sync::Once = std::sync::Once::new();
                            SIZE.call_once(|| tracing::debug!(bytes = size_of_val(&conn), "connection task future"));
                            tasks.spawn(conn);
                        }
                    }
                    Err(e) => {
                        // Out of file descriptors and the like: back off a
                        // little instead of spinning.
                        tracing::warn!("accept: {e}");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                },
                Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
            }
        }
        tracing::info!(sessions = tasks.len(), "shutting down");
        let _ = stop_tx.send(true);
        drop(listener);
        if tokio::time::timeout(SHUTDOWN_GRACE, async {
            while tasks.join_next().await.is_some() {}
        })
        .await
        .is_err()
        {
            tracing::warn!("sessions still open after {SHUTDOWN_GRACE:?}; dropping them");
            tasks.shutdown().await;
        }
        drop(relay);
        drop(presence);
        if let Some(r) = reminders {
            r.stop().await;
        }
        // The store stops after its queued jobs are committed.
        self.ctx.store.close().await;
        Ok(())
    }
}

/// The store's commit hook: counts the new ops, then fans them out.
fn on_commit(
    hub: &Arc<hub::Hub>,
    metrics: &Arc<metrics::Metrics>,
) -> Box<dyn Fn(store::Committed) + Send + Sync> {
    let (hub, metrics) = (Arc::clone(hub), Arc::clone(metrics));
    Box::new(move |c| {
        if let store::Committed::Ops { ops, .. } = &c {
            metrics.ops_accepted.add(ops.len() as u64);
        }
        hub.publish(c);
    })
}

/// Opens the server with `config` and runs it on `listener` until
/// `shutdown` completes (mini-redis's `server::run`).
///
/// # Errors
/// See [`Server::open`] and [`Server::run`].
pub async fn run(
    listener: TcpListener,
    config: Config,
    shutdown: impl Future,
) -> Result<(), ServerError> {
    Server::connect(config).await?.run(listener, shutdown).await
}

/// TLS settings from a PEM certificate chain and a PEM private key.
///
/// # Errors
/// A file cannot be read, holds no certificate or key, or they do not match.
pub fn load_tls(cert: &Path, key: &Path) -> Result<Arc<rustls::ServerConfig>, ServerError> {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    let err = |what: &Path, e: &dyn std::fmt::Display| {
        ServerError::Tls(format!("{}: {e}", what.display()))
    };
    let certs = CertificateDer::pem_file_iter(cert)
        .map_err(|e| err(cert, &e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| err(cert, &e))?;
    if certs.is_empty() {
        return Err(err(cert, &"no certificate in the file"));
    }
    let key_der = PrivateKeyDer::from_pem_file(key).map_err(|e| err(key, &e))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ServerError::Tls(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(certs, key_der)
        .map_err(|e| err(key, &e))?;
    Ok(Arc::new(config))
}

/// FNV-1a over `bytes`: a stable, cheap hash for spreading work (which
/// writer takes an account, the order an instance replicates accounts in).
pub(crate) fn fnv1a(bytes: impl IntoIterator<Item = u8>) -> u64 {
    bytes.into_iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
