//! The `kairos-server` command: serve, or make a pairing code.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::{Parser, Subcommand};
use kairos_server::{Config, Server, Store, load_tls};
use tracing_subscriber::EnvFilter;

/// Kairos sync server (docs/sync-protocol.md).
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    /// Data directory (created 0700; the database in it is 0600).
    #[arg(long, global = true, default_value = "kairos-server-data")]
    data: PathBuf,
    /// Address to listen on (port 0: any free port; the URL is printed).
    #[arg(long, default_value = "127.0.0.1:7471")]
    listen: String,
    /// PEM certificate chain: serve wss:// (needs --tls-key).
    #[arg(long, requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// PEM private key of --tls-cert.
    #[arg(long, requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Time for TLS, the upgrade, and hello (tests).
    #[arg(long, hide = true, default_value_t = 10_000)]
    handshake_timeout_ms: u64,
    /// Compaction keeps the newest N ops of each account (tests).
    #[arg(long, hide = true, default_value_t = 10_000)]
    compact_keep: u64,
    /// Lifetime of codes made by a device's `pair` (tests).
    #[arg(long, hide = true, default_value_t = 900)]
    code_ttl_secs: u64,
    /// Interval of the server's pings (tests).
    #[arg(long, hide = true, default_value_t = 30_000)]
    ping_ms: u64,
    /// Ops a device may push per second (tests; the protocol's is 5,000).
    #[arg(long, hide = true, default_value_t = kairos_proto::RATE_OPS_PER_SEC)]
    rate_ops_per_sec: u32,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Print a pairing code for ACCOUNT (created if new) as one JSON line.
    /// Works while the server runs.
    Invite {
        /// 1-64 characters of a-z 0-9 . _ -
        account: String,
        /// How long the code works.
        #[arg(long, hide = true, default_value_t = 900)]
        ttl_secs: u64,
    },
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .init();
    match cli.command {
        Some(Command::Invite { account, ttl_secs }) => invite(&cli.data, &account, ttl_secs),
        None => serve(cli),
    }
}

fn invite(data: &std::path::Path, account: &str, ttl_secs: u64) -> anyhow::Result<()> {
    anyhow::ensure!(
        kairos_proto::ids::is_account(account),
        "account {account:?} must be 1-64 characters of a-z 0-9 . _ -"
    );
    let code = Store::invite(data, account, Duration::from_secs(ttl_secs))
        .with_context(|| format!("making a pairing code in {}", data.display()))?;
    let line = serde_json::json!({
        "account": code.account,
        "code": code.code,
        "expires_at": kairos_proto::utc::format(&code.expires_at),
    });
    println!("{line}");
    Ok(())
}

fn serve(cli: Cli) -> anyhow::Result<()> {
    let mut config = Config::new(cli.data.clone());
    config.handshake_timeout = Duration::from_millis(cli.handshake_timeout_ms);
    config.compact_keep = cli.compact_keep;
    config.code_ttl = Duration::from_secs(cli.code_ttl_secs);
    config.ping_interval = Duration::from_millis(cli.ping_ms.max(1));
    config.ops_per_sec = cli.rate_ops_per_sec.max(1);
    if let (Some(cert), Some(key)) = (&cli.tls_cert, &cli.tls_key) {
        config.tls = Some(load_tls(cert, key)?);
    }
    let scheme = if config.tls.is_some() { "wss" } else { "ws" };
    // Opened before the runtime: opening may wait for another process
    // setting up the same new file.
    let server = Server::open(config).with_context(|| format!("opening {}", cli.data.display()))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(&cli.listen)
            .await
            .with_context(|| format!("listening on {}", cli.listen))?;
        let addr = listener.local_addr()?;
        let shutdown = signals()?;
        println!(
            "{}",
            serde_json::json!({ "listening": format!("{scheme}://{addr}") })
        );
        tracing::info!(%addr, data = %cli.data.display(), "accepting connections");
        server.run(listener, shutdown).await?;
        tracing::info!("stopped");
        Ok(())
    })
}

/// Completes at the first SIGTERM or SIGINT (Ctrl-C elsewhere).
#[cfg(unix)]
fn signals() -> anyhow::Result<impl Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    })
}

/// Completes at the first Ctrl-C (the server is deployed on Unix; this only
/// keeps it building elsewhere).
#[cfg(not(unix))]
#[allow(clippy::unnecessary_wraps)]
fn signals() -> anyhow::Result<impl Future<Output = ()>> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}
