//! A feed served over HTTPS with a certificate no one vouches for (made by
//! the test): the error names the certificate problem, and the calendar
//! keeps its last good copy.

use std::sync::Arc;

use chrono::Duration;
use kairos_feeds::{Kind, Limits, Outcome};

use crate::server::Server;
use crate::{db, event, feed, now, pending, refresher, stored, subscription, with_etag};

/// An HTTPS server on 127.0.0.1 with a fresh self-signed certificate for
/// `localhost`, completing handshakes only; its feed's URL.
async fn self_signed() -> String {
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()]).expect("cert");
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(cert.signing_key.serialize_der().into());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(vec![cert.cert.der().clone()], key)
        .expect("server config");
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let _ = acceptor.accept(sock).await;
            });
        }
    });
    format!("https://localhost:{port}/team.ics")
}

#[tokio::test]
async fn a_self_signed_certificate_is_named_and_the_last_good_copy_kept() {
    let good = feed(&[event("a@t", "Stand-up", "20261201T120000Z")]);
    let server = Server::start(with_etag(good, "\"v1\"")).await;
    let (_dir, mut store) = db();
    let r = refresher(Limits::default());
    r.subscribe(
        &mut store,
        &server.url("/cal"),
        Some("Team"),
        Duration::hours(1),
        now(),
    )
    .await
    .expect("subscribe");
    let before = (stored(&store, "Team"), pending(&store));
    assert_eq!(before.0.len(), 1, "a good copy to keep");

    // The feed moved to an HTTPS server whose certificate is self-signed.
    let https = self_signed().await;
    let cal = subscription(&store, "Team").calendar;
    store
        .write(|tx| tx.subscription_put(cal, &https, 3600, now(), now()))
        .expect("move the feed");
    let sub = subscription(&store, "Team");
    let done = r
        .refresh(&mut store, &sub, now() + Duration::minutes(10), 0.5)
        .await
        .expect("refresh");
    let Outcome::Failed(e) = done.outcome else {
        panic!("expected a failure, got {:?}", done.outcome);
    };
    let text = e.to_string();
    assert!(
        text.contains("invalid peer certificate") && text.contains("UnknownIssuer"),
        "names the certificate problem: {text}"
    );
    assert_eq!(e.kind(), Kind::Unreachable, "{text}");
    assert_eq!(
        (stored(&store, "Team"), pending(&store)),
        before,
        "last good copy kept"
    );
    let sub = subscription(&store, "Team");
    assert_eq!(sub.last_error.as_deref(), Some(text.as_str()));
}
