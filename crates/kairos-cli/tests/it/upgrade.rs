//! A database written by the previous schema (3: keys began with the
//! calendar's escaped name) opened by today's binary: keys now begin with
//! the calendar's uid, and what was delivered or dismissed before the
//! upgrade does not fire again. The fixture was made by the old binary
//! (`fixtures/make_schema3_db.sh`).

use std::path::Path;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use crate::daemon::{kairos, start_with};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/schema3.db");

fn offset_to(at: &str) -> String {
    let at: DateTime<Utc> = at.parse().expect("instant");
    format!("--clock-offset={}", (at - Utc::now()).num_seconds())
}

fn upcoming(db: &Path) -> Vec<serde_json::Value> {
    crate::ok_lines(&kairos(db).arg("upcoming").output().expect("upcoming"))
}

#[test]
fn an_upgraded_database_keys_by_calendar_uid_and_fires_nothing_twice() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("old.db");
    std::fs::copy(FIXTURE, &db).expect("copy fixture");

    let pending = upcoming(&db);
    assert_eq!(pending.len(), 1, "{pending:?}");
    let key = pending[0]["key"].as_str().expect("key");
    let (cal, rest) = key.split_once('/').expect("calendar part");
    assert_eq!(cal.len(), 32, "a 32-hex-digit uid, not the name: {key}");
    assert!(cal.chars().all(|c| c.is_ascii_hexdigit()), "{key}");
    assert_eq!(rest, "pending@fixture/2030-01-01T12:00:00Z/#0@67287e6c");

    // The history moved with the key.
    let why = kairos(&db).args(["why", key]).output().expect("why");
    let why = String::from_utf8_lossy(&why.stdout);
    assert!(why.contains("-> pending"), "{why}");

    // A daemon at 12:00, after all three triggers: only the pending one
    // fires (as missed); the delivered and the dismissed ones stay quiet.
    let d = start_with(&db, &offset_to("2030-01-01T12:00:00Z"));
    let first = d
        .lines
        .recv_timeout(Duration::from_secs(20))
        .expect("the pending reminder fires");
    let v: serde_json::Value = serde_json::from_str(&first).expect("json");
    assert_eq!(v["key"], key);
    let until = Instant::now() + Duration::from_secs(2);
    // Whatever else would fire is due already: it would come at once.
    while let Some(left) = until.checked_duration_since(Instant::now()) {
        if let Ok(line) = d.lines.recv_timeout(left) {
            panic!("fired again after the upgrade: {line}");
        }
    }
    drop(d);
    let out = kairos(&db).arg("log").output().expect("log");
    let log = String::from_utf8_lossy(&out.stdout);
    assert!(log.contains("delivered@fixture"), "old history kept: {log}");
    assert_eq!(
        log.matches("/delivered@fixture/").count(),
        log.matches(&format!("{cal}/delivered@fixture/")).count(),
        "{log}"
    );
}
