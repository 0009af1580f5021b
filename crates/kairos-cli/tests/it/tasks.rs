//! `kairos tasks` and `kairos done` as scripts see them, and a task's
//! reminder fired by the real daemon: once, and not after it was done.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use chrono::Utc;

use crate::daemon::{kairos, read, read_each, start_with, wait_for_file};
use crate::ok_lines;

fn import(db: &Path, body: &str) {
    let file = db.with_extension("ics");
    let text = format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\n{}\r\nEND:VCALENDAR\r\n",
        body.trim().replace('\n', "\r\n")
    );
    std::fs::write(&file, text).expect("write");
    let out = kairos(db)
        .args(["import", "--tz", "UTC"])
        .arg(&file)
        .output()
        .expect("import");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn uids(db: &Path) -> Vec<String> {
    ok_lines(
        &kairos(db)
            .args(["tasks", "--tz", "UTC"])
            .output()
            .expect("tasks"),
    )
    .iter()
    .map(|v| v["uid"].as_str().expect("uid").to_owned())
    .collect()
}

#[test]
fn tasks_lists_open_ones_due_soonest_and_done_closes_them() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("k.db");
    let day = |d: i64| (Utc::now() + chrono::Duration::days(d)).format("%Y%m%d");
    import(
        &db,
        &format!(
            "BEGIN:VTODO\nUID:someday\nSUMMARY:Read a book\nPRIORITY:1\nEND:VTODO\n\
             BEGIN:VTODO\nUID:tomorrow\nSUMMARY:Call\nDUE;VALUE=DATE:{}\nEND:VTODO\n\
             BEGIN:VTODO\nUID:late\nSUMMARY:Taxes\nDUE;VALUE=DATE:{}\nPRIORITY:2\nEND:VTODO\n\
             BEGIN:VTODO\nUID:finished\nSUMMARY:Old\nDUE;VALUE=DATE:{}\nSTATUS:COMPLETED\nEND:VTODO\n\
             BEGIN:VEVENT\nUID:meeting\nDTSTART:20300101T100000Z\nSUMMARY:Not a task\nEND:VEVENT",
            day(1),
            day(-3),
            day(-5)
        ),
    );
    let lines = ok_lines(
        &kairos(&db)
            .args(["tasks", "--tz", "UTC"])
            .output()
            .expect("tasks"),
    );
    let got: Vec<&str> = lines
        .iter()
        .map(|v| v["uid"].as_str().expect("uid"))
        .collect();
    assert_eq!(got, ["late", "tomorrow", "someday"]);
    assert_eq!(lines[0]["overdue"], true);
    assert_eq!(lines[0]["priority"], 2);
    assert_eq!(lines[1]["overdue"], false);
    assert_eq!(lines[2]["due"], serde_json::Value::Null);

    let out = kairos(&db)
        .args(["done", "late", "--tz", "UTC"])
        .output()
        .expect("done");
    let v = &ok_lines(&out)[0];
    assert_eq!(v["done"], "late");
    assert_eq!(v["calendar"], "default");
    assert_eq!(uids(&db), ["tomorrow", "someday"]);

    for (args, needle) in [
        (["done", "late"], "already done"),
        (["done", "nope"], "no task with UID \"nope\""),
        (["done", "meeting"], "no task with UID \"meeting\""),
    ] {
        let out = kairos(&db).args(args).output().expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn the_daemon_fires_a_task_reminder_once_and_not_after_it_is_done() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("k.db");
    let at = |s: i64| (Utc::now() + chrono::Duration::seconds(s)).format("%Y%m%dT%H%M%SZ");
    // Due in 60 s; reminded 58 s and 45 s before (2 s and 15 s from now);
    // an event at 17 s shows the daemon went on past the second one.
    import(
        &db,
        &format!(
            "BEGIN:VTODO\nUID:pay\nSUMMARY:Pay rent\nDUE:{}\n\
             BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER;RELATED=END:-PT58S\nEND:VALARM\n\
             BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER;RELATED=END:-PT45S\nEND:VALARM\nEND:VTODO\n\
             BEGIN:VEVENT\nUID:sentinel\nDTSTART:{}\nSUMMARY:Sentinel\n\
             BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:PT0S\nEND:VALARM\nEND:VEVENT",
            at(60),
            at(17)
        ),
    );
    let d = start_with(&db, "--clock-offset=0");
    wait_for_file(Path::new(&format!("{}.lock", db.display())));
    let mut seen = HashMap::new();
    let mut statuses = Vec::new();
    let got = read(
        &d,
        1,
        Instant::now() + Duration::from_secs(15),
        &mut seen,
        &mut statuses,
    );
    assert_eq!(got, 1, "the first task reminder fired");
    assert!(seen.keys().all(|k| k.contains("/pay/")), "{seen:?}");
    let out = kairos(&db)
        .args(["done", "pay", "--tz", "UTC"])
        .output()
        .expect("done");
    assert_eq!(ok_lines(&out)[0]["dropped"], 1, "the second reminder");
    // The first, shown, is taken back as done; then the sentinel fires.
    let first = seen.keys().next().expect("first").clone();
    let mut withdrawn = Vec::new();
    read_each(
        &d,
        2,
        Instant::now() + Duration::from_secs(40),
        |v| match v["withdrawn"].as_str() {
            Some(w) => withdrawn.push((w.to_owned(), v["reason"].clone())),
            None => {
                *seen
                    .entry(v["key"].as_str().expect("key").into())
                    .or_default() += 1
            }
        },
    );
    assert_eq!(withdrawn, [(first, serde_json::json!("done"))]);
    assert!(
        seen.keys().any(|k| k.contains("/sentinel/")),
        "the sentinel fired: {seen:?}"
    );
    let pay: Vec<_> = seen.iter().filter(|(k, _)| k.contains("/pay/")).collect();
    assert_eq!(pay.len(), 1, "one task reminder, once: {seen:?}");
    assert!(pay.iter().all(|(_, n)| **n == 1), "{seen:?}");
}
