//! `kairos sync join --ca` with the sync server's own self-signed
//! certificate (as `openssl req -x509` makes it: it says it is a CA, which
//! webpki refuses as a server's own): trusted for exactly that
//! certificate; another self-signed one with the same names is refused
//! with the reason.

use std::sync::Arc;

use kairos_sync::Tls;

use crate::support::{Device, Server};

/// A self-signed certificate for `localhost` and 127.0.0.1 with the same
/// subject every time; its PEM and the server's TLS set-up.
fn self_signed() -> (String, Arc<rustls::ServerConfig>) {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut p = rcgen::CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
        .unwrap();
    p.distinguished_name
        .push(rcgen::DnType::CommonName, "my-nas.home");
    p.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let cert = p.self_signed(&key).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (c, k) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&c, cert.pem()).unwrap();
    std::fs::write(&k, key.serialize_pem()).unwrap();
    (cert.pem(), kairos_server::load_tls(&c, &k).unwrap())
}

#[tokio::test]
async fn join_trusts_the_servers_own_self_signed_certificate_given_as_ca() {
    let (pem, tls) = self_signed();
    let server = Server::start_tls(tls);
    assert!(server.url.starts_with("wss://localhost:"), "{}", server.url);
    let mut d = Device::new();
    let tls = Tls { ca_pem: Some(pem) };
    let t = kairos_engine::clock::Clock::now(d.clock.as_ref());
    let id = kairos_sync::join(&mut d.store, &server.url, &server.invite(), "nas", &tls, t).await;
    id.unwrap();
}

#[tokio::test]
async fn join_refuses_another_self_signed_certificate_with_the_same_names() {
    let (_, tls) = self_signed();
    let server = Server::start_tls(tls);
    let (other, _) = self_signed();
    let mut d = Device::new();
    let tls = Tls {
        ca_pem: Some(other),
    };
    let t = kairos_engine::clock::Clock::now(d.clock.as_ref());
    let e = kairos_sync::join(&mut d.store, &server.url, &server.invite(), "nas", &tls, t)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("not the one given as the CA certificate"), "{e}");
    assert!(d.identity().is_none(), "nothing stored");
}
