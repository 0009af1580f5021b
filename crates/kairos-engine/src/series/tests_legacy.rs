//! A database as Kairos wrote it before schema 9 (every component a block
//! of iCalendar text): opened by this version, converted in place, with
//! every event kept and every pending reminder key unchanged.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use kairos_core::Limits;
use kairos_store::{Form, State, Store};

use super::{component_text, convert_legacy, ics_block, read_calendar, typed};
use crate::clock::ManualClock;
use crate::engine::{Config, Engine};
use crate::import::{MATERIALISED_UNTIL, import};

/// The core's real-world and interop files: events, tasks, overrides,
/// alarms, custom and Windows zones.
fn files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../kairos-core/tests");
    let mut out = Vec::new();
    for dir in ["corpus-real", "data/interop", "data/rfc5545"] {
        for e in std::fs::read_dir(root.join(dir))
            .expect("corpus dir")
            .flatten()
        {
            if e.path().extension().is_some_and(|x| x == "ics") {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

fn pending_keys(engine: &mut Engine) -> Vec<String> {
    let mut keys: Vec<String> = engine
        .store()
        .in_state(State::Pending, 1_000_000)
        .expect("pending")
        .into_iter()
        .map(|i| i.key)
        .collect();
    keys.sort();
    keys
}

/// A calendar exported as the app's `export_ics` writes it.
fn export(c: &kairos_store::Calendar, read: &kairos_core::model::Calendar) -> String {
    let named = kairos_core::model::Calendar {
        name: Some(c.name.clone()),
        ..read.clone()
    };
    kairos_core::ics::write_calendar(&named, DateTime::<Utc>::UNIX_EPOCH)
}

fn rematerialise(engine: &mut Engine, now: DateTime<Utc>) -> usize {
    engine
        .store()
        .meta_set(MATERIALISED_UNTIL, &now.to_rfc3339())
        .expect("reset horizon");
    engine.materialise().expect("materialise")
}

/// Turns the database at `path` back into schema 8 (what 0009 and later
/// added taken away): each row the text block the old writer stored.
/// Returns the rows as they were.
fn to_schema_8(path: &Path) -> Vec<kairos_store::StoredEvent> {
    let rows = Store::open(path).expect("open").all_events().expect("rows");
    let c = rusqlite::Connection::open(path).expect("raw");
    for r in &rows {
        let ev = typed::from_stored(&r.body).expect("typed");
        c.execute(
            "UPDATE events SET body = ?1 WHERE calendar_id = ?2 AND uid = ?3
             AND recurrence_id = ?4",
            rusqlite::params![ics_block(&ev), r.calendar.0, r.uid, r.recurrence_id],
        )
        .expect("old text");
    }
    c.execute_batch(
        "ALTER TABLE caldav_accounts DROP COLUMN ca_pem;
         DROP INDEX events_legacy;
         ALTER TABLE events DROP COLUMN form;
         ALTER TABLE events RENAME COLUMN body TO ics;
         PRAGMA user_version = 8;",
    )
    .expect("schema 8");
    rows
}

/// `kairos import` of an unchanged file into a database of text rows
/// that no engine host has converted yet: nothing changed, and a reminder
/// that fell due while nothing ran stays pending (for the catch-up), not
/// dropped by a re-plan.
#[test]
fn reimporting_an_unchanged_file_into_text_rows_changes_nothing_and_keeps_what_fell_due() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("kairos.db");
    let t0: DateTime<Utc> = "2026-03-01T08:00:00Z".parse().expect("t0");
    let text = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\nBEGIN:VEVENT\r\n\
                UID:pill\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20260301T090000Z\r\n\
                SUMMARY:Pill\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:Pill\r\n\
                TRIGGER:PT0M\r\nEND:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n";
    let cal = kairos_core::ics::parse_calendar(text.as_bytes(), &Limits::default()).expect("cal");
    let horizon = Duration::days(2);
    {
        let mut store = Store::open(&path).expect("open");
        import(&mut store, "Meds", &cal, t0, horizon, Tz::UTC).expect("import");
    }
    to_schema_8(&path);
    let mut store = Store::open(&path).expect("migrate to 9");
    let pending = |s: &Store| -> Vec<String> {
        s.in_state(State::Pending, 100)
            .expect("pending")
            .into_iter()
            .map(|i| i.key)
            .collect()
    };
    let before = pending(&store);
    assert_eq!(before.len(), 1, "{before:?}");
    // Two hours later the 09:00 reminder is due and nothing fired it.
    let later = t0 + Duration::hours(2);
    let report = import(&mut store, "Meds", &cal, later, horizon, Tz::UTC).expect("re-import");
    assert_eq!(report.changed, 0, "{report:?}");
    assert_eq!(pending(&store), before, "the due reminder was dropped");
}

#[test]
fn a_database_of_text_rows_converts_in_place_and_keeps_every_reminder_key() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("kairos.db");
    let now: DateTime<Utc> = "2025-01-01T00:00:00Z".parse().expect("now");
    let horizon = Duration::days(3 * 365);
    let config = Config {
        horizon,
        ..Config::default()
    };
    let mut calendars = Vec::new();
    {
        let mut store = Store::open(&path).expect("open");
        for (i, f) in files().iter().enumerate() {
            let bytes = std::fs::read(f).expect("read");
            let Ok((cal, _)) = kairos_core::ics::parse_calendar_lenient(&bytes, &Limits::default())
            else {
                continue;
            };
            let name = format!("cal{i}");
            if import(&mut store, &name, &cal, now, horizon, Tz::UTC).is_ok() {
                calendars.push((name, cal));
            }
        }
    }
    assert!(
        calendars.len() > 20,
        "only {} files imported",
        calendars.len()
    );

    // Back to schema 8: each row the text block the old writer stored.
    let rows = to_schema_8(&path);

    // Opened by this version: every row is text until converted, and read
    // by the old path, which plans exactly the keys the import planned.
    let store = Store::open(&path).expect("migrate to 9");
    let old = store.all_events().expect("rows");
    assert_eq!(old.len(), rows.len());
    assert!(old.iter().all(|r| r.form == Form::Ics));
    let clock = Arc::new(ManualClock::new(now));
    let mut engine = Engine::new(store, clock, Vec::new(), config);
    assert_eq!(rematerialise(&mut engine, now), 0, "old path: new keys");
    let before = pending_keys(&mut engine);
    assert!(
        before.len() > 100,
        "only {} pending reminders",
        before.len()
    );
    let cals = engine.store().calendars().expect("calendars");
    let read_old: Vec<_> = cals
        .iter()
        .map(|c| read_calendar(&engine.store().events_of(c.id).expect("rows"), &c.name))
        .collect::<Result<_, _>>()
        .expect("old read");
    let exported_old: Vec<String> = cals
        .iter()
        .zip(&read_old)
        .map(|(c, r)| export(c, r))
        .collect();

    // A row that does not read stays text, and is reported.
    let broken = "BEGIN:VEVENT\r\nUID:broken\r\nDTSTART:garbage\r\nEND:VEVENT";
    let cal0 = cals[0].id;
    {
        let c = rusqlite::Connection::open(&path).expect("raw");
        c.execute(
            "INSERT INTO events (calendar_id, uid, recurrence_id, body, rule_version, updated_at)
             VALUES (?1, 'broken', '', ?2, 1, 0)",
            rusqlite::params![cal0.0, broken],
        )
        .expect("broken row");
    }
    let conv = convert_legacy(engine.store()).expect("convert");
    assert_eq!(conv.converted, rows.len());
    assert_eq!(conv.refused.len(), 1, "{:?}", conv.refused);
    assert_eq!(
        (
            conv.refused[0].calendar.as_str(),
            conv.refused[0].uid.as_str()
        ),
        (cals[0].name.as_str(), "broken")
    );
    assert!(
        conv.refused[0].reason.contains("DTSTART"),
        "{:?}",
        conv.refused
    );
    let kept = engine.store().get_event(cal0, "broken", "").expect("get");
    let kept = kept.expect("the broken row is kept");
    assert_eq!((kept.form, kept.body.as_str()), (Form::Ics, broken));
    engine
        .store()
        .delete_event(cal0, "broken", None)
        .expect("rm");

    // Converted: the same events, the same text, the same keys.
    let after_rows = engine.store().all_events().expect("rows");
    assert!(after_rows.iter().all(|r| r.form == Form::Typed));
    for (r, o) in after_rows.iter().zip(&old) {
        assert_eq!((&r.uid, &r.recurrence_id), (&o.uid, &o.recurrence_id));
        assert_eq!(r.rule_version, o.rule_version);
        assert_eq!(component_text(r, "").expect("text"), o.body, "{}", r.uid);
    }
    for ((c, o), text) in cals.iter().zip(&read_old).zip(&exported_old) {
        let rows = engine.store().events_of(c.id).expect("rows");
        let typed = read_calendar(&rows, &c.name).expect("typed read");
        assert_eq!(&typed, o);
        assert_eq!(&export(c, &typed), text, "export of {} changed", c.name);
    }
    assert_eq!(rematerialise(&mut engine, now), 0, "typed path: new keys");
    assert_eq!(pending_keys(&mut engine), before, "keys moved");

    // And the write path stores exactly what was converted: re-importing
    // the same files changes nothing.
    for (name, cal) in &calendars {
        let r = import(engine.store(), name, cal, now, horizon, Tz::UTC).expect("re-import");
        assert_eq!((r.changed, r.dropped, r.scheduled), (0, 0, 0), "{name}");
    }
    assert_eq!(pending_keys(&mut engine), before);
}
