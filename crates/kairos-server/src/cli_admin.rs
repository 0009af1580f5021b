//! `kairos-server backup`, `account export` and `account delete`: each
//! prints one JSON line saying what it did.

use std::path::Path;

use anyhow::Context;
use kairos_server::{Database, Store};

use crate::{describe, runtime};

fn check_account(account: &str) -> anyhow::Result<()> {
    anyhow::ensure!(
        kairos_proto::ids::is_account(account),
        "account {account:?} must be 1-64 characters of a-z 0-9 . _ -"
    );
    Ok(())
}

pub(crate) fn backup(db: &Database, file: &Path) -> anyhow::Result<()> {
    let Database::Sqlite(data) = db else {
        anyhow::bail!(
            "backup copies the SQLite store; for PostgreSQL use pg_dump (see README, \"Running it for many people\")"
        );
    };
    let b = Store::backup(data, file)
        .with_context(|| format!("backing up {} to {}", describe(db), file.display()))?;
    let line = serde_json::json!({ "backup": file, "bytes": b.bytes, "ops": b.ops });
    println!("{line}");
    Ok(())
}

pub(crate) fn export(db: &Database, account: &str, file: &Path) -> anyhow::Result<()> {
    check_account(account)?;
    let n = runtime()?
        .block_on(Store::export_account(db, account, file))
        .with_context(|| format!("exporting {account} from {}", describe(db)))?
        .with_context(|| format!("no account {account:?} in {}", describe(db)))?;
    let line = serde_json::json!({
        "account": account, "file": file, "devices": n.devices, "ops": n.ops,
    });
    println!("{line}");
    Ok(())
}

pub(crate) fn delete(db: &Database, account: &str) -> anyhow::Result<()> {
    check_account(account)?;
    let deleted = runtime()?
        .block_on(Store::delete_account(db, account))
        .with_context(|| format!("deleting {account} from {}", describe(db)))?
        .with_context(|| format!("no account {account:?} in {}", describe(db)))?;
    let line = serde_json::json!({ "account": account, "deleted": deleted });
    println!("{line}");
    Ok(())
}
