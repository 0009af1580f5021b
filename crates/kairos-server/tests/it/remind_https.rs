//! Webhooks over https (`src/remind/webhook.rs`): a receiver whose
//! certificate is of the operator's own making is trusted with
//! `--webhook-ca` (here `Poster::with_ca`, what the flag builds); without
//! it the POST is refused by the trust, and the delivery is abandoned at
//! once with the problem named (no retry changes a certificate). (A bad
//! `--webhook-ca` file: `remind_mail_tls.rs`, with the relay's files.)

use std::time::Duration;

use kairos_server::remind::{Channels, Options, webhook::Poster};

use crate::receiver;
use crate::remind::{NO_TASK, at, series, with_webhook};
use crate::remind_ops::{account, trail};
use crate::support::Server;

#[tokio::test(flavor = "multi_thread")]
async fn an_https_webhook_is_delivered_with_its_ca_and_abandoned_by_name_without() {
    let cert = rcgen::generate_simple_self_signed(vec!["127.0.0.1".into()]).unwrap();
    let (pem, key) = (cert.cert.pem(), cert.signing_key.serialize_pem());
    let mut hook = receiver::start_tls(&pem, &key).await;
    assert!(hook.url.starts_with("https://127.0.0.1:"), "{}", hook.url);
    let server = Server::start(NO_TASK).await;
    // Alarms at 09:45 and 10:45, fallbacks 5 minutes later.
    let (e1, e2) = (
        series("e1", "20261206T100000Z"),
        series("e2", "20261206T110000Z"),
    );
    let (_dev, _m) = account(&server, "dave", vec![e1, e2]).await;
    let rem = with_webhook(&server, "dave", &hook.url, Duration::from_secs(300)).await;
    rem.replicate(at("2026-12-06T08:00:00Z")).await.unwrap();
    let o = Options::new("test".into());

    let web_roots_only = Channels {
        poster: Poster::new().unwrap(),
        mailer: None,
    };
    let d = rem
        .drain(at("2026-12-06T09:50:00Z"), &o, &web_roots_only)
        .await
        .unwrap();
    assert_eq!((d.claimed, d.sent, d.abandoned), (1, 0, 1), "{d:?}");
    assert!(hook.try_next().is_none(), "no request got through");
    let t = trail(&rem, "dave", "e1").await;
    let last = t.last().unwrap();
    assert!(
        last.starts_with(
            "webhook abandoned after attempt 1: permanent: TLS: it is a self-signed certificate"
        ),
        "{t:?}"
    );

    let with_ca = Channels {
        poster: Poster::with_ca(Some(&pem)).unwrap(),
        mailer: None,
    };
    let d = rem
        .drain(at("2026-12-06T10:50:00Z"), &o, &with_ca)
        .await
        .unwrap();
    assert_eq!((d.claimed, d.sent), (1, 1), "{d:?}");
    let post = hook.next().await;
    assert!(
        post.delivery.starts_with("dave/c1/e2/"),
        "{}",
        post.delivery
    );
    let body: serde_json::Value = serde_json::from_slice(&post.body).unwrap();
    assert_eq!(body["account"], "dave");
}
