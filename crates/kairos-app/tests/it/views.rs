//! The views' window query.

use kairos_app::api::{CalendarInput, ExportIcs, ImportIcs, RangeQuery};

use super::{app, cal, create, draft, t};

#[test]
fn display_zone_shows_wall_times_and_hidden_calendars_are_left_out() {
    let (mut a, _d, _) = app("Asia/Tokyo", "2026-03-01T00:00:00Z");
    let c = cal(&a);
    // 09:00 New York on 9 March (EDT since the 8th) is 22:00 in Tokyo.
    create(
        &mut a,
        draft(
            c,
            "NY sync",
            "2026-03-09T09:00",
            "2026-03-09T10:00",
            "America/New_York",
        ),
        "2026-03-01T00:00:00Z",
    );
    let q = RangeQuery {
        from: "2026-03-09T00:00".into(),
        to: "2026-03-10T00:00".into(),
    };
    let v = a.occurrences(&q).expect("o");
    assert_eq!(
        (v[0].start.as_str(), v[0].end.as_str()),
        ("2026-03-09T22:00:00", "2026-03-09T23:00:00")
    );
    let info = a.list_calendars().expect("c").remove(0);
    a.save_calendar(
        CalendarInput {
            id: Some(info.id),
            name: info.name,
            color: info.color,
            visible: false,
            default_alarms: vec![],
        },
        t("2026-03-01T00:00:00Z"),
    )
    .expect("hide");
    assert!(a.occurrences(&q).expect("o").is_empty());
}

#[test]
fn ranges_are_checked() {
    let (a, _d, _) = app("UTC", "2026-03-01T00:00:00Z");
    for (from, to) in [
        ("2026-03-02T00:00", "2026-03-01T00:00"),
        ("2026-01-01T00:00", "2027-06-01T00:00"),
        ("yesterday", "2026-03-01T00:00"),
    ] {
        assert!(
            a.occurrences(&RangeQuery {
                from: from.into(),
                to: to.into()
            })
            .is_err(),
            "{from}..{to}"
        );
    }
}

#[test]
fn import_then_export_keeps_events_and_reports_errors_by_line() {
    let (mut a, d, _) = app("Europe/Berlin", "2026-03-01T00:00:00Z");
    let src = d.path().join("in.ics");
    std::fs::write(
        &src,
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:a@x\r\nDTSTART;TZID=Europe/Berlin:20260305T090000\r\n\
         RRULE:FREQ=DAILY;COUNT=3\r\nSUMMARY:Imported\r\nX-CUSTOM:kept\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\n\
         TRIGGER:-PT5M\r\nEND:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
    )
    .expect("write");
    let s = a
        .import_ics(
            &ImportIcs {
                path: src.display().to_string(),
                calendar: "Work".into(),
            },
            t("2026-03-01T00:00:00Z"),
        )
        .expect("import");
    assert_eq!((s.events, s.changed), (1, 1));
    let q = RangeQuery {
        from: "2026-03-01T00:00".into(),
        to: "2026-03-10T00:00".into(),
    };
    assert_eq!(a.occurrences(&q).expect("o").len(), 3);
    let out = d.path().join("out.ics");
    let n = a
        .export_ics(
            &ExportIcs {
                path: out.display().to_string(),
                calendar_id: Some(s.calendar_id),
            },
            t("2026-03-01T00:00:00Z"),
        )
        .expect("export");
    assert_eq!(n, 1);
    let text = std::fs::read_to_string(&out).expect("read");
    assert!(
        text.contains("X-CUSTOM:kept") && text.contains("RRULE:FREQ=DAILY;COUNT=3"),
        "{text}"
    );
    std::fs::write(&src, "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:b\r\nDTSTART:2026030\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n").expect("write");
    let e = a
        .import_ics(
            &ImportIcs {
                path: src.display().to_string(),
                calendar: "Work".into(),
            },
            t("2026-03-01T00:00:00Z"),
        )
        .expect_err("bad");
    assert!(
        e.message.contains("line 4") && e.message.contains("DTSTART"),
        "{}",
        e.message
    );
    let _ = cal(&a);
}
