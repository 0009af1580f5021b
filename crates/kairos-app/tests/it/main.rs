//! kairos-app on a real SQLite file: what the desktop's IPC commands do.

mod caldav;
mod caldav_edit;
mod calendars;
mod drag;
mod editing;
mod feeds;
mod history;
mod keys;
mod reminders;
mod settings;
mod sync;
mod tasks;
mod views;

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use kairos_app::App;
use kairos_app::api::{AlarmSpec, EventDraft, EventRef, Related, SaveEvent, Scope};

/// A fresh database in its own temp dir (kept alive by the returned guard).
pub fn app(tz: &str, now: &str) -> (App, tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("kairos.db");
    let app = App::open(&path, tz, t(now)).expect("open");
    (app, dir, path)
}

/// An instant from RFC 3339.
pub fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .expect("instant")
        .with_timezone(&Utc)
}

/// The default calendar's id.
pub fn cal(app: &App) -> i64 {
    app.list_calendars().expect("calendars")[0].id
}

/// A timed draft in `tz`.
pub fn draft(cal: i64, title: &str, start: &str, end: &str, tz: &str) -> EventDraft {
    EventDraft {
        calendar_id: cal,
        title: title.into(),
        all_day: false,
        start: start.into(),
        end: end.into(),
        tz: tz.into(),
        location: String::new(),
        notes: String::new(),
        rrule: None,
        alarms: vec![AlarmSpec::Before {
            minutes: 15,
            related: Related::Start,
            again: None,
        }],
        task: None,
    }
}

/// Creates an event; returns its ref.
pub fn create(app: &mut App, d: EventDraft, now: &str) -> EventRef {
    app.save_event(
        SaveEvent {
            event: None,
            scope: Scope::All,
            draft: d,
        },
        t(now),
    )
    .expect("save")
}
