//! A running `kairos daemon` keeps a CalDAV account current by itself
//! (real Radicale, tests/caldav/setup.sh): an edit PUT on the server by
//! another client reaches the database and moves the reminder, which then
//! fires at its new time, with no `kairos caldav sync`; the account's
//! status says when it last synced. A dismissal made while it runs
//! (`kairos dismiss` in a terminal) reaches the server's copy as RFC 9074
//! `ACKNOWLEDGED` soon after, woken by the change, not by its interval.

use std::time::{Duration, Instant};

use chrono::Utc;

use std::process::Stdio;

use crate::daemon::{Daemon, kairos, spawn};

#[allow(dead_code)] // Shared with kairos-caldav's tests; not every helper is used here.
#[path = "../../../kairos-caldav/tests/it/server.rs"]
pub(crate) mod dav_server;

use dav_server::{DavServer, PASSWORD, USER};

/// An event starting at `start` with a reminder 15 minutes before.
fn event(uid: &str, start: chrono::DateTime<Utc>, summary: &str) -> String {
    let f = |t: chrono::DateTime<Utc>| t.format("%Y%m%dT%H%M%SZ").to_string();
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:{uid}\r\n\
         DTSTAMP:{now}\r\nLAST-MODIFIED:{now}\r\nDTSTART:{start}\r\nDURATION:PT1H\r\n\
         SUMMARY:{summary}\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:r\r\n\
         TRIGGER:-PT15M\r\nEND:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
        now = f(Utc::now()),
        start = f(start)
    )
}

/// `kairos caldav add` for Radicale's account, syncing every `every`.
fn add(db: &std::path::Path, rad: &DavServer, every: &str) {
    let out = kairos(db)
        .env("KAIROS_SECRET_STORE", "file")
        .args(["caldav", "add", &rad.url(), "--user", USER])
        .args(["--password-stdin", "--every", every, "--tz", "UTC"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin
                .take()
                .expect("stdin")
                .write_all(format!("{PASSWORD}\n").as_bytes())?;
            c.wait_with_output()
        })
        .expect("kairos caldav add");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A daemon on `db` printing reminders on stdout, its passwords in the
/// file secret store.
pub(crate) fn daemon(db: &std::path::Path) -> Daemon {
    let mut c = kairos(db);
    c.env("KAIROS_SECRET_STORE", "file")
        .args(["daemon", "--sink", "stdout", "--tz", "UTC"]);
    spawn(c)
}

/// The next line the daemon prints, within `deadline`, parsed.
fn next_line(d: &Daemon, deadline: Instant) -> Option<serde_json::Value> {
    let left = deadline.saturating_duration_since(Instant::now());
    let line = d.lines.recv_timeout(left).ok()?;
    Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("bad line {line:?}: {e}")))
}

#[test]
fn a_daemon_pulls_a_server_edit_by_itself_and_the_moved_reminder_fires() {
    let rad = DavServer::radicale();
    rad.mkcalendar("work", "Work", "#3366ccff", &["VEVENT", "VTODO"]);
    // Far enough ahead not to fire during the test.
    let first = Utc::now() + chrono::Duration::hours(2);
    rad.put("/alice/work/m.ics", &event("m", first, "Standup"));

    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("k.db");
    add(&db, &rad, "2s");
    let d = daemon(&db);
    // The daemon's first sync (at start) brings the event in; nothing is
    // due yet. Move it on the server: its reminder is now 4 s away.
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = wait_synced(&db, deadline);
    assert!(status["error"].is_null(), "{status}");
    let moved = Utc::now() + chrono::Duration::minutes(15) + chrono::Duration::seconds(4);
    rad.put("/alice/work/m.ics", &event("m", moved, "Standup moved"));
    // No `kairos caldav sync`: the daemon's interval (2 s) pulls it and
    // the engine fires it at the new time.
    let v = next_line(&d, deadline).expect("the moved reminder fired within 60 s");
    assert_eq!(v["uid"], "m", "{v}");
    assert_eq!(v["summary"], "Standup moved", "{v}");
    assert_eq!(
        v["trigger"].as_str().map(|t| t[..19].to_owned()),
        Some(
            (moved - chrono::Duration::minutes(15))
                .format("%Y-%m-%dT%H:%M:%S")
                .to_string()
        ),
        "{v}"
    );
}

/// Waits (bounded) until `kairos caldav calendars` shows a finished sync;
/// returns the account's status.
pub(crate) fn wait_synced(db: &std::path::Path, deadline: Instant) -> serde_json::Value {
    loop {
        let out = kairos(db)
            .args(["caldav", "calendars"])
            .output()
            .expect("run");
        let lines = crate::ok_lines(&out);
        let st = lines[0]["account_status"].clone();
        if !st["synced_at"].is_null() || !st["error"].is_null() {
            return st;
        }
        assert!(
            Instant::now() < deadline,
            "no sync recorded within the deadline: {st}"
        );
        std::thread::yield_now();
    }
}

#[test]
fn a_dismissal_while_the_daemon_runs_reaches_the_server_soon_after() {
    let rad = DavServer::radicale();
    rad.mkcalendar("work", "Work", "#3366ccff", &["VEVENT", "VTODO"]);
    // Its reminder is due 3 s from now.
    let start = Utc::now() + chrono::Duration::minutes(15) + chrono::Duration::seconds(3);
    rad.put("/alice/work/d.ics", &event("d", start, "Review"));
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("k.db");
    // A day between syncs: only the wake-up can push within the test.
    add(&db, &rad, "1d");
    let d = daemon(&db);
    let deadline = Instant::now() + Duration::from_secs(60);
    let v = next_line(&d, deadline).expect("the reminder fired within 60 s");
    assert_eq!(v["uid"], "d", "{v}");
    let key = v["key"].as_str().expect("key").to_owned();
    let out = kairos(&db)
        .args(["dismiss", &key])
        .output()
        .expect("dismiss");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Bounded: the server's copy gains ACKNOWLEDGED on its alarm.
    loop {
        let body = rad.get("/alice/work/d.ics").body.replace("\r\n ", "");
        if body.contains("ACKNOWLEDGED:") {
            let alarm = body.split("BEGIN:VALARM").nth(1).unwrap_or_default();
            assert!(alarm.contains("ACKNOWLEDGED:"), "{body}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no ACKNOWLEDGED on the server within 60 s: {body}"
        );
        std::thread::yield_now();
    }
}

#[test]
fn a_failed_background_sync_is_recorded_where_caldav_calendars_shows_it() {
    let rad = DavServer::radicale();
    rad.mkcalendar("work", "Work", "#3366ccff", &["VEVENT", "VTODO"]);
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("k.db");
    add(&db, &rad, "2s");
    let url = rad.url();
    drop(rad); // The server is gone.
    let _d = daemon(&db);
    let st = wait_synced(&db, Instant::now() + Duration::from_secs(60));
    let err = st["error"].as_str().unwrap_or_default();
    assert!(err.contains("cannot reach"), "{st}");
    assert!(err.contains(&url[..url.len() - 1]), "{st}");
    assert_eq!(st["failures"], 1, "{st}");
    assert!(st["synced_at"].is_null(), "{st}");
    // The retry backs off (1 min), not the 2 s interval.
    let next = st["next_at"].as_str().expect("next_at");
    let at = st["error_at"].as_str().expect("error_at");
    let gap = chrono::DateTime::parse_from_rfc3339(next).expect("rfc3339")
        - chrono::DateTime::parse_from_rfc3339(at).expect("rfc3339");
    assert!(gap >= chrono::Duration::seconds(50), "{st}");
}
