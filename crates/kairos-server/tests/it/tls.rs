//! `wss://` with a certificate made for the test, and a rustls client that
//! trusts only it.

use std::sync::Arc;

use crate::support::{Maker, Server};

#[tokio::test]
async fn wss_with_a_generated_certificate_serves_join_and_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    let (cert_path, key_path) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert_path, cert.cert.pem()).unwrap();
    std::fs::write(&key_path, cert.signing_key.serialize_pem()).unwrap();
    let mut server = Server::start(&[
        "--tls-cert",
        cert_path.to_str().unwrap(),
        "--tls-key",
        key_path.to_str().unwrap(),
    ])
    .await;
    assert!(server.url.starts_with("wss://127.0.0.1:"), "{}", server.url);

    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert.cert.der().clone()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    server.tls = Some(Arc::new(config));

    let (a_id, a_token) = server.device("alice", "laptop").await;
    let (_, b_token) = server.device("alice", "desktop").await;
    let (mut a, mut b) = (
        server.connect(&a_token).await,
        server.connect(&b_token).await,
    );
    a.hello(0).await;
    b.hello(0).await;
    let op = Maker::new(&a_id).dismiss("over-tls");
    assert_eq!(a.push(std::slice::from_ref(&op)).await, [1]);
    let kairos_proto::ServerMsg::Ops { ops, .. } = b.recv().await else {
        panic!()
    };
    assert_eq!(ops[0].op, op);
}
