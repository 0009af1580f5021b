//! The `kairos-server` command: serve, make a pairing code, or migrate a
//! PostgreSQL database.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::{Parser, Subcommand};
use kairos_server::{Config, Database, Server, Store, load_tls};
use tracing_subscriber::EnvFilter;

mod cli_admin;
mod remind_cli;

/// Kairos sync server (docs/sync-protocol.md).
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    /// Data directory (created 0700; the database in it is 0600).
    #[arg(long, global = true, default_value = "kairos-server-data")]
    data: PathBuf,
    /// A PostgreSQL URL (postgres://user@host/db) instead of SQLite in
    /// --data: several instances may share it. Run `migrate` first.
    #[arg(long, global = true)]
    database: Option<String>,
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
    /// PostgreSQL: send no hints to other instances (tests of the repair).
    #[arg(long, hide = true)]
    no_hints: bool,
    /// Interval of the check of connected accounts (PostgreSQL: their
    /// heads; either store: whether they were deleted).
    #[arg(long, hide = true, default_value_t = 500)]
    head_check_ms: u64,
    /// SMTP relay for reminder e-mails: smtp://[user@]host[:port] (port 25;
    /// STARTTLS when offered, required with a user) or
    /// smtps://[user@]host[:port] (TLS from the start, port 465).
    #[arg(long)]
    smtp: Option<String>,
    /// File holding the SMTP relay's password (its first line), so that it
    /// is not in the URL, where every `ps` shows it.
    #[arg(long, value_name = "FILE")]
    smtp_password_file: Option<PathBuf>,
    /// PEM file of CA certificates the SMTP relay is trusted by, besides
    /// the web's roots.
    #[arg(long, value_name = "FILE")]
    smtp_ca: Option<PathBuf>,
    /// Sender of reminder e-mails.
    #[arg(long, default_value = "Kairos <kairos@localhost>")]
    mail_from: String,
    /// PEM file of CA certificates webhook receivers are trusted by,
    /// besides the web's roots (a receiver inside your network with a
    /// certificate of your own CA, or its own self-signed one).
    #[arg(long, value_name = "FILE")]
    webhook_ca: Option<PathBuf>,
    /// Run no reminder task on this instance.
    #[arg(long)]
    no_reminders: bool,
    /// Lease of a claimed reminder delivery (tests of the takeover).
    #[arg(long, hide = true, default_value_t = 60_000)]
    remind_lease_ms: u64,
    /// Longest sleep of the reminder task between rounds.
    #[arg(long, hide = true, default_value_t = 1_000)]
    remind_poll_ms: u64,
    /// Reminder deliveries in flight at once on this instance (also the
    /// most a SIGKILLed instance leaves sent but unrecorded).
    #[arg(long, hide = true, default_value_t = 32, value_parser = clap::value_parser!(u16).range(1..=1024))]
    remind_concurrency: u16,
    /// Reminder deliveries taken per claim on this instance.
    #[arg(long, hide = true, default_value_t = 200, value_parser = clap::value_parser!(u16).range(1..=10_000))]
    remind_batch: u16,
    /// Consecutive retryable failures that open a reminder destination's
    /// circuit (a webhook host, the SMTP relay).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    circuit_failures: u32,
    /// Seconds an open circuit defers its destination's deliveries before
    /// one probe.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    circuit_cooloff_secs: u64,
    /// Fallback deliveries per account and minute (0: no limit); excess
    /// ones are deferred, not dropped.
    #[arg(long, default_value_t = 60)]
    remind_per_minute: u32,
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
    /// Bring the PostgreSQL database of --database to this server's schema
    /// (a serving instance never changes it, and refuses another version).
    Migrate,
    /// Send ACCOUNT's reminders that no device acknowledged in time to a
    /// webhook or an e-mail address (server-side reminders). Works while
    /// the server runs.
    Fallback(remind_cli::FallbackArgs),
    /// Send a sample reminder through each fallback of ACCOUNT now, with
    /// this command's --smtp, --webhook-ca, … (those of the serving
    /// instances), and print each outcome; exit 1 if any failed.
    TestFallback {
        /// The account.
        account: String,
    },
    /// Why did the reminder KEY go out (or not)? Its audit trail.
    Why {
        /// The reminder instance key, as `kairos why` shows it.
        key: String,
    },
    /// Copy the SQLite store to FILE while the server runs (PostgreSQL:
    /// use pg_dump). FILE must not exist.
    Backup {
        /// Where the copy goes (created 0600).
        file: PathBuf,
    },
    /// Export or delete one account.
    #[command(subcommand)]
    Account(AccountCommand),
}

#[derive(Subcommand)]
enum AccountCommand {
    /// Write ACCOUNT's devices and ops to FILE as JSON lines (FILE must
    /// not exist; created 0600).
    Export {
        /// The account.
        account: String,
        /// Where the lines go.
        file: PathBuf,
    },
    /// Delete everything of ACCOUNT: ops, devices, pairing codes, every
    /// row naming it. A running server closes its sessions within a second.
    Delete {
        /// The account.
        account: String,
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
    let db = match &cli.database {
        Some(url) => Database::Postgres(url.clone()),
        None => Database::Sqlite(cli.data.clone()),
    };
    match cli.command {
        Some(Command::Invite { account, ttl_secs }) => invite(&db, &account, ttl_secs),
        Some(Command::Migrate) => migrate(&db),
        Some(Command::Backup { file }) => cli_admin::backup(&db, &file),
        Some(Command::Account(AccountCommand::Export { account, file })) => {
            cli_admin::export(&db, &account, &file)
        }
        Some(Command::Account(AccountCommand::Delete { account })) => {
            cli_admin::delete(&db, &account)
        }
        Some(Command::Fallback(args)) => runtime()?.block_on(remind_cli::fallback(&db, args)),
        Some(Command::Why { key }) => runtime()?.block_on(remind_cli::why(&db, &key)),
        Some(Command::TestFallback { ref account }) => {
            let mut settings = kairos_server::remind::serve::Settings::default();
            channel_settings(&cli, &mut settings)?;
            runtime()?.block_on(remind_cli::test_fallback(&db, account, &settings))
        }
        None => serve(cli),
    }
}

/// Where `db` is, for messages (never a URL's password).
pub(crate) fn describe(db: &Database) -> String {
    match db {
        Database::Sqlite(data) => data.display().to_string(),
        Database::Postgres(_) => "the PostgreSQL database".into(),
    }
}

pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

fn migrate(db: &Database) -> anyhow::Result<()> {
    let Database::Postgres(url) = db else {
        anyhow::bail!(
            "migrate is for PostgreSQL (--database postgres://…): the SQLite store in --data migrates itself when opened"
        );
    };
    let (from, to) = runtime()?
        .block_on(kairos_server::store::migrate_postgres(url))
        .context("migrating the PostgreSQL database")?;
    println!(
        "{}",
        serde_json::json!({ "schema_from": from, "schema": to })
    );
    Ok(())
}

fn invite(db: &Database, account: &str, ttl_secs: u64) -> anyhow::Result<()> {
    anyhow::ensure!(
        kairos_proto::ids::is_account(account),
        "account {account:?} must be 1-64 characters of a-z 0-9 . _ -"
    );
    let ttl = Duration::from_secs(ttl_secs);
    let code = match db {
        Database::Sqlite(data) => Store::invite(data, account, ttl),
        Database::Postgres(_) => runtime()?.block_on(Store::invite_in(db, account, ttl)),
    }
    .with_context(|| format!("making a pairing code in {}", describe(db)))?;
    let line = serde_json::json!({
        "account": code.account,
        "code": code.code,
        "expires_at": kairos_proto::utc::format(&code.expires_at),
    });
    println!("{line}");
    Ok(())
}

/// The fallback channels' flags (relay, sender, trust, password) into
/// `s`, files read and checked.
fn channel_settings(
    cli: &Cli,
    s: &mut kairos_server::remind::serve::Settings,
) -> anyhow::Result<()> {
    s.smtp.clone_from(&cli.smtp);
    s.mail_from.clone_from(&cli.mail_from);
    s.webhook_ca = ca_file("--webhook-ca", cli.webhook_ca.as_deref())?;
    s.relay.ca_pem = ca_file("--smtp-ca", cli.smtp_ca.as_deref())?;
    if let Some(path) = &cli.smtp_password_file {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("--smtp-password-file {}: {e}", path.display()))?;
        let password = text.lines().next().unwrap_or_default();
        if password.is_empty() {
            anyhow::bail!(
                "--smtp-password-file {}: its first line is empty",
                path.display()
            );
        }
        s.relay.password = Some(password.to_owned());
    }
    Ok(())
}

/// The PEM text of a CA file given as `flag`, checked (kairos-tls).
fn ca_file(flag: &str, path: Option<&std::path::Path>) -> anyhow::Result<Option<String>> {
    let Some(path) = path else {
        return Ok(None);
    };
    let pem = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("{flag} {}: {e}", path.display()))?;
    kairos_tls::ca_certificates(&pem)
        .map_err(|e| anyhow::anyhow!("{flag} {}: {e}", path.display()))?;
    Ok(Some(pem))
}

fn serve(cli: Cli) -> anyhow::Result<()> {
    let mut config = Config::new(cli.data.clone());
    config.handshake_timeout = Duration::from_millis(cli.handshake_timeout_ms);
    config.compact_keep = cli.compact_keep;
    config.code_ttl = Duration::from_secs(cli.code_ttl_secs);
    config.ping_interval = Duration::from_millis(cli.ping_ms.max(1));
    config.ops_per_sec = cli.rate_ops_per_sec.max(1);
    config.postgres.clone_from(&cli.database);
    config.hints = !cli.no_hints;
    config.head_check = Duration::from_millis(cli.head_check_ms.max(1));
    config.reminders.enabled = !cli.no_reminders;
    channel_settings(&cli, &mut config.reminders)?;
    config.reminders.lease = Duration::from_millis(cli.remind_lease_ms.max(1));
    config.reminders.poll = Duration::from_millis(cli.remind_poll_ms.max(1));
    config.reminders.concurrency = usize::from(cli.remind_concurrency);
    config.reminders.batch = usize::from(cli.remind_batch);
    config.reminders.limits = kairos_server::remind::gate::Limits {
        failures: cli.circuit_failures,
        cooloff: Duration::from_secs(cli.circuit_cooloff_secs),
        per_minute: cli.remind_per_minute,
    };
    if let (Some(cert), Some(key)) = (&cli.tls_cert, &cli.tls_key) {
        config.tls = Some(load_tls(cert, key)?);
    }
    let scheme = if config.tls.is_some() { "wss" } else { "ws" };
    let db = config.database();
    let runtime = runtime()?;
    // SQLite is opened before the runtime: opening may wait (blocking) for
    // another process setting up the same new file.
    let server = match &db {
        Database::Sqlite(_) => Server::open(config),
        Database::Postgres(_) => runtime.block_on(Server::connect(config)),
    }
    .with_context(|| format!("opening {}", describe(&db)))?;
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
        tracing::info!(%addr, store = %describe(&db), "accepting connections");
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
