//! The views' window query, and the month grid's per-day cap.

use kairos_app::api::{
    CalendarInput, DayMore, ErrorKind, ExportIcs, ImportIcs, Occurrences, RangeQuery,
};
use kairos_app::{ApiResult, App};

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
        per_day: None,
    };
    let v = a.occurrences(&q).expect("o").items;
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
            work_week: 31,
            holidays: false,
        },
        t("2026-03-01T00:00:00Z"),
    )
    .expect("hide");
    assert!(a.occurrences(&q).expect("o").items.is_empty());
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
                to: to.into(),
                per_day: None,
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
        per_day: None,
    };
    assert_eq!(a.occurrences(&q).expect("o").items.len(), 3);
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
    // One good event beside the bad one: imported, the bad one listed.
    std::fs::write(
        &src,
        "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:b\r\nDTSTART:2026030\r\nEND:VEVENT\r\n\
        BEGIN:VEVENT\r\nUID:g\r\nDTSTART:20260302T090000Z\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
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
        .expect("the good one is imported");
    assert_eq!(s.events, 1);
    assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
    assert!(s.warnings[0].contains("uid b"), "{:?}", s.warnings);
    let _ = cal(&a);
}

const NOW: &str = "2026-03-01T00:00:00Z";

/// March 2026 in the display zone, at most `per_day` a day.
fn march(a: &App, per_day: Option<u32>) -> ApiResult<Occurrences> {
    a.occurrences(&RangeQuery {
        from: "2026-03-01T00:00".into(),
        to: "2026-04-01T00:00".into(),
        per_day,
    })
}

fn titles_on(o: &Occurrences, day: &str) -> Vec<String> {
    o.items
        .iter()
        .filter(|x| x.start.starts_with(day))
        .map(|x| x.title.clone())
        .collect()
}

fn more(date: &str, count: u32) -> DayMore {
    DayMore {
        date: date.into(),
        count,
    }
}

#[test]
fn a_day_over_the_cap_returns_the_cap_and_counts_the_rest() {
    let (mut a, _d, _) = app("UTC", NOW);
    let c = cal(&a);
    // Ten on the 10th (created latest first), two on the 11th.
    for i in (0..10).rev() {
        let (s, e) = (
            format!("2026-03-10T{:02}:00", 8 + i),
            format!("2026-03-10T{:02}:30", 8 + i),
        );
        create(&mut a, draft(c, &format!("E{i}"), &s, &e, "UTC"), NOW);
    }
    for (title, s, e) in [
        ("Lunch", "2026-03-11T12:00", "2026-03-11T13:00"),
        ("Gym", "2026-03-11T18:00", "2026-03-11T19:00"),
    ] {
        create(&mut a, draft(c, title, s, e, "UTC"), NOW);
    }
    let all = march(&a, None).expect("all");
    assert_eq!((all.items.len(), all.more.len()), (12, 0));

    let capped = march(&a, Some(3)).expect("capped");
    assert_eq!(titles_on(&capped, "2026-03-10"), ["E0", "E1", "E2"]);
    assert_eq!(capped.more, [more("2026-03-10", 7)]);
    // The day under the cap is as it was.
    let day11 = |o: &Occurrences| {
        o.items
            .iter()
            .filter(|x| x.start.starts_with("2026-03-11"))
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(day11(&capped), day11(&all));
    // Still by start overall.
    assert!(capped.items.windows(2).all(|w| w[0].start <= w[1].start));
    // The same answer every time.
    assert_eq!(march(&a, Some(3)).expect("again"), capped);
}

#[test]
fn all_day_and_multi_day_occurrences_are_kept_first_and_count_on_their_first_day() {
    let (mut a, _d, _) = app("UTC", NOW);
    let c = cal(&a);
    let mut holiday = draft(c, "Holiday", "2026-03-10", "2026-03-10", "UTC");
    holiday.all_day = true;
    holiday.alarms.clear();
    for d in [
        holiday,
        draft(c, "Standup", "2026-03-10T09:00", "2026-03-10T09:15", "UTC"),
        draft(c, "Early", "2026-03-10T07:00", "2026-03-10T08:00", "UTC"),
        // Ends at midnight: one day, not multi-day.
        draft(c, "Late", "2026-03-10T23:00", "2026-03-11T00:00", "UTC"),
        draft(
            c,
            "Conference",
            "2026-03-10T18:00",
            "2026-03-12T12:00",
            "UTC",
        ),
        draft(c, "A", "2026-03-11T09:00", "2026-03-11T10:00", "UTC"),
        draft(c, "B", "2026-03-11T09:00", "2026-03-11T10:00", "UTC"),
        draft(c, "C", "2026-03-11T10:00", "2026-03-11T11:00", "UTC"),
        // Began before the range: counts on its first day.
        draft(c, "Retreat", "2026-02-27T10:00", "2026-03-02T10:00", "UTC"),
        draft(c, "Brunch", "2026-03-01T11:00", "2026-03-01T12:00", "UTC"),
    ] {
        create(&mut a, d, NOW);
    }
    let o = march(&a, Some(3)).expect("capped");
    // Kept: the all-day and the multi-day one, then the earliest timed one;
    // listed by start.
    assert_eq!(
        titles_on(&o, "2026-03-10"),
        ["Holiday", "Early", "Conference"]
    );
    // The conference also covers the 11th but counts on the 10th only.
    assert_eq!(titles_on(&o, "2026-03-11"), ["A", "B", "C"]);
    assert_eq!(o.more, [more("2026-03-10", 2)]);

    let o = march(&a, Some(1)).expect("one a day");
    assert_eq!(titles_on(&o, "2026-02-27"), ["Retreat"]);
    assert_eq!(titles_on(&o, "2026-03-11"), ["A"], "same start: by title");
    assert_eq!(
        o.more,
        [
            more("2026-03-01", 1),
            more("2026-03-10", 4),
            more("2026-03-11", 2)
        ]
    );
}

#[test]
fn per_day_out_of_bounds_is_refused_naming_the_field() {
    let (a, _d, _) = app("UTC", NOW);
    for n in [0, 101, u32::MAX] {
        let e = march(&a, Some(n)).expect_err("bad per_day");
        assert_eq!(e.kind, ErrorKind::Invalid);
        assert!(e.message.contains("per_day"), "{}", e.message);
    }
    for n in [1, 100] {
        assert!(march(&a, Some(n)).is_ok(), "{n}");
    }
}

#[test]
fn the_day_is_the_display_zone_day() {
    let (mut a, _d, _) = app("Europe/Berlin", NOW);
    let c = cal(&a);
    // 23:30 UTC on the 10th is 00:30 on the 11th in Berlin (CET).
    create(
        &mut a,
        draft(c, "Night", "2026-03-10T23:30", "2026-03-10T23:45", "UTC"),
        NOW,
    );
    create(
        &mut a,
        draft(c, "Day", "2026-03-11T10:00", "2026-03-11T11:00", "UTC"),
        NOW,
    );
    let o = march(&a, Some(1)).expect("capped");
    assert_eq!(titles_on(&o, "2026-03-11"), ["Night"]);
    assert_eq!(o.items[0].start, "2026-03-11T00:30:00");
    assert_eq!(o.more, [more("2026-03-11", 1)]);
}

/// The window query reads a calendar a few hundred series at a time (to
/// keep its memory peak small): a calendar far larger than a chunk, with
/// series whose overrides sit next to chunk boundaries, answers exactly
/// what the core finds in the whole file, in start order.
#[test]
fn a_calendar_larger_than_a_chunk_answers_like_the_whole_file() {
    use std::fmt::Write as _;
    let (mut a, d, _) = app("UTC", "2026-03-01T00:00:00Z");
    let mut ics = String::from("BEGIN:VCALENDAR\r\nVERSION:2.0\r\n");
    for i in 0..900 {
        let day = 1 + i % 21;
        let hour = i % 24;
        if i % 3 == 0 {
            // A weekly series, its second occurrence moved an hour later.
            let _ = write!(
                ics,
                "BEGIN:VEVENT\r\nUID:s{i:04}\r\nDTSTART:202603{day:02}T{hour:02}0000Z\r\n\
                 DURATION:PT30M\r\nRRULE:FREQ=WEEKLY;COUNT=5\r\nSUMMARY:Series {i}\r\nEND:VEVENT\r\n\
                 BEGIN:VEVENT\r\nUID:s{i:04}\r\nRECURRENCE-ID:202603{d2:02}T{hour:02}0000Z\r\n\
                 DTSTART:202603{d2:02}T{h2:02}3000Z\r\nDURATION:PT30M\r\nSUMMARY:Moved {i}\r\nEND:VEVENT\r\n",
                d2 = day + 7,
                h2 = hour.min(22),
            );
        } else {
            let _ = write!(
                ics,
                "BEGIN:VEVENT\r\nUID:e{i:04}\r\nDTSTART:202603{day:02}T{hour:02}1500Z\r\n\
                 DTEND:202603{day:02}T{hour:02}4500Z\r\nSUMMARY:Single {i}\r\nEND:VEVENT\r\n"
            );
        }
    }
    ics.push_str("END:VCALENDAR\r\n");
    let src = d.path().join("big.ics");
    std::fs::write(&src, &ics).expect("write");
    a.import_ics(
        &ImportIcs {
            path: src.display().to_string(),
            calendar: "Big".into(),
        },
        t("2026-03-01T00:00:00Z"),
    )
    .expect("import");
    let whole = kairos_core::ics::parse_calendar(ics.as_bytes(), &kairos_core::Limits::default())
        .expect("parse");
    let (from, to) = (t("2026-03-01T00:00:00Z"), t("2026-04-12T00:00:00Z"));
    let want = kairos_core::query::occurrences(
        &whole,
        from - chrono::Duration::days(14),
        to,
        chrono_tz::UTC,
        &kairos_core::Limits::default(),
    )
    .expect("core");
    let mut want: Vec<(String, String)> = want
        .iter()
        .filter(|o| o.start.instant >= from)
        .map(|o| {
            (
                o.start.instant.format("%Y-%m-%dT%H:%M:%S").to_string(),
                o.event.summary.clone().unwrap_or_default(),
            )
        })
        .collect();
    want.sort();
    let got = a
        .occurrences(&RangeQuery {
            from: "2026-03-01T00:00".into(),
            to: "2026-04-12T00:00".into(),
            per_day: None,
        })
        .expect("occurrences")
        .items;
    assert!(
        got.windows(2).all(|w| w[0].start <= w[1].start),
        "in start order"
    );
    let got: Vec<(String, String)> = got.into_iter().map(|o| (o.start, o.title)).collect();
    // 600 singles and most of 300 series × 5 (a moved one not doubled).
    assert!(got.len() > 1_900, "{}", got.len());
    assert_eq!(got, want);
    assert!(got.iter().any(|(_, t)| t == "Moved 897"));
}
