//! The calendars sidebar.

use kairos_app::api::{AlarmSpec, CalendarInput, Related};

use super::{app, t};

#[test]
fn create_rename_default_alarms_delete() {
    let (mut a, _d, _) = app("UTC", "2026-03-01T00:00:00Z");
    let now = t("2026-03-01T00:00:00Z");
    let work = a
        .save_calendar(
            CalendarInput {
                id: None,
                name: "Work".into(),
                color: "#c4432b".into(),
                visible: true,
                default_alarms: vec![AlarmSpec::Before {
                    minutes: 10,
                    related: Related::Start,
                }],
            },
            now,
        )
        .expect("create");
    let d = a
        .new_draft(work.id, "2026-03-02T09:00", now)
        .expect("draft");
    assert_eq!(d.alarms, work.default_alarms);
    assert_eq!(
        (d.start.as_str(), d.end.as_str(), d.tz.as_str()),
        ("2026-03-02T09:00", "2026-03-02T10:00", "UTC")
    );
    let dup = a.save_calendar(
        CalendarInput {
            id: None,
            name: "Work".into(),
            color: "#000000".into(),
            visible: true,
            default_alarms: vec![],
        },
        now,
    );
    assert!(dup.expect_err("dup").message.contains("exists"));
    let bad = a.save_calendar(
        CalendarInput {
            id: None,
            name: "X".into(),
            color: "red".into(),
            visible: true,
            default_alarms: vec![],
        },
        now,
    );
    assert!(bad.expect_err("colour").message.contains("colour"));
    a.delete_calendar(work.id, now).expect("delete");
    let left = a.list_calendars().expect("list");
    assert_eq!(left.len(), 1);
    assert!(
        a.delete_calendar(left[0].id, now)
            .expect_err("last")
            .message
            .contains("last")
    );
}
