//! `kairos sync …`: pairing a database with an account, and what the
//! account's devices need from the command line (docs/sync-protocol.md).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Subcommand;
use kairos_engine::clock::Clock;
use kairos_engine::engine::Config;
use kairos_sync::{Applier, Tls};
use serde_json::json;

use crate::calendar_cmds::floating_zone;
use crate::engine_cmds::open;

/// The `sync` subcommands.
#[derive(Subcommand)]
pub enum SyncCmd {
    /// Pairs this database with the account a one-time code belongs to;
    /// prints {"account","device"}.
    Join {
        /// The server, e.g. ws://127.0.0.1:7070 or wss://sync.example.org.
        url: String,
        /// The one-time pairing code (`kairos-server invite` or `kairos sync pair`).
        code: String,
        /// This device's name in `kairos sync devices` (default: the host name).
        #[arg(long)]
        name: Option<String>,
        /// A PEM file of a CA to trust for wss:// besides the web's roots
        /// (kept in the database for later connections).
        #[arg(long)]
        ca: Option<std::path::PathBuf>,
    },
    /// Prints a new one-time code for another device of this account.
    Pair,
    /// Prints the sync state as JSON.
    Status,
    /// Pulls and pushes once, then exits; prints {"pushed","pulled"}.
    Now {
        /// Zone for floating times (default: the system zone).
        #[arg(long)]
        tz: Option<String>,
    },
    /// Lists the account's devices (JSON lines).
    Devices,
    /// Revokes a device: its token stops working, its connection closes.
    Revoke {
        /// The device id (`d_…`, see `kairos sync devices`).
        device: String,
    },
    /// Leaves the account (revoking this device); events and reminders stay.
    Leave {
        /// Leave even when the server cannot be reached.
        #[arg(long)]
        force: bool,
    },
}

use kairos_sync::CA_META as CA;

/// The TLS trust of this database.
pub fn tls(store: &kairos_store::Store) -> Result<Tls> {
    Ok(Tls::stored(store)?)
}

/// How ops are applied by one-shot commands.
pub fn applier(clock: Arc<dyn Clock>, tz: Option<&str>) -> Result<Applier> {
    Ok(Applier {
        clock,
        floating: floating_zone(tz)?,
        horizon: Config::default().horizon,
    })
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

/// Runs one `kairos sync` subcommand.
pub fn run(db: &Path, cmd: SyncCmd, clock: Arc<dyn Clock>) -> Result<()> {
    let mut store = open(db)?;
    let rt = runtime()?;
    match cmd {
        SyncCmd::Join {
            url,
            code,
            name,
            ca,
        } => {
            if let Some(path) = ca {
                let pem = std::fs::read_to_string(&path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                store.meta_set(CA, &pem)?;
            }
            let name = name.unwrap_or_else(host_name);
            let tls = tls(&store)?;
            let id = rt.block_on(kairos_sync::join(
                &mut store,
                &url,
                &code,
                &name,
                &tls,
                clock.now(),
            ))?;
            kairos_engine::daemon::notify_running(db);
            println!("{}", json!({"account": id.account, "device": id.device}));
        }
        SyncCmd::Pair => {
            let (code, expires) = rt.block_on(kairos_sync::pair(&store, &tls(&store)?))?;
            let account = kairos_engine::sync::identity(&store)?.map(|i| i.account);
            println!(
                "{}",
                json!({"account": account, "code": code, "expires_at": expires.to_rfc3339()})
            );
        }
        SyncCmd::Status => {
            let running = kairos_engine::daemon::is_running(db);
            println!("{}", kairos_sync::status(&store, running)?.json);
        }
        SyncCmd::Now { tz } => {
            let applier = applier(clock, tz.as_deref())?;
            let tls = tls(&store)?;
            let (pushed, pulled) = rt.block_on(kairos_sync::now(&mut store, &applier, &tls))?;
            kairos_engine::daemon::notify_running(db);
            println!("{}", json!({"pushed": pushed, "pulled": pulled}));
        }
        SyncCmd::Devices => {
            for d in rt.block_on(kairos_sync::devices(&store, &tls(&store)?))? {
                println!(
                    "{}",
                    json!({"device": d.device, "name": d.name, "created_at": d.created_at.to_rfc3339(),
                        "last_seen": d.last_seen.map(|t| t.to_rfc3339()), "revoked": d.revoked,
                        "connected": d.connected})
                );
            }
        }
        SyncCmd::Revoke { device } => {
            rt.block_on(kairos_sync::revoke(&store, &device, &tls(&store)?))?;
            println!("{}", json!({"revoked": device}));
        }
        SyncCmd::Leave { force } => {
            let tls = tls(&store)?;
            rt.block_on(kairos_sync::leave(&mut store, &tls, force))?;
            kairos_engine::daemon::notify_running(db);
            println!("{}", json!({"left": true}));
        }
    }
    Ok(())
}

/// After a local change on a paired database: a running daemon pushes it
/// (it was told); with none, push it here in a short session. Failing to
/// reach the server is not an error: the op stays in the outbox and goes
/// with the next sync. Returns a note for stderr when it could not go.
pub fn push_after_change(db: &Path, clock: Arc<dyn Clock>) -> Option<String> {
    if kairos_engine::daemon::notify_running(db) {
        return None;
    }
    let mut store = open(db).ok()?;
    kairos_engine::sync::identity(&store).ok()??;
    let applier = applier(clock, None).ok()?;
    let tls = tls(&store).ok()?;
    let rt = runtime().ok()?;
    match rt.block_on(kairos_sync::push_outbox(
        &mut store,
        &applier,
        &tls,
        Duration::from_secs(10),
    )) {
        Ok(_) => None,
        Err(e) => Some(format!(
            "sync: not sent yet ({e}); it stays in the outbox and goes with the next sync"
        )),
    }
}

fn host_name() -> String {
    std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "kairos".to_owned())
}
