//! The e-mail channel's TLS and login against aiosmtpd
//! (`src/remind/email.rs`): `smtps://` and STARTTLS to a relay whose
//! certificate a CA of the test's own signed (trusted by `--smtp-ca`), the
//! password from `--smtp-password-file` rather than the URL; and a relay
//! that offers no STARTTLS is never given the password in the clear. A
//! bad file for any channel flag (`--webhook-ca` too) stops the server at
//! start, naming it.

use kairos_server::remind::email::{Mailer, Relay};
use kairos_server::remind::webhook::Outcome;
use tokio::process::Command;

use crate::remind_mail::Sink;
use crate::support::BIN;

fn reminder() -> serde_json::Value {
    serde_json::json!({
        "key": "c1/e1/2026-12-06T10:00:00Z/#0@1",
        "reminder": {"summary": "Contract renewal", "calendar": "c1"},
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn smtps_and_starttls_with_the_relays_ca_and_a_password_from_a_file_deliver() {
    let (ca, leaf, leaf_key) = crate::certs::ca_and_leaf("Kairos test mail CA");
    let dir = tempfile::tempdir().unwrap();
    let (cert_file, key_file) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert_file, &leaf).unwrap();
    std::fs::write(&key_file, &leaf_key).unwrap();
    let (c, k) = (cert_file.to_str().unwrap(), key_file.to_str().unwrap());
    let relay = Relay {
        password: Some("s3cret pass".into()),
        ca_pem: Some(ca.clone()),
    };
    for (mode, scheme) in [("--smtps", "smtps"), ("--starttls", "smtp")] {
        let mut sink = Sink::start_with(&[mode, c, k, "--auth", "kairos", "s3cret pass"]).await;
        let url = format!("{scheme}://kairos@127.0.0.1:{}", sink.port);
        let mailer = Mailer::with(&url, "Kairos <k@example.org>", &relay).unwrap();
        let sent = mailer.send("alice@example.org", &reminder()).await;
        assert!(matches!(sent, Outcome::Sent), "{mode}: {sent:?}");
        let m = sink.message().await;
        assert_eq!(m["tls"], true, "{mode}: {m}");
        assert_eq!(m["user"], "kairos", "{mode}: {m}");
        assert_eq!(m["to"], serde_json::json!(["alice@example.org"]));

        // Without the relay's CA: refused by name, not retried.
        let untrusted = Relay {
            ca_pem: None,
            ..relay.clone()
        };
        let mailer = Mailer::with(&url, "Kairos <k@example.org>", &untrusted).unwrap();
        match mailer.send("alice@example.org", &reminder()).await {
            Outcome::Permanent(why) => assert!(
                why.starts_with("SMTP TLS: it is signed by an authority"),
                "{mode}: {why}"
            ),
            other => panic!("{mode}: {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_relay_without_starttls_is_not_given_the_password_in_the_clear() {
    // This relay offers no STARTTLS and would take the login in the clear.
    let sink = Sink::start_with(&["--auth", "kairos", "s3cret"]).await;
    let with_password = Relay {
        password: Some("s3cret".into()),
        ca_pem: None,
    };
    let url = format!("smtp://kairos@127.0.0.1:{}", sink.port);
    let mailer = Mailer::with(&url, "Kairos <k@example.org>", &with_password).unwrap();
    match mailer.send("alice@example.org", &reminder()).await {
        Outcome::Permanent(why) => assert!(why.contains("STARTTLS"), "{why}"),
        other => panic!("{other:?}"),
    }
    // Without credentials a relay without STARTTLS still takes mail in the
    // clear (a relay on the same host), as before.
    let mut open = Sink::start_with(&[]).await;
    let plain = format!("smtp://127.0.0.1:{}", open.port);
    let mailer = Mailer::new(&plain, "Kairos <k@example.org>").unwrap();
    assert!(matches!(
        mailer.send("alice@example.org", &reminder()).await,
        Outcome::Sent
    ));
    let m = open.message().await;
    assert_eq!(m["tls"], false);
}

#[test]
fn a_password_in_the_url_and_a_file_or_a_file_without_a_user_is_refused() {
    let relay = Relay {
        password: Some("p".into()),
        ca_pem: None,
    };
    let e = Mailer::with("smtp://u:p@relay.example:587", "k@example.org", &relay).err();
    assert!(e.unwrap().contains("give one"));
    let e = Mailer::with("smtp://relay.example:587", "k@example.org", &relay).err();
    assert!(e.unwrap().contains("no user"));
    let e = Mailer::new("smtpx://relay.example", "k@example.org").err();
    assert!(e.unwrap().contains("smtp:// or smtps://"));
}

#[tokio::test]
async fn a_bad_channel_file_stops_the_server_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::write(&empty, "\n").unwrap();
    let garbage = dir.path().join("garbage.pem");
    std::fs::write(&garbage, "not a certificate").unwrap();
    for (flag, file, says) in [
        (
            "--webhook-ca",
            dir.path().join("missing.pem"),
            "missing.pem: ",
        ),
        (
            "--webhook-ca",
            garbage,
            "garbage.pem: CA certificate: no \"-----BEGIN CERTIFICATE-----\"",
        ),
        ("--smtp-password-file", dir.path().join("nope"), "nope: "),
        ("--smtp-password-file", empty, "its first line is empty"),
        ("--smtp-ca", dir.path().join("ca.pem"), "ca.pem: "),
    ] {
        let out = Command::new(BIN)
            .arg("--data")
            .arg(dir.path().join("data"))
            .args(["--listen", "127.0.0.1:0", flag])
            .arg(&file)
            .output()
            .await
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(!out.status.success());
        assert!(err.contains(flag) && err.contains(says), "{err}");
    }
}
