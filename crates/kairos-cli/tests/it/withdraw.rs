//! What the daemon showed is taken back when it is answered in the same
//! database by another process: `kairos dismiss`, `kairos snooze`, a
//! re-imported file that marks a task done, `kairos delete` of its event.
//! One `withdrawn` line each, once.

use std::path::Path;
use std::time::{Duration, Instant};

use chrono::Utc;
use serde_json::Value;

use crate::daemon::{Daemon, kairos, start_with, wait_for_file};

/// The next stdout line of `d` that `pick` accepts, within `secs`; the
/// lines skipped on the way are returned too.
fn next(d: &Daemon, secs: u64, what: &str, pick: impl Fn(&Value) -> bool) -> (Value, Vec<Value>) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut skipped = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = d
            .lines
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("{what}: no line within {secs} s (saw {skipped:?})"));
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
        if pick(&v) {
            return (v, skipped);
        }
        skipped.push(v);
    }
}

fn at(secs: i64) -> String {
    (Utc::now() + chrono::Duration::seconds(secs))
        .format("%Y%m%dT%H%M%SZ")
        .to_string()
}

fn import(db: &Path, dir: &Path, name: &str, body: &str) {
    let file = dir.join(name);
    std::fs::write(
        &file,
        format!("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\n{body}END:VCALENDAR\r\n"),
    )
    .expect("write");
    let ok = kairos(db)
        .arg("import")
        .arg(&file)
        .args(["--tz", "UTC", "--calendar", "t"])
        .status()
        .expect("import")
        .success();
    assert!(ok, "import {name}");
}

fn event(uid: &str, secs: i64) -> String {
    format!(
        "BEGIN:VEVENT\r\nUID:{uid}\r\nDTSTART:{}\r\nSUMMARY:{uid}\r\n\
         BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:PT0S\r\nEND:VALARM\r\nEND:VEVENT\r\n",
        at(secs)
    )
}

fn fired(d: &Daemon, uid: &str) -> String {
    let (v, _) = next(d, 20, uid, |v| {
        v["key"]
            .as_str()
            .is_some_and(|k| k.contains(&format!("/{uid}/")))
    });
    v["key"].as_str().expect("key").to_owned()
}

/// Runs `kairos ARGS` on `db`; the daemon's next line takes back `key`
/// for `reason`, with nothing before it. Returns that line.
fn taken_back(d: &Daemon, db: &Path, args: &[&str], key: &str, reason: &str) -> Value {
    let ok = kairos(db).args(args).status().expect("kairos");
    assert!(ok.success(), "kairos {args:?}");
    let (w, skipped) = next(d, 20, key, |v| v["withdrawn"].is_string());
    assert!(skipped.is_empty(), "{skipped:?}");
    assert_eq!(w["withdrawn"], key);
    assert_eq!(w["reason"], reason);
    w
}

/// Imports a new event `uid` due in a few seconds; the daemon's next line
/// fires it (nothing else taken back or fired before it).
fn next_is_a_new_fire(d: &Daemon, db: &Path, dir: &Path, uid: &str) {
    import(db, dir, &format!("{uid}.ics"), &event(uid, 4));
    let (v, skipped) = next(d, 20, uid, |v| v["key"].is_string());
    assert!(skipped.is_empty(), "nothing else first: {skipped:?}");
    assert!(
        v["key"]
            .as_str()
            .is_some_and(|k| k.contains(&format!("/{uid}/"))),
        "{v}"
    );
}

#[test]
fn a_dismiss_or_snooze_from_another_process_takes_back_what_the_daemon_showed_once() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("k.db");
    let d = start_with(&db, "--clock-offset=0");
    wait_for_file(Path::new(&format!("{}.lock", db.display())));
    // A few seconds ahead: an import under Wine can take more than one.
    import(
        &db,
        dir.path(),
        "a.ics",
        &(event("one", 4) + &event("two", 4)),
    );
    let one = fired(&d, "one");
    let two = fired(&d, "two");

    let w = taken_back(&d, &db, &["dismiss", &one], &one, "dismissed");
    assert_eq!(w["by"], "this device");
    taken_back(&d, &db, &["snooze", &two, "1h"], &two, "snoozed");
    // Once: another change wakes the daemon again; the next line is the
    // new reminder, not a second withdrawal of the first two.
    next_is_a_new_fire(&d, &db, dir.path(), "three");
}

#[test]
fn a_task_marked_done_by_a_reimported_file_is_taken_back_as_done() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("k.db");
    let d = start_with(&db, "--clock-offset=0");
    wait_for_file(Path::new(&format!("{}.lock", db.display())));
    let due = at(3600);
    let task = |status: &str| {
        format!(
            "BEGIN:VTODO\r\nUID:pay\r\nSUMMARY:Pay rent\r\nDUE:{due}\r\n{status}\
             BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER;RELATED=END:-PT3596S\r\nEND:VALARM\r\n\
             END:VTODO\r\n"
        )
    };
    import(&db, dir.path(), "open.ics", &task(""));
    let key = fired(&d, "pay");
    import(&db, dir.path(), "done.ics", &task("STATUS:COMPLETED\r\n"));
    let (w, skipped) = next(&d, 20, "the task taken back", |v| {
        v["withdrawn"].is_string()
    });
    assert!(skipped.is_empty(), "{skipped:?}");
    assert_eq!(w["withdrawn"], key.as_str());
    assert_eq!(w["reason"], "done");
}

#[test]
fn an_event_deleted_by_another_process_takes_back_its_reminder_as_deleted() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("k.db");
    let d = start_with(&db, "--clock-offset=0");
    wait_for_file(Path::new(&format!("{}.lock", db.display())));
    import(
        &db,
        dir.path(),
        "a.ics",
        &(event("gone", 4) + &event("kept", 4)),
    );
    let gone = fired(&d, "gone");
    fired(&d, "kept");
    let args = ["delete", "gone", "--calendar", "t"];
    taken_back(&d, &db, &args, &gone, "deleted");
    // Only that one: the next line is a new reminder, not "kept" taken back.
    next_is_a_new_fire(&d, &db, dir.path(), "three");
}
