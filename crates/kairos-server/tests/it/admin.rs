//! What operators run: `backup` of the SQLite store while a device writes,
//! and `account export` / `account delete` (everything of the account
//! gone, counted per table, its sessions closed, others untouched).

use std::collections::BTreeMap;

use kairos_proto::{Close, Op};
use tokio::process::Command;
use tokio::time::timeout;

use crate::support::{BIN, Maker, Server, WAIT};

/// `kairos-server --data … [--database …] ARGS`: (success, stdout, stderr).
async fn admin(server: &Server, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(BIN)
        .arg("--data")
        .arg(&server.data)
        .args(server.database.iter().flat_map(|url| ["--database", url]))
        .args(args)
        .output()
        .await
        .unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[tokio::test]
async fn a_backup_taken_while_a_device_writes_holds_every_op_committed_before_it() {
    let server = Server::start_sqlite(&[]).await;
    let (id, token) = server.device("alice", "laptop").await;
    let mut a = server.connect(&token).await;
    a.hello(0).await;
    let (acked_tx, mut acked) = tokio::sync::watch::channel(0u64);
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let writer = tokio::spawn(async move {
        let mut m = Maker::new(&id);
        for i in 0..100_000 {
            if *stop.borrow() {
                break;
            }
            let ops: Vec<Op> = (0..10).map(|j| m.dismiss(&format!("k{i}-{j}"))).collect();
            let seqs = a.push(&ops).await;
            acked_tx.send_replace(*seqs.last().unwrap());
        }
    });
    timeout(WAIT, acked.wait_for(|n| *n >= 300))
        .await
        .unwrap()
        .unwrap();
    // Every op acknowledged by now was committed before the backup starts.
    let before = *acked.borrow();
    let file = server.data.with_extension("backup.db");
    let (ok, out, err) = admin(&server, &["backup", file.to_str().unwrap()]).await;
    assert!(ok, "{err}");
    let during = *acked.borrow();
    // The writer kept going: the backup did not stop the server.
    timeout(WAIT, acked.wait_for(|n| *n > during + 100))
        .await
        .unwrap()
        .unwrap();
    stop_tx.send_replace(true);
    timeout(WAIT, writer).await.unwrap().unwrap();

    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert!(v["ops"].as_u64().unwrap() >= before, "{v}");
    let copy = rusqlite::Connection::open(&file).unwrap();
    let check: String = copy
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let (n, max): (i64, i64) = copy
        .query_row(
            "SELECT count(*), max(seq) FROM ops WHERE account = 'alice' AND seq <= ?1",
            [i64::try_from(before).unwrap()],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((n, max), (before as i64, before as i64));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // An existing file is not overwritten.
    let (ok, _, err) = admin(&server, &["backup", file.to_str().unwrap()]).await;
    assert!(!ok && err.contains("exists"), "{err}");
}

#[tokio::test]
async fn backup_of_postgres_says_to_use_pg_dump() {
    let url = crate::pg::database().await;
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_pg(&dir.path().join("data"), &url, &[]).await;
    let file = dir.path().join("b.db");
    let (ok, _, err) = admin(&server, &["backup", file.to_str().unwrap()]).await;
    assert!(!ok && err.contains("pg_dump"), "{err}");
    assert!(!file.exists());
}

/// Rows per table that name `account` (tables with an `account` column,
/// and the `accounts` row), read straight from the server's store.
async fn rows(server: &Server, account: &str) -> BTreeMap<String, i64> {
    let mut out = BTreeMap::new();
    if let Some(url) = &server.database {
        let c = crate::pg::client(url).await;
        let tables: Vec<String> = c
            .query(
                "SELECT table_name::text FROM information_schema.columns
                 WHERE table_schema = current_schema() AND column_name = 'account'",
                &[],
            )
            .await
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        for t in tables {
            let n: i64 = c
                .query_one(
                    &format!("SELECT count(*) FROM {t} WHERE account = $1"),
                    &[&account],
                )
                .await
                .unwrap()
                .get(0);
            out.insert(t, n);
        }
        let n: i64 = c
            .query_one("SELECT count(*) FROM accounts WHERE id = $1", &[&account])
            .await
            .unwrap()
            .get(0);
        out.insert("accounts".into(), n);
        // `ops` names its account by number (PostgreSQL migration 0011).
        let n: i64 = c
            .query_one(
                "SELECT count(*) FROM ops WHERE account_num = (SELECT num FROM accounts WHERE id = $1)",
                &[&account],
            )
            .await
            .unwrap()
            .get(0);
        out.insert("ops".into(), n);
        c.close().await;
    } else {
        let c = rusqlite::Connection::open(kairos_server::store::db_path(&server.data)).unwrap();
        let tables: Vec<String> = c
            .prepare(
                "SELECT m.name FROM sqlite_schema m, pragma_table_info(m.name) c
                 WHERE m.type = 'table' AND c.name = 'account'",
            )
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        for t in tables {
            let n: i64 = c
                .query_row(
                    &format!("SELECT count(*) FROM {t} WHERE account = ?1"),
                    [account],
                    |r| r.get(0),
                )
                .unwrap();
            out.insert(t, n);
        }
        let n: i64 = c
            .query_row(
                "SELECT count(*) FROM accounts WHERE id = ?1",
                [account],
                |r| r.get(0),
            )
            .unwrap();
        out.insert("accounts".into(), n);
    }
    out
}

#[tokio::test]
async fn an_account_is_exported_then_deleted_entirely_and_its_sessions_closed() {
    let server = Server::start(&["--head-check-ms", "100"]).await;
    let (a_id, a_token) = server.device("alice", "laptop").await;
    let (_, a2_token) = server.device("alice", "phone").await;
    let (b_id, b_token) = server.device("bob", "laptop").await;
    server.invite("alice", &[]).await; // a pairing code left unused
    let (mut a, mut a2, mut b) = (
        server.connect(&a_token).await,
        server.connect(&a2_token).await,
        server.connect(&b_token).await,
    );
    a.hello(0).await;
    a2.hello(0).await;
    b.hello(0).await;
    let mut ma = Maker::new(&a_id);
    let alice_ops = vec![
        ma.calendar("c1", "Work"),
        ma.dismiss("k1"),
        ma.dismiss("k2"),
    ];
    assert_eq!(a.push(&alice_ops).await, [1, 2, 3]);
    let mut mb = Maker::new(&b_id);
    assert_eq!(b.push(&[mb.dismiss("b1"), mb.dismiss("b2")]).await, [1, 2]);

    let alice = rows(&server, "alice").await;
    let bob = rows(&server, "bob").await;
    // PostgreSQL keeps the op ids in `ops` (its migration 0011).
    let tables: &[&str] = if server.database.is_some() {
        &["accounts", "devices", "pairing_codes", "ops"]
    } else {
        &["accounts", "devices", "pairing_codes", "ops", "op_ids"]
    };
    for &t in tables {
        assert!(alice[t] > 0, "alice has no {t} rows: {alice:?}");
        assert!(bob[t] > 0, "bob has no {t} rows: {bob:?}");
    }

    // Export: the account line, both devices, the ops as pushed.
    let file = server.data.with_extension("alice.jsonl");
    let (ok, out, err) = admin(
        &server,
        &["account", "export", "alice", file.to_str().unwrap()],
    )
    .await;
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        (v["devices"].as_u64(), v["ops"].as_u64()),
        (Some(2), Some(3)),
        "{v}"
    );
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["kind"], "account");
    assert_eq!(lines[0]["account"], "alice");
    assert_eq!(lines[0]["head"], 3);
    let mut names: Vec<&str> = lines
        .iter()
        .filter(|l| l["kind"] == "device")
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["laptop", "phone"]);
    let ops: Vec<(u64, Op)> = lines
        .iter()
        .filter(|l| l["kind"] == "op")
        .map(|l| {
            (
                l["seq"].as_u64().unwrap(),
                serde_json::from_value(l["op"].clone()).unwrap(),
            )
        })
        .collect();
    assert_eq!(
        ops,
        alice_ops
            .iter()
            .cloned()
            .enumerate()
            .map(|(i, o)| (i as u64 + 1, o))
            .collect::<Vec<_>>()
    );
    assert!(!lines.iter().any(|l| l.to_string().contains("token")));

    // Delete: what it reports is what there was; nothing of alice is left.
    let (ok, out, err) = admin(&server, &["account", "delete", "alice"]).await;
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    for (t, n) in &alice {
        assert_eq!(v["deleted"][t].as_i64(), Some(*n), "{t}: {v}");
    }
    assert!(rows(&server, "alice").await.values().all(|n| *n == 0));
    assert_eq!(rows(&server, "bob").await, bob);
    // Alice's sessions are closed; her tokens no longer work.
    assert_eq!(a.closed().await.0, Close::Revoked.code());
    assert_eq!(a2.closed().await.0, Close::Revoked.code());
    let (status, _) = server
        .refused("/v1/sync", Some(&format!("Bearer {a_token}")))
        .await;
    assert_eq!(status, 401);
    // Bob still syncs.
    assert_eq!(b.push(&[mb.dismiss("b3")]).await, [3]);
    // A second delete or an export finds no account.
    let (ok, _, err) = admin(&server, &["account", "delete", "alice"]).await;
    assert!(!ok && err.contains("no account"), "{err}");
    let other = server.data.with_extension("again.jsonl");
    let (ok, _, err) = admin(
        &server,
        &["account", "export", "alice", other.to_str().unwrap()],
    )
    .await;
    assert!(!ok && err.contains("no account"), "{err}");
    assert!(!other.exists());
}
