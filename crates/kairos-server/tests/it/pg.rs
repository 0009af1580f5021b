//! A throw-away PostgreSQL cluster for the tests: Debian's `postgresql`
//! (15), made by `initdb` as the unprivileged user `nobody` (initdb refuses
//! root), listening only on a Unix socket in its own directory (no port to
//! collide on), one per test process, one fresh database per server.
//!
//! The cluster outlives every test of the process, so a `static` holds it
//! and no destructor runs at exit. The guard is a watchdog process instead:
//! it blocks reading a pipe whose only writer is this process, so when the
//! process ends — tests passed, failed, panicked or were killed — the
//! read returns and the watchdog stops the cluster and removes its
//! directory.

use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

const BIN: &str = "/usr/lib/postgresql/15/bin";

/// Set to `postgres` to run the whole suite on PostgreSQL (`make unit`
/// runs it both ways).
pub fn postgres_suite() -> bool {
    std::env::var("KAIROS_TEST_STORE").is_ok_and(|v| v == "postgres")
}

struct Cluster {
    /// The socket directory.
    dir: PathBuf,
    /// Holding the write end keeps the watchdog waiting; nothing is ever
    /// written to it.
    _watchdog: ChildStdin,
}

static CLUSTER: OnceLock<Cluster> = OnceLock::new();
static NEXT_DB: AtomicU32 = AtomicU32::new(0);

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn as_nobody(program: &str) -> Command {
    let mut c = Command::new("runuser");
    c.args(["-u", "nobody", "--", &format!("{BIN}/{program}")]);
    c
}

fn start() -> Cluster {
    assert!(
        Path::new(BIN).join("initdb").exists(),
        "PostgreSQL 15 is not installed: apt-get install postgresql (scripts/deps.sh)"
    );
    // Not tempfile's directory: the watchdog removes it, after the process.
    let dir = std::env::temp_dir().join(format!("kairos-pg-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    run(Command::new("chown").arg("nobody").arg(&dir));
    let data = dir.join("data");
    // Never waited for: it outlives this process by design (and is
    // reparented to init, which reaps it).
    #[allow(clippy::zombie_processes)]
    let mut watchdog = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "cat >/dev/null; runuser -u nobody -- {BIN}/pg_ctl -D '{}' -m immediate stop >/dev/null 2>&1; rm -rf '{}'",
            data.display(),
            dir.display()
        ))
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let pipe = watchdog.stdin.take().unwrap();
    run(as_nobody("initdb").arg("-D").arg(&data).args([
        "-A",
        "trust",
        "-U",
        "kairos",
        "--no-sync",
    ]));
    // -w: pg_ctl waits for readiness itself, for at most -t seconds.
    run(as_nobody("pg_ctl")
        .arg("-D")
        .arg(&data)
        .arg("-l")
        .arg(dir.join("log"))
        .args(["-w", "-t", "30", "-o"])
        .arg(format!(
            "-k {} -c listen_addresses='' -c fsync=off -c max_connections=400",
            dir.display()
        ))
        .arg("start"));
    Cluster {
        dir,
        _watchdog: pipe,
    }
}

fn cluster() -> &'static Cluster {
    CLUSTER.get_or_init(start)
}

/// The URL of database `name` in the cluster.
fn url(name: &str) -> String {
    format!(
        "postgres://kairos@localhost/{name}?host={}",
        cluster().dir.display()
    )
}

/// A fresh, empty database (no schema) in the test cluster: its URL.
pub async fn empty_database() -> String {
    let name = format!("t{}", NEXT_DB.fetch_add(1, Ordering::Relaxed));
    let admin = client(&url("postgres")).await;
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .unwrap();
    admin.close().await;
    url(&name)
}

/// A fresh database migrated to this server's schema: its URL.
pub async fn database() -> String {
    let url = empty_database().await;
    kairos_server::store::migrate_postgres(&url).await.unwrap();
    url
}

/// Drops the database of `url` (made by [`database`]), ending its sessions.
pub async fn drop_database(url: &str) {
    let name = url
        .split('/')
        .nth(3)
        .and_then(|rest| rest.split('?').next())
        .unwrap();
    let admin = client(&self::url("postgres")).await;
    admin
        .batch_execute(&format!("DROP DATABASE {name} WITH (FORCE)"))
        .await
        .unwrap();
    admin.close().await;
}

/// A test's own connection to a database (beside the server's), its
/// connection task running; [`Side::close`] ends the session and waits
/// for it to be gone.
pub struct Side {
    client: tokio_postgres::Client,
    conn: tokio::task::JoinHandle<Result<(), tokio_postgres::Error>>,
}

/// Connects to `url` (a database of the test cluster).
pub async fn client(url: &str) -> Side {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| panic!("connecting to {url}: {e}"));
    Side {
        client,
        conn: tokio::spawn(conn),
    }
}

impl Side {
    /// Closes the connection and waits until its session ended.
    pub async fn close(self) {
        drop(self.client);
        let _ = self.conn.await;
    }
}

impl std::ops::Deref for Side {
    type Target = tokio_postgres::Client;

    fn deref(&self) -> &Self::Target {
        &self.client
    }
}

impl std::ops::DerefMut for Side {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.client
    }
}
