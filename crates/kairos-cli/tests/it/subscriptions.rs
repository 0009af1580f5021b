//! `kairos import --replace`, `kairos subscribe` / `subscriptions`, and a
//! running daemon refreshing a due feed by itself, against a small HTTP
//! server on 127.0.0.1:0 that this test controls.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use crate::daemon::kairos;
use crate::ok_lines;

fn event(uid: &str, start: &str) -> String {
    format!(
        "BEGIN:VEVENT\r\nUID:{uid}\r\nSUMMARY:{uid}\r\nDTSTART:{start}\r\n\
         BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT15M\r\nEND:VALARM\r\nEND:VEVENT\r\n"
    )
}

fn cal(events: &[String]) -> String {
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\n{}END:VCALENDAR\r\n",
        events.concat()
    )
}

/// Serves `reply` (status, body) to every GET; each request's path is
/// sent on the returned channel.
pub(crate) fn serve(reply: Arc<Mutex<(u16, String)>>) -> (String, mpsc::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for sock in listener.incoming() {
            let Ok(mut sock) = sock else { return };
            let mut reader = BufReader::new(sock.try_clone().expect("clone"));
            let mut first = String::new();
            let _ = reader.read_line(&mut first);
            let mut l = String::new();
            while reader.read_line(&mut l).is_ok_and(|n| n > 2) {
                l.clear();
            }
            let (status, body) = reply.lock().expect("lock").clone();
            let _ = write!(
                sock,
                "HTTP/1.1 {status} X\r\nContent-Type: text/calendar\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = sock.flush();
            let _ = tx.send(first.split(' ').nth(1).unwrap_or_default().to_owned());
        }
    });
    (base, rx)
}

#[test]
fn import_replace_deletes_what_the_file_no_longer_has() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("k.db");
    let (v1, v2) = (dir.path().join("v1.ics"), dir.path().join("v2.ics"));
    std::fs::write(
        &v1,
        cal(&[
            event("a", "20300101T100000Z"),
            event("b", "20300101T110000Z"),
        ]),
    )
    .expect("write");
    std::fs::write(&v2, cal(&[event("a", "20300101T100000Z")])).expect("write");
    let run = |file: &std::path::Path, replace: bool| {
        let mut c = kairos(&db);
        c.args(["import", "--calendar", "W", "--tz", "UTC"])
            .arg(file);
        if replace {
            c.arg("--replace");
        }
        ok_lines(&c.output().expect("run")).remove(0)
    };
    run(&v1, false);
    let merged = run(&v2, false);
    assert_eq!(
        merged["deleted"], 0,
        "a plain import deletes nothing: {merged}"
    );
    let replaced = run(&v2, true);
    assert_eq!(replaced["deleted"], 1, "{replaced}");
    assert_eq!(replaced["changed"], 0, "a is unchanged: {replaced}");
    // b is gone from the database: deleting it again is "no event".
    let out = kairos(&db)
        .args(["delete", "b", "--calendar", "W"])
        .output()
        .expect("run");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no event \"b\""));
}

#[test]
fn subscribe_list_refresh_error_and_remove() {
    let soon = (chrono::Utc::now() + chrono::Duration::hours(3)).format("%Y%m%dT%H0000Z");
    let reply = Arc::new(Mutex::new((200, cal(&[event("f1", &soon.to_string())]))));
    let (base, _hits) = serve(reply.clone());
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("k.db");
    let url = format!("{base}/team.ics");
    let out = kairos(&db)
        .args(["subscribe", &url, "--calendar", "Team", "--every", "30m"])
        .output()
        .expect("run");
    let v = ok_lines(&out).remove(0);
    assert_eq!(
        (v["calendar"].as_str(), v["status"].as_str()),
        (Some("Team"), Some("updated"))
    );
    assert_eq!(v["events"], 1);
    let up = ok_lines(&kairos(&db).arg("upcoming").output().expect("run"));
    assert_eq!(up.len(), 1, "the feed's reminder is scheduled");

    *reply.lock().expect("lock") = (500, "oops".into());
    let out = kairos(&db)
        .args(["subscriptions", "refresh", "Team"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("kept its last good copy"), "{err}");
    let list = ok_lines(&kairos(&db).arg("subscriptions").output().expect("run"));
    assert_eq!(list[0]["url"], url.as_str());
    assert_eq!(list[0]["every_secs"], 1800);
    assert_eq!(
        list[0]["last_error"],
        "the server answered HTTP 500 Internal Server Error"
    );
    let up = ok_lines(&kairos(&db).arg("upcoming").output().expect("run"));
    assert_eq!(up.len(), 1, "the calendar kept its last good copy");

    let out = kairos(&db)
        .args(["subscribe", &url, "--calendar", "T2", "--every", "1m"])
        .output()
        .expect("run");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "kairos: refresh interval of 1 min is out of range (5 min to 7 days)"
    );
    let out = kairos(&db)
        .args(["subscriptions", "remove", "Team"])
        .output()
        .expect("run");
    ok_lines(&out);
    assert!(ok_lines(&kairos(&db).arg("subscriptions").output().expect("run")).is_empty());
    let out = kairos(&db)
        .args(["subscriptions", "remove", "Team"])
        .output()
        .expect("run");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no subscription called \"Team\""));
}

#[cfg(unix)]
#[test]
fn a_running_daemon_refreshes_a_due_feed_by_itself() {
    use crate::daemon::start_with;
    use std::time::Duration;

    let start = (chrono::Utc::now() + chrono::Duration::hours(6)).format("%Y%m%dT%H0000Z");
    let reply = Arc::new(Mutex::new((200, cal(&[event("old", &start.to_string())]))));
    let (base, hits) = serve(reply.clone());
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("k.db");
    let out = kairos(&db)
        .args([
            "subscribe",
            &format!("{base}/f"),
            "--calendar",
            "Team",
            "--every",
            "1h",
        ])
        .output()
        .expect("run");
    ok_lines(&out);
    assert_eq!(
        hits.recv_timeout(Duration::from_secs(5)).as_deref(),
        Ok("/f")
    );
    let first_refresh =
        ok_lines(&kairos(&db).arg("subscriptions").output().expect("run"))[0]["last_refresh"]
            .clone();
    *reply.lock().expect("lock") = (200, cal(&[event("new", &start.to_string())]));

    // Two hours later (past the interval and its jitter) the daemon's own
    // loop fetches the feed.
    let mut d = start_with(&db, "--clock-offset=7200");
    assert_eq!(
        hits.recv_timeout(Duration::from_secs(30)).as_deref(),
        Ok("/f")
    );
    // The refresh is recorded right after the answer: wait for it (bounded).
    let until = std::time::Instant::now() + Duration::from_secs(20);
    let refreshed = || {
        let list = ok_lines(&kairos(&db).arg("subscriptions").output().expect("run"));
        list[0]["last_refresh"] != first_refresh
    };
    while !refreshed() && std::time::Instant::now() < until {
        std::thread::yield_now();
    }
    let pid = nix::unistd::Pid::from_raw(i32::try_from(d.child.id()).expect("pid"));
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("term");
    d.child.wait().expect("wait");
    let up = ok_lines(&kairos(&db).arg("upcoming").output().expect("run"));
    let summaries: Vec<&str> = up.iter().filter_map(|v| v["summary"].as_str()).collect();
    assert_eq!(
        summaries,
        ["new"],
        "the feed's new content replaced the old"
    );
    let list = ok_lines(&kairos(&db).arg("subscriptions").output().expect("run"));
    assert_eq!(list[0]["last_error"], serde_json::Value::Null);
}
