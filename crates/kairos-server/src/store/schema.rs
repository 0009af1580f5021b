//! Opening the server's SQLite file: owner-only permissions, WAL,
//! `synchronous=FULL`, and the schema from `migrations/`.

use std::fs::{DirBuilder, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::Connection;
use rusqlite_migration::{M, Migrations};

use super::StoreError;

const MIGRATIONS: &[M<'static>] = &[
    M::up(include_str!("../../migrations/0001_init.sql")),
    M::up(include_str!("../../migrations/0002_remind.sql")),
    M::up(include_str!("../../migrations/0003_remind_order.sql")),
    M::up(include_str!("../../migrations/0004_remind_takeover.sql")),
    M::up(include_str!("../../migrations/0005_remind_gate.sql")),
    M::up(include_str!("../../migrations/0006_remind_fresh_order.sql")),
    M::up(include_str!("../../migrations/0007_ops_without_rowid.sql")),
    M::up(include_str!("../../migrations/0008_remind_snooze.sql")),
    M::up(include_str!("../../migrations/0009_remind_zone.sql")),
    M::up(include_str!(
        "../../migrations/0010_remind_snooze_return.sql"
    )),
];

/// The database file inside the data directory.
pub fn db_path(data: &Path) -> PathBuf {
    data.join("server.db")
}

/// Creates the data directory (0700) and the database file (0600) if they
/// do not exist, then opens it and brings the schema up to date.
pub fn create_and_migrate(data: &Path) -> Result<Connection, StoreError> {
    let io = |source| StoreError::Io {
        path: data.to_path_buf(),
        source,
    };
    let mut dir = DirBuilder::new();
    dir.recursive(true);
    // On Windows both take their directory's inherited ACL (the server is
    // deployed on Unix; Windows is only checked to build).
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut dir, 0o700);
    dir.create(data).map_err(io)?;
    let path = db_path(data);
    // SQLite gives its -wal and -shm files the database file's mode, so
    // creating it 0600 first keeps all three readable by the owner only.
    let mut file = OpenOptions::new();
    file.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut file, 0o600);
    file.open(&path).map_err(io)?;
    // Two processes may set up a new file at once (the server starting
    // while `kairos-server invite` runs): switching it to WAL can fail with
    // "database is locked" without waiting, and the loser of the migration
    // race fails with "table already exists". Both find the file ready when
    // they try again.
    let mut tries = 0;
    loop {
        let attempt = open(&path).and_then(|mut conn| {
            Migrations::from_slice(MIGRATIONS).to_latest(&mut conn)?;
            Ok(conn)
        });
        match attempt {
            Ok(conn) => return Ok(conn),
            Err(_) if tries < 20 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(25));
            }
            Err(e) => return Err(e),
        }
    }
}

/// Opens a connection with the pragmas every connection needs.
pub fn open(path: &Path) -> Result<Connection, StoreError> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(Duration::from_secs(10))?;
    // WAL is a property of the file: set it once. Setting it again on every
    // connection takes a lock that readers racing the writer lose
    // ("database is locked", without waiting on the busy timeout).
    let mode: String = conn.pragma_query_value(None, "journal_mode", |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        conn.pragma_update(None, "journal_mode", "WAL")?;
    }
    // Durable at commit: `pushed` is only sent after the commit returns.
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    Ok(conn)
}
