//! `kairos-server test-fallback ACCOUNT`: a sample reminder through each
//! of the account's fallbacks now, with the serving flags (`--smtp`, …),
//! one JSON line per fallback; exit 1 when any failed, the reason named,
//! so a chat webhook that refuses the POST shows today, not on the day of
//! the pill. Nothing is queued.

use std::time::Duration;

use kairos_server::remind::{Channel, Fallback};
use tokio::process::Command;

use crate::receiver;
use crate::remind::{NO_TASK, webhook, with_webhook};
use crate::remind_mail::Sink;
use crate::support::{BIN, Server};

#[tokio::test(flavor = "multi_thread")]
async fn each_fallback_gets_a_sample_now_and_a_refusal_is_named() {
    let mut hook = receiver::start(&[], Duration::ZERO).await;
    let mut refusing = receiver::start(&[404], Duration::ZERO).await;
    let mut sink = Sink::start_with(&[]).await;
    let server = Server::start(NO_TASK).await;
    let _ = server.device("erin", "laptop").await;
    let rem = with_webhook(&server, "erin", &hook.url, Duration::from_secs(300)).await;
    rem.configure(Fallback {
        calendar: "work".into(),
        ..webhook("erin", &refusing.url, Duration::from_secs(60))
    })
    .await
    .unwrap();
    rem.configure(Fallback {
        channel: Channel::Email,
        target: "erin@example.org".into(),
        secret: None,
        ..webhook("erin", "", Duration::from_secs(60))
    })
    .await
    .unwrap();

    let out = Command::new(BIN)
        .arg("--data")
        .arg(&server.data)
        .args(server.database.iter().flat_map(|url| ["--database", url]))
        .args(["--smtp", &format!("smtp://127.0.0.1:{}", sink.port)])
        .args(["test-fallback", "erin"])
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!out.status.success(), "one refused: exit 1");
    assert!(stderr.contains("1 of 3 fallbacks failed"), "{stderr}");
    let mut lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    lines.sort_by_key(|v| (v["calendar"].to_string(), v["channel"].to_string()));
    let seen: Vec<(&str, &str, &str)> = lines
        .iter()
        .map(|v| {
            (
                v["calendar"].as_str().unwrap(),
                v["channel"].as_str().unwrap(),
                v["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("*", "email", "sent"),
            ("*", "webhook", "sent"),
            ("work", "webhook", "failed, would be abandoned")
        ],
        "{stdout}"
    );
    assert_eq!(lines[2]["reason"], "HTTP 404");

    let post = hook.next().await;
    let body: serde_json::Value = serde_json::from_slice(&post.body).unwrap();
    assert!(
        body["text"]
            .as_str()
            .unwrap()
            .starts_with("Reminder: Kairos test of the webhook fallback"),
        "{body}"
    );
    assert!(post.delivery.starts_with("erin/test/"), "{}", post.delivery);
    let _ = refusing.next().await;
    let mail = sink.message().await;
    assert_eq!(mail["to"], serde_json::json!(["erin@example.org"]));
    assert!(
        rem.instances("erin").await.unwrap().is_empty(),
        "nothing queued"
    );
}

#[tokio::test]
async fn an_account_without_a_fallback_is_told_so() {
    let server = Server::start(NO_TASK).await;
    let _ = server.device("frank", "laptop").await;
    let out = Command::new(BIN)
        .arg("--data")
        .arg(&server.data)
        .args(server.database.iter().flat_map(|url| ["--database", url]))
        .args(["test-fallback", "frank"])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!out.status.success());
    assert!(stderr.contains("has no fallback"), "{stderr}");
}
