//! `kairos caldav add --ca`, `kairos caldav edit` and `kairos caldav
//! calendars --refresh` against a real Radicale: a private CA trusted and
//! kept for the daemon's background sync, calendars made on the server
//! since, chosen and unchosen, the interval, a new password checked first.

use std::io::Write;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use crate::caldav_live::dav_server::{DavServer, PASSWORD, USER};
use crate::caldav_live::{daemon, wait_synced};
use crate::daemon::kairos;
use crate::ok_lines;

/// `kairos --db DB ARGS…` with `stdin` on its standard input.
fn run(db: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = kairos(db)
        .env("KAIROS_SECRET_STORE", "file")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn kairos");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    child.wait_with_output().expect("kairos")
}

fn err(out: &Output) -> String {
    assert!(!out.status.success(), "it succeeded");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn event(uid: &str) -> String {
    let start = (chrono::Utc::now() + chrono::Duration::days(1)).format("%Y%m%dT%H%M%SZ");
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:{uid}\r\n\
         DTSTAMP:20260101T000000Z\r\nDTSTART:{start}\r\nDURATION:PT1H\r\nSUMMARY:{uid}\r\n\
         END:VEVENT\r\nEND:VCALENDAR\r\n"
    )
}

#[test]
fn caldav_add_ca_trusts_a_private_ca_and_the_daemon_keeps_using_it() {
    let (rad, ca) = DavServer::radicale_tls(&[("p1.ics", &event("p1"))]);
    let url = rad.https_url();
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("k.db");
    let add = ["caldav", "add", &url, "--user", USER, "--password-stdin"];
    let pw = format!("{PASSWORD}\n");

    let e = err(&run(&db, &add, &pw));
    assert!(
        e.contains("sent a TLS certificate Kairos does not trust"),
        "{e}"
    );
    assert!(e.contains("--ca FILE.pem"), "{e}");

    let bad = dir.path().join("bad.pem");
    std::fs::write(&bad, "hello").expect("write");
    let e = err(&run(
        &db,
        &[&add[..], &["--ca", bad.to_str().expect("utf-8")]].concat(),
        &pw,
    ));
    assert!(e.contains("--ca") && e.contains("BEGIN CERTIFICATE"), "{e}");
    let e = err(&run(
        &db,
        &[&add[..], &["--ca", "/nonexistent.pem"]].concat(),
        &pw,
    ));
    assert!(e.contains("cannot read /nonexistent.pem"), "{e}");

    let pem = dir.path().join("ca.pem");
    std::fs::write(&pem, &ca).expect("write");
    let with_ca = [
        &add[..],
        &["--ca", pem.to_str().expect("utf-8"), "--every", "2s"],
    ]
    .concat();
    let lines = ok_lines(&run(&db, &with_ca, &pw));
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["chosen"], true, "{lines:?}");
    assert_eq!(lines[0]["private_ca"], true, "{lines:?}");
    // The file may go: the CA is kept with the account.
    std::fs::remove_file(&pem).expect("rm");

    // `edit --no-ca` / `--ca` with a certificate the server does not
    // have: checked with the server first, refused, the CA kept.
    let e = err(&run(&db, &["caldav", "edit", "--no-ca"], ""));
    assert!(e.contains("Kairos does not trust"), "{e}");
    let other = dir.path().join("other.pem");
    let ck = rcgen::generate_simple_self_signed(vec!["127.0.0.1".into()]).expect("cert");
    std::fs::write(&other, ck.cert.pem()).expect("write");
    let e = err(&run(
        &db,
        &["caldav", "edit", "--ca", other.to_str().expect("utf-8")],
        "",
    ));
    assert!(e.contains("Kairos does not trust"), "{e}");
    let lines = ok_lines(&run(&db, &["caldav", "calendars"], ""));
    assert_eq!(lines[0]["private_ca"], true, "{lines:?}");

    // A daemon started afresh syncs over TLS with the stored CA.
    let _d = daemon(&db);
    let st = wait_synced(&db, Instant::now() + Duration::from_secs(60));
    assert!(st["error"].is_null(), "{st}");
    assert!(!st["synced_at"].is_null(), "{st}");
}

#[test]
fn caldav_edit_and_refresh_change_an_account_once_added() {
    let rad = DavServer::radicale();
    rad.mkcalendar("work", "Work", "#3366ccff", &["VEVENT", "VTODO"]);
    rad.put("/alice/work/w1.ics", &event("w1"));
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("k.db");
    let pw = format!("{PASSWORD}\n");
    let add = [
        "caldav",
        "add",
        &rad.url(),
        "--user",
        USER,
        "--password-stdin",
    ];
    ok_lines(&run(&db, &add, &pw));

    // Made on the server since: listed by --refresh, not chosen.
    rad.mkcalendar("home", "Home", "#33aa33ff", &["VEVENT"]);
    let before = ok_lines(&run(&db, &["caldav", "calendars"], ""));
    assert_eq!(before.len(), 1, "{before:?}");
    let lines = ok_lines(&run(&db, &["caldav", "calendars", "--refresh"], ""));
    assert_eq!(lines[0]["new"], serde_json::json!(["Home"]), "{lines:?}");
    let home = lines.iter().find(|l| l["name"] == "Home").expect("Home");
    assert_eq!(home["chosen"], false, "{home}");

    let e = err(&run(&db, &["caldav", "edit"], ""));
    assert!(e.contains("nothing to change"), "{e}");
    // A CA given and taken back (plain HTTP: no certificate to check).
    let ck = rcgen::generate_simple_self_signed(vec!["localhost".into()]).expect("cert");
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, ck.cert.pem()).expect("write");
    let lines = ok_lines(&run(
        &db,
        &["caldav", "edit", "--ca", ca.to_str().expect("utf-8")],
        "",
    ));
    assert_eq!(lines[0]["private_ca"], true, "{lines:?}");
    let lines = ok_lines(&run(&db, &["caldav", "edit", "--no-ca"], ""));
    assert_eq!(lines[0]["private_ca"], false, "{lines:?}");
    let e = err(&run(&db, &["caldav", "edit", "--choose", "Nope"], ""));
    assert!(
        e.contains("no calendar called \"Nope\"") && e.contains("Home, Work"),
        "{e}"
    );
    let e = err(&run(&db, &["caldav", "edit", "--every", "3d"], ""));
    assert!(e.contains("--every"), "{e}");
    let e = err(&run(
        &db,
        &["caldav", "edit", "http://elsewhere/", "--every", "5m"],
        "",
    ));
    assert!(e.contains("no CalDAV account"), "{e}");

    let edit = [
        "caldav",
        "edit",
        "--choose",
        "Home",
        "--unchoose",
        "Work",
        "--every",
        "10m",
    ];
    let out = run(&db, &edit, "");
    let lines = ok_lines(&out);
    let chosen: Vec<(&str, bool)> = lines
        .iter()
        .map(|l| (l["name"].as_str().unwrap_or(""), l["chosen"] == true))
        .collect();
    assert_eq!(chosen, [("Home", true), ("Work", false)]);
    assert_eq!(lines[0]["every_seconds"], 600, "{lines:?}");
    let note = String::from_utf8_lossy(&out.stderr);
    assert!(note.contains("its events stay here"), "{note}");
    let synced = ok_lines(&run(&db, &["caldav", "sync", "--tz", "UTC"], ""));
    let names: Vec<&str> = synced
        .iter()
        .filter_map(|l| l["calendar"].as_str())
        .collect();
    assert_eq!(names, ["Home"]);

    // A wrong new password is refused and the old one kept.
    let e = err(&run(
        &db,
        &["caldav", "edit", "--password-stdin"],
        "wrong\n",
    ));
    assert!(e.contains("refused user"), "{e}");
    ok_lines(&run(&db, &["caldav", "sync", "--tz", "UTC"], ""));
    let out = run(&db, &["caldav", "edit", "--password-stdin"], &pw);
    ok_lines(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("new password checked"));
}

#[test]
fn a_running_daemon_syncs_a_calendar_chosen_with_edit_without_waiting_its_interval() {
    let rad = DavServer::radicale();
    rad.mkcalendar("work", "Work", "#3366ccff", &["VEVENT", "VTODO"]);
    rad.mkcalendar("home", "Home", "#33aa33ff", &["VEVENT"]);
    rad.put("/alice/home/h1.ics", &event("h1"));
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("k.db");
    let pw = format!("{PASSWORD}\n");
    // A day between syncs: only the edit can make it sync within the test.
    let add = [
        "caldav",
        "add",
        &rad.url(),
        "--user",
        USER,
        "--password-stdin",
    ];
    ok_lines(&run(
        &db,
        &[&add[..], &["--calendar", "Work", "--every", "1d"]].concat(),
        &pw,
    ));
    let _d = daemon(&db);
    let deadline = Instant::now() + Duration::from_secs(60);
    let st = wait_synced(&db, deadline);
    assert!(st["error"].is_null(), "{st}");
    ok_lines(&run(&db, &["caldav", "edit", "--choose", "Home"], ""));
    loop {
        let lines = ok_lines(&run(&db, &["caldav", "calendars"], ""));
        let home = lines.iter().find(|l| l["name"] == "Home").expect("Home");
        if !home["synced_at"].is_null() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "Home not synced within 60 s: {home}"
        );
        std::thread::yield_now();
    }
}
