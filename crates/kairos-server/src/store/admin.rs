//! What operators run beside the sync path: the readiness query, the
//! online backup of the SQLite file, and an account's export and
//! deletion (`kairos-server backup`, `account export`, `account delete`).
//!
//! Deletion removes the account's rows from every table that has an
//! `account` column (found in the schema when it runs, so a table added
//! later is covered without a change here), then the `accounts` row, in
//! one transaction. Invariant for new tables: a table holding anything of
//! an account has an `account` column.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use chrono::DateTime;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

use super::{Backend, Database, Store, StoreError, pg, schema};

/// Rows deleted per table.
pub type Deleted = BTreeMap<String, u64>;

/// What `backup` wrote.
#[derive(Debug, Clone, Copy)]
pub struct Backup {
    /// The size of the backup file.
    pub bytes: u64,
    /// The ops in it.
    pub ops: u64,
}

/// What an export wrote.
#[derive(Debug, Clone, Copy, Default)]
pub struct Exported {
    /// Device lines.
    pub devices: u64,
    /// Op lines.
    pub ops: u64,
}

impl Store {
    /// A real query on the store: `Ok` once it answers (`/readyz`).
    pub async fn ping(&self) -> Result<(), StoreError> {
        match &*self.0 {
            Backend::Sqlite(s) => s.readers.run(|r| r.ping()).await,
            Backend::Postgres(p) => p.ping().await,
        }
    }

    /// Copies the SQLite store in `data` to `to` (which must not exist)
    /// with `VACUUM INTO`: one read transaction, so the copy holds every
    /// commit made before it started, while the server keeps serving and
    /// writing (WAL: the reader does not block the writer). The copy is
    /// written beside `to` and renamed into place when complete.
    pub fn backup(data: &Path, to: &Path) -> Result<Backup, StoreError> {
        let db = schema::db_path(data);
        if !db.exists() {
            return Err(io_err(&db, std::io::ErrorKind::NotFound.into()));
        }
        if to.exists() {
            return Err(io_err(to, std::io::ErrorKind::AlreadyExists.into()));
        }
        let partial = partial(to);
        drop(private_file(&partial)?);
        let result = (|| {
            let conn = schema::open(&db)?;
            conn.execute("VACUUM INTO ?1", [partial.to_string_lossy()])?;
            drop(conn);
            let copy = Connection::open(&partial)?;
            let ops: i64 = copy.query_row("SELECT count(*) FROM ops", [], |r| r.get(0))?;
            let check: String = copy.query_row("PRAGMA quick_check", [], |r| r.get(0))?;
            if check != "ok" {
                return Err(StoreError::Commit(format!(
                    "the copy fails its check: {check}"
                )));
            }
            Ok(ops)
        })();
        match result {
            Ok(ops) => {
                std::fs::rename(&partial, to).map_err(|e| io_err(to, e))?;
                let bytes = std::fs::metadata(to).map_err(|e| io_err(to, e))?.len();
                Ok(Backup {
                    bytes,
                    ops: u64::try_from(ops).unwrap_or(0),
                })
            }
            Err(e) => {
                let _ = std::fs::remove_file(&partial);
                Err(e)
            }
        }
    }

    /// Writes `account`'s account line, devices and ops as JSON lines to
    /// `to` (which must not exist; created 0600), from one consistent
    /// read. `None`: there is no such account (nothing is written).
    pub async fn export_account(
        db: &Database,
        account: &str,
        to: &Path,
    ) -> Result<Option<Exported>, StoreError> {
        if to.exists() {
            return Err(io_err(to, std::io::ErrorKind::AlreadyExists.into()));
        }
        let partial = partial(to);
        let mut out = Lines::new(&partial)?;
        let result = match db {
            Database::Sqlite(data) => {
                let (data, account) = (data.clone(), account.to_owned());
                let done = tokio::task::spawn_blocking(move || {
                    let r = export_sqlite(&data, &account, &mut out);
                    (r, out)
                })
                .await;
                match done {
                    Ok((r, o)) => {
                        out = o;
                        r
                    }
                    Err(_) => {
                        let _ = std::fs::remove_file(&partial);
                        return Err(StoreError::Closed);
                    }
                }
            }
            Database::Postgres(url) => pg::export(url, account, &mut out).await,
        };
        match result.and_then(|found| out.finish().map(|()| found)) {
            Ok(Some(n)) => {
                std::fs::rename(&partial, to).map_err(|e| io_err(to, e))?;
                Ok(Some(n))
            }
            other => {
                let _ = std::fs::remove_file(&partial);
                other
            }
        }
    }

    /// Deletes everything of `account` in one transaction: its rows in
    /// every table with an `account` column, then the account. `None`:
    /// there is no such account. Its sessions on a running server close
    /// within the server's account check (`relay.rs`).
    pub async fn delete_account(
        db: &Database,
        account: &str,
    ) -> Result<Option<Deleted>, StoreError> {
        match db {
            Database::Sqlite(data) => {
                let (data, account) = (data.clone(), account.to_owned());
                tokio::task::spawn_blocking(move || delete_sqlite(&data, &account))
                    .await
                    .map_err(|_| StoreError::Closed)?
            }
            Database::Postgres(url) => pg::delete(url, account).await,
        }
    }
}

fn io_err(path: &Path, source: std::io::Error) -> StoreError {
    StoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn partial(to: &Path) -> PathBuf {
    let mut name = to.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    to.with_file_name(name)
}

/// A new file only its owner can read (a backup or export holds every
/// op of the accounts in it).
fn private_file(path: &Path) -> Result<File, StoreError> {
    let mut o = OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    o.open(path).map_err(|e| io_err(path, e))
}

/// The export's JSON lines, written as they are read.
pub(super) struct Lines {
    out: BufWriter<File>,
    path: PathBuf,
    pub(super) n: Exported,
}

fn time(ms: i64) -> serde_json::Value {
    DateTime::from_timestamp_millis(ms).map_or(serde_json::Value::Null, |t| {
        kairos_proto::utc::format(&t).into()
    })
}

impl Lines {
    fn new(path: &Path) -> Result<Self, StoreError> {
        Ok(Self {
            out: BufWriter::new(private_file(path)?),
            path: path.to_path_buf(),
            n: Exported::default(),
        })
    }

    fn line(&mut self, text: &str) -> Result<(), StoreError> {
        writeln!(self.out, "{text}").map_err(|e| io_err(&self.path, e))
    }

    pub(super) fn account(
        &mut self,
        id: &str,
        created_ms: i64,
        head: i64,
        floor: i64,
    ) -> Result<(), StoreError> {
        let v = serde_json::json!({
            "kind": "account", "account": id, "created_at": time(created_ms),
            "head": head, "floor": floor,
        });
        self.line(&v.to_string())
    }

    pub(super) fn device(
        &mut self,
        id: &str,
        name: &str,
        created_ms: i64,
        last_seen_ms: Option<i64>,
        revoked_ms: Option<i64>,
    ) -> Result<(), StoreError> {
        self.n.devices += 1;
        let v = serde_json::json!({
            "kind": "device", "device": id, "name": name, "created_at": time(created_ms),
            "last_seen": last_seen_ms.map(time), "revoked_at": revoked_ms.map(time),
        });
        self.line(&v.to_string())
    }

    /// `op_json` is the op as stored (kairos-proto's encoding), put in as
    /// it is.
    pub(super) fn op(&mut self, seq: i64, op_json: &str) -> Result<(), StoreError> {
        self.n.ops += 1;
        self.line(&format!(r#"{{"kind":"op","seq":{seq},"op":{op_json}}}"#))
    }

    fn finish(mut self) -> Result<(), StoreError> {
        self.out.flush().map_err(|e| io_err(&self.path, e))?;
        self.out
            .get_ref()
            .sync_all()
            .map_err(|e| io_err(&self.path, e))
    }
}

fn open_existing(data: &Path) -> Result<Connection, StoreError> {
    let db = schema::db_path(data);
    if !db.exists() {
        return Err(io_err(&db, std::io::ErrorKind::NotFound.into()));
    }
    schema::open(&db)
}

fn export_sqlite(
    data: &Path,
    account: &str,
    out: &mut Lines,
) -> Result<Option<Exported>, StoreError> {
    let mut conn = open_existing(data)?;
    // One read transaction: devices and ops as of one moment.
    let tx = conn.transaction_with_behavior(TransactionBehavior::Deferred)?;
    let Some((created, head, floor)) = tx
        .query_row(
            "SELECT created_ms, head, floor FROM accounts WHERE id = ?1",
            [account],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?
    else {
        return Ok(None);
    };
    out.account(account, created, head, floor)?;
    let mut devices = tx.prepare(
        "SELECT id, name, created_ms, last_seen_ms, revoked_ms FROM devices
         WHERE account = ?1 ORDER BY created_ms, id",
    )?;
    let mut rows = devices.query([account])?;
    while let Some(r) = rows.next()? {
        out.device(
            &r.get::<_, String>(0)?,
            &r.get::<_, String>(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
        )?;
    }
    let mut ops = tx.prepare("SELECT seq, op_json FROM ops WHERE account = ?1 ORDER BY seq")?;
    let mut rows = ops.query([account])?;
    while let Some(r) = rows.next()? {
        out.op(r.get(0)?, &r.get::<_, String>(1)?)?;
    }
    Ok(Some(out.n))
}

fn delete_sqlite(data: &Path, account: &str) -> Result<Option<Deleted>, StoreError> {
    let mut conn = open_existing(data)?;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Whatever order the tables reference each other in, the keys are
    // checked at the commit.
    tx.pragma_update(None, "defer_foreign_keys", "ON")?;
    let exists = tx
        .query_row(
            "SELECT 1 FROM accounts WHERE id = ?1",
            [account],
            |_| Ok(()),
        )
        .optional()?
        .is_some();
    if !exists {
        return Ok(None);
    }
    let tables: Vec<String> = tx
        .prepare(
            "SELECT m.name FROM sqlite_schema m, pragma_table_info(m.name) c
             WHERE m.type = 'table' AND c.name = 'account' ORDER BY m.name",
        )?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut deleted = Deleted::new();
    for t in tables {
        // A name from the schema itself, quoted.
        let sql = format!(
            "DELETE FROM \"{}\" WHERE account = ?1",
            t.replace('"', "\"\"")
        );
        let n = tx.execute(&sql, [account])?;
        deleted.insert(t, n as u64);
    }
    let n = tx.execute("DELETE FROM accounts WHERE id = ?1", [account])?;
    deleted.insert("accounts".into(), n as u64);
    tx.commit()?;
    Ok(Some(deleted))
}
