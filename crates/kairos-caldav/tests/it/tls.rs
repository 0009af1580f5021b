//! A self-hosted server's own self-signed certificate given as `--ca`
//! (real Radicale over HTTPS): trusted for exactly that certificate, with
//! the host name and the validity dates still checked; another
//! self-signed certificate with the same names is refused.

use kairos_caldav::secret::FileStore;
use kairos_caldav::{CaldavError, account};
use kairos_store::Store;

use crate::server::{DavServer, PASSWORD, USER};
use crate::{event, t0, when};

/// A self-signed certificate as a person makes one for their own server:
/// no CA of its own, names `names`, the same subject every time (as two
/// certificates made with the same command have). Its PEM and its key's.
fn self_signed(names: &[&str], is_ca: bool) -> (String, String) {
    let key = rcgen::KeyPair::generate().expect("key");
    let mut p =
        rcgen::CertificateParams::new(names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>())
            .expect("params");
    p.distinguished_name
        .push(rcgen::DnType::CommonName, "my-nas.home");
    if is_ca {
        // What `openssl req -x509` makes by default (basicConstraints CA:TRUE).
        p.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    }
    let cert = p.self_signed(&key).expect("self-signed");
    (cert.pem(), key.serialize_pem())
}

/// Adds the account at `url` trusting `ca`, in a fresh database.
fn add(url: &str, ca: &str) -> (Result<usize, CaldavError>, Store) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    let secrets = FileStore::beside(&db);
    let mut store = Store::open(&db).unwrap();
    let login = account::Login {
        url,
        user: USER,
        password: PASSWORD,
        ca_pem: Some(ca),
    };
    let r = account::add(&mut store, &secrets, &login, &[], when(t0())).and_then(|(a, _)| {
        assert_eq!(a.ca_pem.as_deref(), Some(ca));
        let r = account::sync(&mut store, &secrets, None, when(t0()))?;
        Ok(r[0].fetched)
    });
    (r, store)
}

fn ics() -> String {
    event("ss1", "20260301T100000Z", "Self-signed", "20260101T000000Z")
}

#[test]
fn the_servers_own_self_signed_certificate_is_trusted_as_its_ca() {
    let (cert, key) = self_signed(&["127.0.0.1", "localhost"], false);
    let rad = DavServer::radicale_https(&[("ss1.ics", &ics())], &cert, &key);
    let (r, _) = add(&rad.https_url(), &cert);
    assert_eq!(r.unwrap(), 1);
    // By its name too.
    let (r, _) = add(&format!("https://localhost:{}/", rad.port), &cert);
    assert_eq!(r.unwrap(), 1);
}

#[test]
fn a_self_signed_certificate_marked_as_a_ca_is_trusted_as_its_own_ca() {
    let (cert, key) = self_signed(&["127.0.0.1", "localhost"], true);
    let rad = DavServer::radicale_https(&[("ss1.ics", &ics())], &cert, &key);
    let (r, _) = add(&rad.https_url(), &cert);
    assert_eq!(r.unwrap(), 1);
}

#[test]
fn another_self_signed_certificate_with_the_same_names_is_refused() {
    for is_ca in [false, true] {
        let (cert, key) = self_signed(&["127.0.0.1", "localhost"], is_ca);
        let rad = DavServer::radicale_https(&[("ss1.ics", &ics())], &cert, &key);
        let (other, _) = self_signed(&["127.0.0.1", "localhost"], is_ca);
        let (r, store) = add(&rad.https_url(), &other);
        let e = r.unwrap_err();
        assert!(matches!(e, CaldavError::Certificate { .. }), "{e:?}");
        let msg = e.to_string();
        assert!(msg.contains("--ca FILE.pem"), "{msg}");
        assert!(
            msg.contains("self-signed certificate, but not the one given as the CA certificate"),
            "{msg}"
        );
        assert!(store.read(|r| r.caldav_accounts()).unwrap().is_empty());
    }
}

#[test]
fn a_self_signed_certificate_for_another_name_is_refused() {
    let (cert, key) = self_signed(&["localhost"], false);
    let rad = DavServer::radicale_https(&[("ss1.ics", &ics())], &cert, &key);
    let (r, _) = add(&rad.https_url(), &cert);
    let e = r.unwrap_err();
    assert!(matches!(e, CaldavError::Certificate { .. }), "{e:?}");
    assert!(
        e.to_string().contains("not issued for this host name"),
        "{e}"
    );
}

/// The account's stored CA, read anew from the database.
fn stored_ca(store: &Store) -> Option<String> {
    store.read(|r| r.caldav_accounts()).unwrap()[0]
        .ca_pem
        .clone()
}

#[test]
fn an_accounts_ca_is_changed_only_once_the_server_is_reached_with_it() {
    use kairos_caldav::manage::{self, NewLogin};
    let (cert, key) = self_signed(&["127.0.0.1", "localhost"], true);
    let rad = DavServer::radicale_https(&[("ss1.ics", &ics())], &cert, &key);
    let (other, _) = self_signed(&["127.0.0.1", "localhost"], true);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    let secrets = FileStore::beside(&db);
    let mut store = Store::open(&db).unwrap();
    let url = rad.https_url();
    let bundle = format!("{other}{cert}");
    let login = account::Login {
        url: &url,
        user: USER,
        password: PASSWORD,
        ca_pem: Some(&bundle),
    };
    account::add(&mut store, &secrets, &login, &[], when(t0())).unwrap();
    let a = manage::pick(&store, None, "edit").unwrap();
    let ca = |pem| NewLogin {
        password: None,
        ca_pem: Some(pem),
    };

    // Another certificate, none, or no certificate at all: refused,
    // the stored one kept.
    for (new, what) in [(Some(other.as_str()), "other"), (None, "none")] {
        let e = manage::set_login(&mut store, &secrets, &a, ca(new)).unwrap_err();
        assert!(
            matches!(e, CaldavError::Certificate { .. }),
            "{what}: {e:?}"
        );
        assert_eq!(
            stored_ca(&store).as_deref(),
            Some(bundle.as_str()),
            "{what}"
        );
    }
    let e = manage::set_login(&mut store, &secrets, &a, ca(Some("junk"))).unwrap_err();
    assert!(matches!(e, CaldavError::BadCa(_)), "{e:?}");
    assert_eq!(stored_ca(&store).as_deref(), Some(bundle.as_str()));

    // A wrong password with the right certificate: refused, nothing changed.
    let both = NewLogin {
        password: Some("wrong"),
        ca_pem: Some(Some(&cert)),
    };
    let e = manage::set_login(&mut store, &secrets, &a, both).unwrap_err();
    assert!(matches!(e, CaldavError::Unauthorized { .. }), "{e:?}");
    assert_eq!(stored_ca(&store).as_deref(), Some(bundle.as_str()));

    // The server's own certificate: checked, kept, used by the next sync.
    let changed = manage::set_login(&mut store, &secrets, &a, ca(Some(&cert))).unwrap();
    assert_eq!(changed.ca_pem.as_deref(), Some(cert.as_str()));
    drop(store);
    let mut store = Store::open(&db).unwrap();
    assert_eq!(stored_ca(&store).as_deref(), Some(cert.as_str()));
    let r = account::sync(&mut store, &secrets, None, when(t0())).unwrap();
    assert_eq!(r[0].fetched, 1, "{r:?}");
}
