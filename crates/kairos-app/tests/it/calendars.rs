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
                    again: None,
                }],
                work_week: 31,
                holidays: false,
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
            work_week: 31,
            holidays: false,
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
            work_week: 31,
            holidays: false,
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

#[test]
fn a_holiday_calendar_and_a_working_week_move_working_day_reminders() {
    // Thursday 2 April: the 48-hour horizon reaches Friday morning.
    let (mut a, dir, _) = app("Europe/Berlin", "2026-04-02T06:00:00Z");
    let now = t("2026-04-02T06:00:00Z");
    let import = |a: &mut kairos_app::App, name: &str, body: &str| {
        let file = dir.path().join(format!("{name}.ics"));
        let text = format!(
            "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\n{}END:VCALENDAR\r\n",
            body.replace('\n', "\r\n")
        );
        std::fs::write(&file, text).expect("write");
        a.import_ics(
            &kairos_app::api::ImportIcs {
                path: file.to_string_lossy().into_owned(),
                calendar: name.into(),
            },
            now,
        )
        .expect("import")
    };
    import(
        &mut a,
        "Feiertage",
        "BEGIN:VEVENT\nUID:gf\nSUMMARY:Karfreitag\nDTSTART;VALUE=DATE:20260403\nEND:VEVENT\n",
    );
    // Due Monday 6 April; reminded one working day before at 09:00.
    import(
        &mut a,
        "Work",
        "BEGIN:VEVENT\nUID:report\nSUMMARY:Report\nDTSTART;TZID=Europe/Berlin:20260406T090000\n\
         BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT15M\nX-KAIROS-WORKDAYS:v=1;before=1;at=09:00\n\
         END:VALARM\nEND:VEVENT\n",
    );
    let pending = |a: &mut kairos_app::App| -> Vec<(String, String)> {
        a.store()
            .due(t("2027-01-01T00:00:00Z"), 10)
            .expect("due")
            .into_iter()
            .map(|i| (i.key, i.trigger_at.to_rfc3339()))
            .collect()
    };
    let before = pending(&mut a);
    assert_eq!(before.len(), 1);
    assert_eq!(before[0].1, "2026-04-03T07:00:00+00:00", "Friday");
    let cals = a.list_calendars().expect("list");
    let feed = cals.iter().find(|c| c.name == "Feiertage").expect("feed");
    assert_eq!((feed.work_week, feed.holidays), (31, false));
    let input = |c: &kairos_app::api::CalendarInfo, work_week: u8, holidays: bool| CalendarInput {
        id: Some(c.id),
        name: c.name.clone(),
        color: c.color.clone(),
        visible: c.visible,
        default_alarms: c.default_alarms.clone(),
        work_week,
        holidays,
    };
    let saved = a.save_calendar(input(feed, 31, true), now).expect("mark");
    assert!(saved.holidays);
    let after = pending(&mut a);
    assert_eq!(
        after[0].1, "2026-04-02T07:00:00+00:00",
        "Thursday: Good Friday is off"
    );
    assert_eq!(after[0].0, before[0].0, "same reminder, same key");
    // Good Friday off again, but the event's calendar works Monday to
    // Thursday: Thursday still, same key.
    let feed = a
        .list_calendars()
        .expect("list")
        .into_iter()
        .find(|c| c.name == "Feiertage")
        .expect("feed");
    a.save_calendar(input(&feed, 31, false), now)
        .expect("unmark");
    assert_eq!(
        pending(&mut a)[0].1,
        "2026-04-03T07:00:00+00:00",
        "Friday again"
    );
    let work = cals.iter().find(|c| c.name == "Work").expect("work");
    let saved = a
        .save_calendar(input(work, 0b000_1111, false), now)
        .expect("week");
    assert_eq!(saved.work_week, 0b000_1111);
    assert_eq!(
        pending(&mut a),
        [(before[0].0.clone(), "2026-04-02T07:00:00+00:00".to_owned())]
    );
    let err = a
        .save_calendar(input(work, 0, false), now)
        .expect_err("no day");
    assert!(err.message.starts_with("working week:"), "{}", err.message);
}
