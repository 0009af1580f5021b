//! Changing a CalDAV account as the desktop does ("Edit account",
//! "Refresh list", the CA field of a new account), against a real
//! Radicale (plain, and over HTTPS with a private CA).

use kairos_app::api::{CaldavAddRequest, CaldavEditRequest, ErrorKind};

use crate::caldav::server::DavServer;
use crate::caldav::{NOW, accounts, add_req, radicale};
use crate::{app, t};

fn edit(id: i64) -> CaldavEditRequest {
    CaldavEditRequest {
        id,
        every_seconds: None,
        choose: vec![],
        unchoose: vec![],
        password: None,
        ca_pem: None,
        no_ca: None,
    }
}

fn chosen(v: &kairos_app::api::CaldavAccountView) -> Vec<(String, bool)> {
    v.calendars
        .iter()
        .map(|c| (c.name.clone(), c.calendar_id.is_some()))
        .collect()
}

#[test]
fn edit_interval_calendars_and_password_and_refresh_the_list() {
    let rad = radicale();
    let (_app, _dir, db) = app("UTC", NOW);
    let acc = accounts(&db);
    let a = acc
        .add(&add_req(&rad.url(), &["Work"]), t(NOW))
        .expect("add");
    assert_eq!(a.every_seconds, 300);
    assert!(!a.private_ca);

    let e = acc.edit(&edit(a.id), t(NOW)).expect_err("nothing");
    assert_eq!(e.kind, ErrorKind::Invalid, "{}", e.message);
    let e = acc
        .edit(
            &CaldavEditRequest {
                every_seconds: Some(3 * 86_400),
                ..edit(a.id)
            },
            t(NOW),
        )
        .expect_err("too long");
    assert!(e.message.starts_with("every_seconds:"), "{}", e.message);
    let e = acc
        .edit(
            &CaldavEditRequest {
                choose: vec!["Nope".into()],
                ..edit(a.id)
            },
            t(NOW),
        )
        .expect_err("unknown");
    assert_eq!(e.kind, ErrorKind::NotFound, "{}", e.message);

    // A calendar made on the server since: listed unchosen after a refresh.
    rad.mkcalendar("trips", "Trips", "#ffaa00ff", &["VEVENT"]);
    let v = acc.refresh(a.id).expect("refresh");
    assert_eq!(
        chosen(&v),
        [
            ("Chores".to_owned(), false),
            ("Trips".to_owned(), false),
            ("Work".to_owned(), true)
        ]
    );
    let v = acc
        .edit(
            &CaldavEditRequest {
                every_seconds: Some(900),
                choose: vec!["Trips".into()],
                unchoose: vec!["Work".into()],
                ..edit(a.id)
            },
            t(NOW),
        )
        .expect("edit");
    assert_eq!(v.every_seconds, 900);
    assert_eq!(
        chosen(&v),
        [
            ("Chores".to_owned(), false),
            ("Trips".to_owned(), true),
            ("Work".to_owned(), false)
        ]
    );
    // The unchosen calendar's Kairos calendar stays.
    let v = acc.sync_now(a.id, t(NOW)).expect("sync");
    assert!(v.last_error.is_none(), "{:?}", v.last_error);

    // A new password the server refuses changes nothing; one it takes is kept.
    let e = acc
        .edit(
            &CaldavEditRequest {
                password: Some("wrong".into()),
                ..edit(a.id)
            },
            t(NOW),
        )
        .expect_err("refused");
    assert_eq!(e.kind, ErrorKind::CaldavUnauthorized, "{}", e.message);
    rad.change_password("n3w");
    let v = acc.sync_now(a.id, t(NOW)).expect("sync");
    assert_eq!(
        v.last_error.map(|p| p.kind),
        Some(ErrorKind::CaldavUnauthorized)
    );
    acc.edit(
        &CaldavEditRequest {
            password: Some("n3w".into()),
            ..edit(a.id)
        },
        t(NOW),
    )
    .expect("new password");
    let v = acc.sync_now(a.id, t(NOW)).expect("sync");
    assert!(v.last_error.is_none(), "{:?}", v.last_error);
}

#[test]
fn a_new_account_behind_a_private_ca_needs_its_certificate() {
    let (rad, ca) = DavServer::radicale_tls(&[]);
    let url = rad.https_url();
    let (_app, _dir, db) = app("UTC", NOW);
    let acc = accounts(&db);
    let req = |ca_pem: Option<&str>| CaldavAddRequest {
        ca_pem: ca_pem.map(str::to_owned),
        ..add_req(&url, &["Work"])
    };
    let e = acc.add(&req(None), t(NOW)).expect_err("untrusted");
    assert_eq!(e.kind, ErrorKind::CaldavTls, "{}", e.message);
    let e = acc.add(&req(Some("not pem")), t(NOW)).expect_err("bad CA");
    assert_eq!(e.kind, ErrorKind::Invalid, "{}", e.message);
    assert!(e.message.starts_with("ca_pem:"), "{}", e.message);
    assert!(acc.list().expect("list").is_empty());
    let a = acc.add(&req(Some(&ca)), t(NOW)).expect("add");
    assert!(a.private_ca);
    let v = acc.sync_now(a.id, t(NOW)).expect("sync");
    assert!(v.last_error.is_none(), "{:?}", v.last_error);
}

#[test]
fn an_accounts_ca_is_changed_in_edit_only_once_the_server_accepts_it() {
    let (rad, ca) = DavServer::radicale_tls(&[]);
    let url = rad.https_url();
    let (_app, _dir, db) = app("UTC", NOW);
    let acc = accounts(&db);
    let other = rcgen::generate_simple_self_signed(vec!["127.0.0.1".into()])
        .expect("cert")
        .cert
        .pem();
    let bundle = format!("{other}{ca}");
    let add = CaldavAddRequest {
        ca_pem: Some(bundle.clone()),
        ..add_req(&url, &["Work"])
    };
    let a = acc.add(&add, t(NOW)).expect("add");
    let stored = || {
        let store = kairos_store::Store::open(&db).expect("open");
        store.read(|r| r.caldav_accounts()).expect("read")[0]
            .ca_pem
            .clone()
    };
    assert_eq!(stored().as_deref(), Some(bundle.trim()));
    let with = |ca_pem: Option<&str>, no_ca: bool| CaldavEditRequest {
        ca_pem: ca_pem.map(str::to_owned),
        no_ca: Some(no_ca),
        ..edit(a.id)
    };

    // Refused by the server (another certificate, none): the CA kept.
    for req in [with(Some(&other), false), with(None, true)] {
        let e = acc.edit(&req, t(NOW)).expect_err("untrusted");
        assert_eq!(e.kind, ErrorKind::CaldavTls, "{}", e.message);
        assert_eq!(stored().as_deref(), Some(bundle.trim()));
    }
    // Refused before the server is asked.
    let e = acc
        .edit(&with(Some("junk"), false), t(NOW))
        .expect_err("bad");
    assert!(e.message.starts_with("ca_pem:"), "{}", e.message);
    let e = acc.edit(&with(Some(&ca), true), t(NOW)).expect_err("both");
    assert_eq!(e.kind, ErrorKind::Invalid, "{}", e.message);
    assert_eq!(stored().as_deref(), Some(bundle.trim()));

    // The server's CA alone: checked, kept, used.
    let v = acc.edit(&with(Some(&ca), false), t(NOW)).expect("edit");
    assert!(v.private_ca);
    assert_eq!(stored().as_deref(), Some(ca.trim()));
    let v = acc.sync_now(a.id, t(NOW)).expect("sync");
    assert!(v.last_error.is_none(), "{:?}", v.last_error);
}
