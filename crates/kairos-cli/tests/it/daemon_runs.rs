//! The real daemon: one per database, woken by an import while it sleeps,
//! and five thousand reminders due in the same second.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chrono::Utc;

use crate::daemon::{kairos, read, read_each, start, wait_for_file};

#[test]
fn a_second_daemon_on_the_same_database_is_refused() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("k.db");
    let mut first = start(&db, 0);
    // Wait (bounded) until the first holds the lock: its PID is in the lock
    // file (on Windows, whose locks are mandatory, in `<lock file>.pid`:
    // engine platform/holder.rs). (Waiting only for the database file
    // raced: a second daemon started before the first took the lock won
    // it, and ran on.)
    let lock = if cfg!(windows) {
        PathBuf::from(format!("{}.lock.pid", db.display()))
    } else {
        PathBuf::from(format!("{}.lock", db.display()))
    };
    let pid = first.child.id().to_string();
    let until = Instant::now() + Duration::from_secs(20);
    while std::fs::read_to_string(&lock).map_or(true, |s| s.trim() != pid) && Instant::now() < until
    {
        std::thread::yield_now();
    }
    let mut out = None;
    while Instant::now() < until {
        let o = kairos(&db)
            .args(["daemon", "--sink", "stdout"])
            .output()
            .expect("second");
        if !o.status.success() {
            out = Some(o);
            break;
        }
    }
    first.child.kill().expect("stop");
    first.child.wait().expect("reaped");
    let out = out.expect("the second daemon was refused within 20 s");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("another kairos daemon (pid"), "{err}");
    assert!(
        err.contains(&first.child.id().to_string()),
        "names the first daemon's pid: {err}"
    );
}

#[test]
fn an_import_while_the_daemon_sleeps_wakes_it_and_snooze_fires_again() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("k.db");
    // Nothing due: the daemon arms its timer for the horizon refresh (a day).
    let mut d = start(&db, 0);
    wait_for_file(Path::new(&format!("{}.lock", db.display())));
    let at = (Utc::now() + chrono::Duration::seconds(2)).format("%Y%m%dT%H%M%SZ");
    let ics = format!(
        "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:late-import\r\nDTSTART:{at}\r\nSUMMARY:Imported\r\n\
         BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:PT0S\r\nEND:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    );
    let file = dir.path().join("i.ics");
    std::fs::write(&file, ics).expect("write");
    assert!(
        kairos(&db)
            .arg("import")
            .arg(&file)
            .args(["--tz", "UTC"])
            .status()
            .expect("import")
            .success()
    );
    let mut seen = HashMap::new();
    let mut statuses = Vec::new();
    let got = read(
        &d,
        1,
        Instant::now() + Duration::from_secs(15),
        &mut seen,
        &mut statuses,
    );
    assert_eq!(
        got, 1,
        "the running daemon fired the reminder imported after it started"
    );
    assert_eq!(statuses, ["on_time"]);
    // Snooze it for a second: the daemon is told, takes back what it
    // showed, and fires the snooze.
    let key = seen.keys().next().expect("key").clone();
    assert!(
        kairos(&db)
            .args(["snooze", &key, "1s"])
            .status()
            .expect("snooze")
            .success()
    );
    let mut withdrawn = Vec::new();
    let got = read_each(
        &d,
        2,
        Instant::now() + Duration::from_secs(15),
        |v| match v["withdrawn"].as_str() {
            Some(w) => withdrawn.push((w.to_owned(), v["reason"].clone())),
            None => {
                *seen
                    .entry(v["key"].as_str().expect("key").into())
                    .or_default() += 1
            }
        },
    );
    assert_eq!(got, 2, "taken back, then the snooze fired");
    assert_eq!(withdrawn, [(key.clone(), serde_json::json!("snoozed"))]);
    assert!(
        seen.keys()
            .any(|k| k.starts_with(&format!("{key}~snooze@"))),
        "{seen:?}"
    );
    // `why` tells the story of the original: snoozed.
    let why = kairos(&db).args(["why", &key]).output().expect("why");
    assert!(
        String::from_utf8_lossy(&why.stdout).contains("snoozed"),
        "{}",
        String::from_utf8_lossy(&why.stdout)
    );
    d.child.kill().expect("stop");
    d.child.wait().expect("reaped");
}

#[test]
fn five_thousand_reminders_due_in_the_same_second_all_fire_once() {
    const N: usize = 5000;
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("k.db");
    let at = (Utc::now() + chrono::Duration::seconds(2)).format("%Y%m%dT%H%M%SZ");
    let mut ics = String::from("BEGIN:VCALENDAR\r\n");
    for i in 0..N {
        ics.push_str(&format!(
            "BEGIN:VEVENT\r\nUID:s{i}\r\nDTSTART:{at}\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:PT0S\r\nEND:VALARM\r\nEND:VEVENT\r\n"
        ));
    }
    ics.push_str("END:VCALENDAR\r\n");
    let file = dir.path().join("s.ics");
    std::fs::write(&file, ics).expect("write");
    assert!(
        kairos(&db)
            .arg("import")
            .arg(&file)
            .args(["--tz", "UTC"])
            .status()
            .expect("import")
            .success()
    );
    let mut d = start(&db, 0);
    let (mut seen, mut statuses) = (HashMap::new(), Vec::new());
    let got = read(
        &d,
        N,
        Instant::now() + Duration::from_secs(90),
        &mut seen,
        &mut statuses,
    );
    d.child.kill().expect("stop");
    d.child.wait().expect("reaped");
    assert_eq!((got, seen.len()), (N, N), "all {N} fired, each once");
}
