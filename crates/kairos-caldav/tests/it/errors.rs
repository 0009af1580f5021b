//! What a person meets when something is wrong: clear messages, nothing
//! stored, no password in the database.

use kairos_caldav::discover::discover;
use kairos_caldav::secret::SecretStore;
use kairos_caldav::{CaldavError, account};

use crate::server::{PASSWORD, USER, not_caldav};
use crate::{Fx, t0, when};

#[test]
fn a_wrong_password_is_a_clear_401_and_nothing_is_stored() {
    let mut fx = Fx::new();
    let url = fx.rad.url();
    let e = account::add(
        &mut fx.store,
        &fx.secrets,
        &account::Login {
            url: &url,
            user: USER,
            password: "wrong",
            ca_pem: None,
        },
        &[],
        when(t0()),
    )
    .unwrap_err();
    assert!(
        matches!(e, CaldavError::Unauthorized { status: 401, .. }),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(msg.contains("refused user \"alice\" (401)"), "{msg}");
    assert!(
        msg.contains("check the user name and the password"),
        "{msg}"
    );
    assert!(fx.store.read(|r| r.caldav_accounts()).unwrap().is_empty());
    assert_eq!(fx.secrets.get(&format!("{USER}@{url}")).unwrap(), None);
}

#[test]
fn a_server_that_is_not_caldav_is_named_as_such() {
    for status in [200, 404] {
        let url = not_caldav(status);
        let e = discover(&url, USER, PASSWORD, None)
            .err()
            .expect("not CalDAV");
        let msg = e.to_string();
        assert!(
            matches!(e, CaldavError::NotCaldav { .. }),
            "{status}: {e:?}"
        );
        assert!(msg.contains("is not a CalDAV server"), "{msg}");
        assert!(msg.contains("/.well-known/caldav"), "{msg}");
    }
}

#[test]
fn no_server_and_bad_urls_are_clear_errors() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let e = discover(&format!("http://127.0.0.1:{port}/"), USER, PASSWORD, None)
        .err()
        .unwrap();
    assert!(e.is_retryable(), "{e:?}");
    assert!(e.to_string().contains("cannot reach"), "{e}");
    let e = discover("ftp://example.com/", USER, PASSWORD, None)
        .err()
        .unwrap();
    assert!(matches!(e, CaldavError::BadUrl { .. }), "{e:?}");
}

#[test]
fn the_password_is_in_the_0600_secret_file_and_never_in_the_database() {
    let mut fx = Fx::new();
    fx.add();
    fx.sync(t0());
    let db = fx.dir.path().join("k.db");
    let secrets = fx.dir.path().join("k.db-secrets");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&secrets).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    assert!(
        std::fs::read_to_string(&secrets)
            .unwrap()
            .contains(PASSWORD)
    );
    for f in [db.clone(), fx.dir.path().join("k.db-wal")] {
        if let Ok(bytes) = std::fs::read(&f) {
            let found = bytes
                .windows(PASSWORD.len())
                .any(|w| w == PASSWORD.as_bytes());
            assert!(!found, "{} holds the password", f.display());
        }
    }
    // Without its password, sync says how to fix it.
    let a = fx.store.read(|r| r.caldav_accounts()).unwrap().remove(0);
    fx.secrets.delete(&a.secret_ref).unwrap();
    let e = account::sync(&mut fx.store, &fx.secrets, None, when(t0())).unwrap_err();
    assert!(e.to_string().contains("kairos caldav edit"), "{e}");
    assert!(e.to_string().contains("--password-stdin"), "{e}");
    // Removing the account keeps the Kairos calendar.
    let removed = account::remove(&mut fx.store, &fx.secrets, None).unwrap();
    assert_eq!(removed.username, USER);
    assert!(fx.store.read(|r| r.caldav_accounts()).unwrap().is_empty());
    assert!(
        fx.store
            .read(|r| r.calendars())
            .unwrap()
            .iter()
            .any(|c| c.name == "Work")
    );
}

/// An HTTPS server on 127.0.0.1 with a self-signed certificate for
/// `localhost`; it completes no handshake Kairos would accept. Its URL.
fn self_signed_https() -> String {
    use std::io::{Read, Write};
    use std::sync::Arc;
    let ck = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    let cert = ck.cert.der().clone();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(ck.signing_key.serialize_der().into());
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![cert], key)
    .unwrap();
    let config = Arc::new(config);
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(s) = s else { continue };
            let Ok(conn) = rustls::ServerConnection::new(config.clone()) else {
                continue;
            };
            let mut tls = rustls::StreamOwned::new(conn, s);
            let mut buf = [0u8; 4096];
            // A client that trusted it would get a page that is no CalDAV.
            if tls.read(&mut buf).is_ok() {
                let _ = tls.write_all(b"HTTP/1.1 404 X\r\nContent-Length: 0\r\n\r\n");
            }
        }
    });
    format!("https://localhost:{port}/")
}

#[test]
fn a_self_signed_certificate_is_named_and_nothing_local_is_lost() {
    let mut fx = Fx::new();
    let ics = crate::event("h1", "20260301T100000Z", "Mine", "20260101T000000Z");
    let (cal, _) =
        kairos_core::ics::parse_calendar_lenient(ics.as_bytes(), &kairos_core::Limits::default())
            .unwrap();
    kairos_engine::import::replace_series(
        &mut fx.store,
        "Home",
        "h1",
        &cal.events,
        t0(),
        chrono::Duration::hours(48),
        chrono_tz::UTC,
    )
    .unwrap();
    let url = self_signed_https();
    let e = account::add(
        &mut fx.store,
        &fx.secrets,
        &account::Login {
            url: &url,
            user: USER,
            password: PASSWORD,
            ca_pem: None,
        },
        &[],
        when(t0()),
    )
    .unwrap_err();
    assert!(matches!(e, CaldavError::Certificate { .. }), "{e:?}");
    assert!(!e.is_retryable(), "a certificate does not fix itself");
    let msg = e.to_string();
    assert!(
        msg.contains("TLS certificate Kairos does not trust"),
        "{msg}"
    );
    assert!(msg.contains("self-signed"), "{msg}");
    assert!(msg.contains(&url), "{msg}");
    assert!(fx.store.read(|r| r.caldav_accounts()).unwrap().is_empty());
    assert_eq!(fx.secrets.get(&format!("{USER}@{url}")).unwrap(), None);
    let home = fx.local("Home");
    assert!(home["h1"].text.contains("SUMMARY:Mine"), "{home:?}");
}
