//! CalDAV accounts as the desktop does them (`CaldavAccounts`), against a
//! real Radicale on 127.0.0.1 (the venv of `tests/caldav/setup.sh`), test
//! HTTP and TLS servers on 127.0.0.1:0, and a real SQLite file. Passwords
//! go to the file store beside the database (no Secret Service here).

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;

use chrono::Duration;
use kairos_app::CaldavAccounts;
use kairos_app::api::{
    ApiError, CaldavAddRequest, CaldavLogin, ErrorKind, RangeQuery, RemoteCalendarView,
};

use crate::{app, t};

#[allow(dead_code)]
#[path = "../../../kairos-caldav/tests/it/server.rs"]
pub(crate) mod server;

use server::{DavServer, PASSWORD, USER};

pub(crate) const NOW: &str = "2026-03-09T08:00:00Z";

pub(crate) fn accounts(db: &Path) -> CaldavAccounts {
    CaldavAccounts::new(db, chrono_tz::UTC, Duration::days(2)).with_secret_store(Some("file"))
}

fn login(url: &str, password: &str) -> CaldavLogin {
    CaldavLogin {
        url: url.into(),
        user: USER.into(),
        password: password.into(),
        ca_pem: None,
    }
}

pub(crate) fn add_req(url: &str, calendars: &[&str]) -> CaldavAddRequest {
    CaldavAddRequest {
        url: url.into(),
        user: USER.into(),
        password: PASSWORD.into(),
        ca_pem: None,
        calendars: calendars.iter().map(|c| (*c).to_owned()).collect(),
    }
}

/// Radicale with "Work" (events and tasks, blue) and "Chores" (tasks).
pub(crate) fn radicale() -> DavServer {
    let rad = DavServer::radicale();
    rad.mkcalendar("work", "Work", "#3366ccff", &["VEVENT", "VTODO"]);
    rad.mkcalendar("chores", "Chores", "#e63946ff", &["VTODO"]);
    rad
}

fn week_titles(app: &kairos_app::App) -> Vec<String> {
    let q = RangeQuery {
        from: "2026-03-09T00:00".into(),
        to: "2026-03-16T00:00".into(),
        per_day: None,
    };
    let week = app.occurrences(&q).expect("occurrences");
    week.items.into_iter().map(|o| o.title).collect()
}

fn standup() -> String {
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:standup-1\r\n\
     DTSTAMP:20260301T000000Z\r\nDTSTART:20260310T090000Z\r\nDURATION:PT30M\r\n\
     SUMMARY:Standup\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:r\r\n\
     TRIGGER:-PT10M\r\nEND:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
        .to_owned()
}

#[test]
fn sign_in_choose_sync_now_and_remove_keeps_the_events() {
    let rad = radicale();
    rad.put("/alice/work/standup-1.ics", &standup());
    let (app, _dir, db) = app("UTC", NOW);
    let acc = accounts(&db);

    let found = acc
        .discover(&login(&rad.url(), PASSWORD))
        .expect("discover");
    let mut cals = found.calendars.clone();
    cals.sort_by(|a, b| a.name.cmp(&b.name));
    assert_eq!(
        cals,
        [
            RemoteCalendarView {
                name: "Chores".into(),
                color: Some("#e63946ff".into()),
                events: false,
                tasks: true
            },
            RemoteCalendarView {
                name: "Work".into(),
                color: Some("#3366ccff".into()),
                events: true,
                tasks: true
            },
        ]
    );
    assert!(
        acc.list().expect("list").is_empty(),
        "discovery stores nothing"
    );

    let added = acc
        .add(&add_req(&rad.url(), &["Work"]), t(NOW))
        .expect("add");
    let chosen: Vec<(&str, bool)> = added
        .calendars
        .iter()
        .map(|c| (c.name.as_str(), c.calendar_id.is_some()))
        .collect();
    assert!(chosen.contains(&("Work", true)) && chosen.contains(&("Chores", false)));
    assert_eq!(added.synced_at, None, "the first sync is the host's, later");
    let bytes = std::fs::read(&db).expect("db");
    assert!(
        !bytes
            .windows(PASSWORD.len())
            .any(|w| w == PASSWORD.as_bytes()),
        "no password in the database"
    );
    let again = acc
        .add(&add_req(&rad.url(), &["Work"]), t(NOW))
        .expect_err("should fail");
    assert_eq!(again.kind, ErrorKind::Invalid, "{}", again.message);

    let synced = acc.sync_now(added.id, t(NOW)).expect("sync");
    assert_eq!(synced.synced_at.as_deref(), Some("2026-03-09T08:00:00Z"));
    assert_eq!(synced.last_error, None);
    assert_eq!(week_titles(&app), ["Standup"]);
    let work = app
        .list_calendars()
        .expect("calendars")
        .into_iter()
        .find(|c| c.name == "Work")
        .expect("a Work calendar");
    assert_eq!(work.color, "#3366cc", "the server's colour");

    acc.remove(added.id).expect("remove");
    assert!(acc.list().expect("list").is_empty());
    assert_eq!(week_titles(&app), ["Standup"], "local events stay");
    let e = acc.sync_now(added.id, t(NOW)).expect_err("should fail");
    assert_eq!(e.kind, ErrorKind::NotFound);
}

#[test]
fn a_sync_that_fails_is_recorded_with_its_kind_and_nothing_is_lost() {
    let rad = radicale();
    rad.put("/alice/work/standup-1.ics", &standup());
    let (app, _dir, db) = app("UTC", NOW);
    let acc = accounts(&db);
    let id = acc
        .add(&add_req(&rad.url(), &["Work"]), t(NOW))
        .expect("add")
        .id;
    acc.sync_now(id, t(NOW)).expect("sync");
    drop(rad);
    let later = t(NOW) + Duration::minutes(5);
    let v = acc.sync_now(id, later).expect("a failure is a status");
    let p = v.last_error.expect("an error");
    assert_eq!(p.kind, ErrorKind::CaldavUnreachable, "{}", p.message);
    assert_eq!(v.error_at.as_deref(), Some("2026-03-09T08:05:00Z"));
    assert_eq!(v.synced_at.as_deref(), Some("2026-03-09T08:00:00Z"));
    assert_eq!(week_titles(&app), ["Standup"]);
    assert_eq!(acc.list().expect("list")[0].last_error.as_ref(), Some(&p));
}

fn refused(acc: &CaldavAccounts, url: &str, password: &str, want: ErrorKind) -> String {
    let e: ApiError = acc
        .discover(&login(url, password))
        .expect_err("should fail");
    assert_eq!(e.kind, want, "{}", e.message);
    let e2 = acc
        .add(
            &CaldavAddRequest {
                password: password.into(),
                ..add_req(url, &["Work"])
            },
            t(NOW),
        )
        .expect_err("should fail");
    assert_eq!(e2.kind, want, "{}", e2.message);
    assert!(acc.list().expect("list").is_empty(), "nothing stored");
    e.message
}

#[test]
fn a_wrong_password_is_caldav_unauthorized_and_nothing_is_stored() {
    let rad = radicale();
    let (_app, _dir, db) = app("UTC", NOW);
    let acc = accounts(&db);
    let msg = refused(&acc, &rad.url(), "wrong", ErrorKind::CaldavUnauthorized);
    assert!(msg.contains("401"), "{msg}");
    assert!(
        !db.with_file_name("kairos.db-secrets").exists(),
        "no password kept"
    );
}

#[test]
fn not_caldav_unreachable_and_bad_urls_have_their_own_kinds() {
    let (_app, _dir, db) = app("UTC", NOW);
    let acc = accounts(&db);
    refused(
        &acc,
        &server::not_caldav(404),
        PASSWORD,
        ErrorKind::CaldavNotCaldav,
    );
    let port = TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let url = format!("http://127.0.0.1:{port}/");
    refused(&acc, &url, PASSWORD, ErrorKind::CaldavUnreachable);
    refused(
        &acc,
        "ftp://example.org/",
        PASSWORD,
        ErrorKind::CaldavBadUrl,
    );
    let e = acc
        .discover(&login(" ", PASSWORD))
        .expect_err("should fail");
    assert_eq!(
        (e.kind, e.message.as_str()),
        (ErrorKind::Invalid, "url: required")
    );
    let e = acc
        .add(&add_req("http://127.0.0.1:1/", &[]), t(NOW))
        .expect_err("should fail");
    assert_eq!(e.kind, ErrorKind::Invalid, "{}", e.message);
}

/// A TLS server with a self-signed certificate on 127.0.0.1:0: it does the
/// handshake (which the client refuses) and nothing else.
fn untrusted_tls() -> (String, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()]).expect("cert");
    let (c, k) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&c, cert.cert.pem()).expect("write");
    std::fs::write(&k, cert.signing_key.serialize_pem()).expect("write");
    let config = kairos_server::load_tls(&c, &k).expect("tls");
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for sock in l.incoming() {
            let Ok(sock) = sock else { return };
            let Ok(conn) = rustls::ServerConnection::new(config.clone()) else {
                return;
            };
            let mut tls = rustls::StreamOwned::new(conn, sock);
            let mut buf = [0u8; 1024];
            let _ = tls.read(&mut buf);
        }
    });
    (format!("https://localhost:{port}/"), dir)
}

#[test]
fn a_certificate_nobody_trusts_is_caldav_tls() {
    let (url, _certs) = untrusted_tls();
    let (_app, _dir, db) = app("UTC", NOW);
    let acc = accounts(&db);
    let msg = refused(&acc, &url, PASSWORD, ErrorKind::CaldavTls);
    assert!(msg.to_lowercase().contains("certificate"), "{msg}");
}
