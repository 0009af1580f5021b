//! `kairos caldav` as scripts see it, without a CalDAV server (the sync
//! itself is tested against real servers in kairos-caldav): the password
//! only from stdin, a server that is not CalDAV named as such, nothing
//! stored after a failed `add`.

use std::io::{Read, Write};
use std::net::TcpListener;

use crate::{kairos, ok_lines};

/// A web server on 127.0.0.1 answering every request with an HTML page.
fn blog() -> String {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            let mut buf = [0u8; 8192];
            let _ = s.read(&mut buf);
            let body = "<html>my blog</html>";
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    format!("http://127.0.0.1:{port}/")
}

#[test]
fn caldav_add_refuses_a_password_argument_and_names_a_server_that_is_not_caldav() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("k.db");
    let db = db.to_str().expect("utf-8");
    let url = blog();

    let out = kairos(&["--db", db, "caldav", "add", &url, "--user", "me"], b"");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--password-stdin"), "{err}");

    let out = kairos(
        &[
            "--db",
            db,
            "caldav",
            "add",
            &url,
            "--user",
            "me",
            "--password-stdin",
        ],
        b"pw\n",
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{url} is not a CalDAV server")),
        "{err}"
    );
    assert!(err.contains("/.well-known/caldav"), "{err}");

    // Nothing was kept: no account, no secrets file.
    let out = kairos(&["--db", db, "caldav", "calendars"], b"");
    assert!(ok_lines(&out).is_empty());
    assert!(!dir.path().join("k.db-secrets").exists());
    let out = kairos(&["--db", db, "caldav", "sync", "--calendar", "Work"], b"");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no CalDAV calendar called \"Work\""), "{err}");
}

/// An HTTPS server on 127.0.0.1 with a self-signed certificate for
/// `localhost`. Its URL.
fn self_signed_https() -> String {
    use std::sync::Arc;
    let ck = rcgen::generate_simple_self_signed(vec!["localhost".into()]).expect("cert");
    let cert = ck.cert.der().clone();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(ck.signing_key.serialize_der().into());
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("versions")
    .with_no_client_auth()
    .with_single_cert(vec![cert], key)
    .expect("config");
    let config = Arc::new(config);
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(s) = s else { continue };
            let Ok(conn) = rustls::ServerConnection::new(config.clone()) else {
                continue;
            };
            let mut tls = rustls::StreamOwned::new(conn, s);
            let mut buf = [0u8; 4096];
            let _ = tls.read(&mut buf);
        }
    });
    format!("https://localhost:{port}/")
}

#[test]
fn caldav_add_names_a_certificate_it_does_not_trust_and_stores_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("k.db");
    let db = db.to_str().expect("utf-8");
    let url = self_signed_https();
    let args = [
        "--db",
        db,
        "caldav",
        "add",
        &url,
        "--user",
        "me",
        "--password-stdin",
    ];
    let out = kairos(&args, b"pw\n");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "the server at {url} sent a TLS certificate Kairos does not trust"
        )),
        "{err}"
    );
    assert!(err.contains("self-signed"), "{err}");
    let out = kairos(&["--db", db, "caldav", "calendars"], b"");
    assert!(ok_lines(&out).is_empty());
    assert!(!dir.path().join("k.db-secrets").exists());
}
