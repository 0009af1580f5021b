//! Helpers: temp directories, times, instances, raw file access.

use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use kairos_store::{CalendarId, NewInstance, Options, Store};
use tempfile::TempDir;

/// A fresh directory (removed when dropped) and the database path inside it.
pub fn temp_db() -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kairos.db");
    (dir, path)
}

/// Options with a short busy timeout, so a lock test takes milliseconds.
pub fn quick(busy_ms: u64) -> Options {
    Options {
        busy_timeout: Duration::from_millis(busy_ms),
        ..Options::default()
    }
}

/// `m` minutes after 2026-03-23 08:00 UTC.
pub fn t(m: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 23, 8, 0, 0).unwrap() + TimeDelta::minutes(m)
}

/// A pending instance of event `uid` with trigger `at` and rule version 1.
pub fn inst(cal: CalendarId, uid: &str, occurrence: &str, at: DateTime<Utc>) -> NewInstance {
    NewInstance {
        key: format!("work/{uid}/{occurrence}/#0"),
        calendar: cal,
        event_uid: uid.to_owned(),
        occurrence: occurrence.to_owned(),
        alarm: "#0".to_owned(),
        repetition: 0,
        rule_version: 1,
        trigger_at: at,
        snooze_of: None,
        payload: format!(r#"{{"summary":"{uid}"}}"#),
    }
}

/// A store at `path` with calendar "work".
pub fn store_with_calendar(path: &Path) -> (Store, CalendarId) {
    let mut store = Store::open(path).unwrap();
    let cal = store.ensure_calendar("work", t(0)).unwrap();
    (store, cal)
}

/// The file's bytes, to prove a refused open changed nothing.
pub fn bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

/// A raw connection, for setting up files the store must refuse and for
/// checking what the store cannot be asked about through its API.
pub fn raw(path: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(path).unwrap()
}
