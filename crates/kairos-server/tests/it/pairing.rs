//! Invites, joining, and credentials refused before the upgrade.

use kairos_proto::{ServerMsg, ids};

use crate::support::Server;

#[tokio::test]
async fn invite_then_join_gives_a_device_id_and_token_once() {
    let server = Server::start(&[]).await;
    let code = server.invite("alice", &[]).await;
    assert!(ids::normalize_pairing_code(&code).is_some(), "{code}");
    assert_eq!(code.len(), 14);
    let ServerMsg::Joined {
        account,
        device,
        token,
    } = server.join(&code, "my laptop").await.unwrap()
    else {
        unreachable!()
    };
    assert_eq!(account, "alice");
    assert!(ids::is_device(&device), "{device}");
    assert!(ids::is_token(&token));
    // The name was percent-encoded on the way ("my%20laptop").
    let mut c = server.connect(&token).await;
    c.hello(0).await;
    c.send(&kairos_proto::ClientMsg::Devices).await;
    let ServerMsg::DeviceList { devices } = c.recv().await else {
        panic!()
    };
    assert_eq!(devices[0].name, "my laptop");
    let again = server.join(&code, "thief").await.unwrap_err();
    assert_eq!(again, (401, "pairing code already used\n".into()));
    // Typed in lower case without dashes it is the same (used) code.
    let typed = code.replace('-', "").to_lowercase();
    assert_eq!(
        server.join(&typed, "x").await.unwrap_err().1,
        "pairing code already used\n"
    );
}

#[tokio::test]
async fn wrong_and_expired_codes_are_refused_with_the_reason() {
    let server = Server::start(&[]).await;
    server.invite("alice", &[]).await;
    assert_eq!(
        server.join("0000-0000-0000", "x").await.unwrap_err(),
        (401, "unknown pairing code\n".into())
    );
    assert_eq!(
        server.join("not a code", "x").await.unwrap_err(),
        (401, "unknown pairing code\n".into())
    );
    let expired = server.invite("alice", &["--ttl-secs", "0"]).await;
    assert_eq!(
        server.join(&expired, "x").await.unwrap_err(),
        (401, "pairing code expired\n".into())
    );
}

#[tokio::test]
async fn wrong_missing_or_misplaced_credentials_are_401_and_other_paths_404() {
    let server = Server::start(&[]).await;
    let (_, token) = server.device("alice", "laptop").await;
    let wrong = "ab".repeat(32);
    assert_eq!(
        server
            .refused("/v1/sync", Some(&format!("Bearer {wrong}")))
            .await,
        (401, "unknown token\n".into())
    );
    assert_eq!(
        server.refused("/v1/sync", Some("Bearer short")).await,
        (401, "unknown token\n".into())
    );
    let (status, body) = server.refused("/v1/sync", None).await;
    assert_eq!(
        (status, body.as_str()),
        (401, "expected Authorization: Bearer TOKEN\n")
    );
    let (status, _) = server
        .refused("/v1/join", Some(&format!("Bearer {token}")))
        .await;
    assert_eq!(status, 401, "a token is not a pairing code");
    let (status, _) = server
        .refused("/v2/sync", Some(&format!("Bearer {token}")))
        .await;
    assert_eq!(status, 404);
    // The right token still works.
    let mut c = server.connect(&token).await;
    assert_eq!(c.hello(0).await.caught_up, 0);
}

// Unix file modes (on Windows the files take their directory's ACL).
#[cfg(unix)]
#[tokio::test]
async fn the_data_directory_and_database_are_readable_by_their_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let server = Server::start_sqlite(&[]).await;
    server.device("alice", "laptop").await;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&server.data), 0o700);
    for f in ["server.db", "server.db-wal", "server.db-shm"] {
        assert_eq!(mode(&server.data.join(f)), 0o600, "{f}");
    }
}

#[tokio::test]
async fn inviting_while_the_server_commits_pushes_fails_no_push() {
    // Regression: the writer's deferred transactions read the head, then
    // failed with "database is locked" when the invite process had written
    // in between; sessions were closed with 1011.
    let server = Server::start(&[]).await;
    let (a_id, token) = server.device("alice", "laptop").await;
    let mut a = server.connect(&token).await;
    a.hello(0).await;
    let mut m = crate::support::Maker::new(&a_id);
    let inviting = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let still = std::sync::Arc::clone(&inviting);
    // Pushes keep the writer busy for as long as the invites run.
    let pusher = tokio::spawn(async move {
        // 100 pushes a second: under the per-device rate limit.
        let mut tick = tokio::time::interval(std::time::Duration::from_millis(10));
        let mut n = 0;
        while still.load(std::sync::atomic::Ordering::Relaxed) || n < 50 {
            tick.tick().await;
            let ops: Vec<_> = (0..5).map(|i| m.dismiss(&format!("k{n}-{i}"))).collect();
            a.send(&kairos_proto::ClientMsg::Push { ops }).await;
            match a.recv().await {
                ServerMsg::Pushed { .. } => n += 1,
                other => panic!("{other:?}"),
            }
        }
    });
    for i in 0..20 {
        server.invite(&format!("guest{i}"), &[]).await;
    }
    inviting.store(false, std::sync::atomic::Ordering::Relaxed);
    pusher.await.unwrap();
}

#[tokio::test]
async fn invites_racing_on_a_new_data_directory_all_succeed() {
    // Regression: each process migrated the new file; the loser failed
    // with "table accounts already exists".
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let runs: Vec<_> = (0..6)
        .map(|i| {
            tokio::process::Command::new(crate::support::BIN)
                .arg("--data")
                .arg(&data)
                .args(["invite", &format!("user{i}")])
                .output()
        })
        .collect();
    for out in futures_util::future::join_all(runs).await {
        let out = out.unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
