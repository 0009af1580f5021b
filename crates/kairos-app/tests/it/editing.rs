//! The editor: create, open, change this / this and following / all,
//! delete, drag — and bad input refused with the field named.

use kairos_app::api::{DeleteEvent, ErrorKind, EventRef, MoveEvent, RangeQuery, SaveEvent, Scope};

use super::{app, cal, create, draft, t};

fn week(app: &kairos_app::App, from: &str, to: &str) -> Vec<(String, String)> {
    app.occurrences(&RangeQuery {
        from: from.into(),
        to: to.into(),
        per_day: None,
    })
    .expect("occurrences")
    .items
    .into_iter()
    .map(|o| (o.start, o.title))
    .collect()
}

fn occurrence(app: &kairos_app::App, day: &str) -> EventRef {
    let list = app
        .occurrences(&RangeQuery {
            from: format!("{day}T00:00"),
            to: format!("{day}T23:59"),
            per_day: None,
        })
        .expect("occurrences");
    list.items[0].event.clone()
}

#[test]
fn create_then_open_round_trips_the_form() {
    let (mut a, _d, _) = app("Europe/Berlin", "2026-03-09T08:00:00Z");
    let c = cal(&a);
    let mut d = draft(
        c,
        "Dentist",
        "2026-03-10T09:00",
        "2026-03-10T10:00",
        "Europe/Berlin",
    );
    d.location = "Main St 1".into();
    d.notes = "Bring the card".into();
    let r = create(&mut a, d.clone(), "2026-03-09T08:00:00Z");
    let got = a.get_event(&r).expect("get");
    assert_eq!(got.draft, d);
    assert!(!got.recurring);
}

#[test]
fn weekly_series_edit_this_occurrence_only() {
    let (mut a, _d, _) = app("Europe/Berlin", "2026-03-01T08:00:00Z");
    let c = cal(&a);
    let mut d = draft(
        c,
        "1:1",
        "2026-03-02T10:00",
        "2026-03-02T10:30",
        "Europe/Berlin",
    );
    d.rrule = Some("FREQ=WEEKLY;COUNT=4".into());
    create(&mut a, d, "2026-03-01T08:00:00Z");
    let second = occurrence(&a, "2026-03-09");
    let mut form = a.get_event(&second).expect("get").draft;
    assert_eq!(form.start, "2026-03-09T10:00");
    form.title = "1:1 (moved)".into();
    form.start = "2026-03-10T14:00".into();
    form.end = "2026-03-10T14:30".into();
    a.save_event(
        SaveEvent {
            event: Some(second),
            scope: Scope::This,
            draft: form,
        },
        t("2026-03-01T09:00:00Z"),
    )
    .expect("save this");
    assert_eq!(
        week(&a, "2026-03-01T00:00", "2026-04-01T00:00"),
        [
            ("2026-03-02T10:00:00".into(), "1:1".into()),
            ("2026-03-10T14:00:00".into(), "1:1 (moved)".into()),
            ("2026-03-16T10:00:00".into(), "1:1".into()),
            ("2026-03-23T10:00:00".into(), "1:1".into()),
        ]
    );
}

#[test]
fn this_and_following_splits_the_series_and_all_keeps_its_start() {
    let (mut a, _d, _) = app("Europe/Berlin", "2026-03-01T08:00:00Z");
    let c = cal(&a);
    let mut d = draft(
        c,
        "Standup",
        "2026-03-02T09:00",
        "2026-03-02T09:15",
        "Europe/Berlin",
    );
    d.rrule = Some("FREQ=DAILY".into());
    create(&mut a, d, "2026-03-01T08:00:00Z");
    // From the 4th on, at 10:00.
    let fourth = occurrence(&a, "2026-03-04");
    let mut form = a.get_event(&fourth).expect("get").draft;
    form.start = "2026-03-04T10:00".into();
    form.end = "2026-03-04T10:15".into();
    a.save_event(
        SaveEvent {
            event: Some(fourth),
            scope: Scope::ThisAndFollowing,
            draft: form,
        },
        t("2026-03-01T09:00:00Z"),
    )
    .expect("split");
    let starts: Vec<String> = week(&a, "2026-03-02T00:00", "2026-03-07T00:00")
        .into_iter()
        .map(|x| x.0)
        .collect();
    assert_eq!(
        starts,
        [
            "2026-03-02T09:00:00",
            "2026-03-03T09:00:00",
            "2026-03-04T10:00:00",
            "2026-03-05T10:00:00",
            "2026-03-06T10:00:00"
        ]
    );
    // "All" opened from the 3rd: a half-hour later applies to the series'
    // own start (the 2nd), not to the 3rd onwards.
    let third = occurrence(&a, "2026-03-03");
    let mut form = a.get_event(&third).expect("get").draft;
    form.start = "2026-03-03T09:30".into();
    form.end = "2026-03-03T09:45".into();
    a.save_event(
        SaveEvent {
            event: Some(third),
            scope: Scope::All,
            draft: form,
        },
        t("2026-03-01T10:00:00Z"),
    )
    .expect("all");
    let starts: Vec<String> = week(&a, "2026-03-02T00:00", "2026-03-05T00:00")
        .into_iter()
        .map(|x| x.0)
        .collect();
    assert_eq!(
        starts,
        [
            "2026-03-02T09:30:00",
            "2026-03-03T09:30:00",
            "2026-03-04T10:00:00"
        ]
    );
}

#[test]
fn delete_one_occurrence_then_the_following_then_all() {
    let (mut a, _d, _) = app("America/New_York", "2026-03-01T08:00:00Z");
    let c = cal(&a);
    let mut d = draft(
        c,
        "Gym",
        "2026-03-02T07:00",
        "2026-03-02T08:00",
        "America/New_York",
    );
    d.rrule = Some("FREQ=DAILY;COUNT=5".into());
    let r = create(&mut a, d, "2026-03-01T08:00:00Z");
    let now = t("2026-03-01T09:00:00Z");
    a.delete_event(
        &DeleteEvent {
            event: occurrence(&a, "2026-03-03"),
            scope: Scope::This,
        },
        now,
    )
    .expect("this");
    a.delete_event(
        &DeleteEvent {
            event: occurrence(&a, "2026-03-05"),
            scope: Scope::ThisAndFollowing,
        },
        now,
    )
    .expect("following");
    let days: Vec<String> = week(&a, "2026-03-01T00:00", "2026-03-10T00:00")
        .into_iter()
        .map(|x| x.0[..10].to_owned())
        .collect();
    assert_eq!(days, ["2026-03-02", "2026-03-04"]);
    a.delete_event(
        &DeleteEvent {
            event: r.clone(),
            scope: Scope::All,
        },
        now,
    )
    .expect("all");
    assert!(week(&a, "2026-03-01T00:00", "2026-03-10T00:00").is_empty());
    assert_eq!(a.get_event(&r).expect_err("gone").kind, ErrorKind::NotFound);
}

#[test]
fn drag_moves_and_resizes_in_wall_clock_time_across_dst() {
    let (mut a, _d, _) = app("Europe/Berlin", "2026-03-20T08:00:00Z");
    let c = cal(&a);
    let r = create(
        &mut a,
        draft(
            c,
            "Call",
            "2026-03-28T09:00",
            "2026-03-28T10:00",
            "Europe/Berlin",
        ),
        "2026-03-20T08:00:00Z",
    );
    // One day later (over the change to summer time) and 30 min longer.
    a.move_event(
        &MoveEvent {
            event: r,
            scope: Scope::All,
            start_delta_minutes: 1440,
            end_delta_minutes: 1470,
        },
        t("2026-03-20T09:00:00Z"),
    )
    .expect("move");
    assert_eq!(
        week(&a, "2026-03-23T00:00", "2026-04-06T00:00"),
        [("2026-03-29T09:00:00".into(), "Call".into())]
    );
    let o = &a
        .occurrences(&RangeQuery {
            from: "2026-03-29T00:00".into(),
            to: "2026-03-30T00:00".into(),
            per_day: None,
        })
        .expect("o")
        .items[0];
    assert_eq!(o.end, "2026-03-29T10:30:00");
}

#[test]
fn bad_input_is_refused_with_the_field_named_and_nothing_stored() {
    let (mut a, _d, _) = app("UTC", "2026-03-01T08:00:00Z");
    let c = cal(&a);
    let cases = [
        (
            draft(c, "x", "2026-03-02T10:00", "2026-03-02T09:00", "UTC"),
            "end",
        ),
        (
            draft(c, "x", "2026-03-02 10:00", "2026-03-02T11:00", "UTC"),
            "start",
        ),
        (
            draft(
                c,
                "x",
                "2026-03-02T10:00",
                "2026-03-02T11:00",
                "Mars/Olympus",
            ),
            "time zone",
        ),
        (
            {
                let mut d = draft(c, "x", "2026-03-02T10:00", "2026-03-02T11:00", "UTC");
                d.rrule = Some("FREQ=FORTNIGHTLY".into());
                d
            },
            "RRULE",
        ),
        (
            {
                let mut d = draft(c, "x", "2026-03-02T10:00", "2026-03-02T11:00", "UTC");
                d.rrule = Some("FREQ=DAILY\r\nX-EVIL:1".into());
                d
            },
            "recurrence",
        ),
        (
            {
                let mut d = draft(c, "x", "2026-03-02T10:00", "2026-03-02T11:00", "UTC");
                d.title = "t".repeat(1001);
                d
            },
            "title",
        ),
        (
            draft(c + 99, "x", "2026-03-02T10:00", "2026-03-02T11:00", "UTC"),
            "calendar",
        ),
    ];
    for (d, field) in cases {
        let e = a
            .save_event(
                SaveEvent {
                    event: None,
                    scope: Scope::All,
                    draft: d,
                },
                t("2026-03-01T08:00:00Z"),
            )
            .expect_err("refused");
        assert!(e.message.contains(field), "{field}: {}", e.message);
    }
    assert!(week(&a, "2026-03-01T00:00", "2026-03-08T00:00").is_empty());
}

#[test]
fn all_day_events_use_inclusive_last_day_in_the_form() {
    let (mut a, _d, _) = app("Asia/Tokyo", "2026-03-01T08:00:00Z");
    let c = cal(&a);
    let mut d = draft(c, "Trip", "2026-03-10", "2026-03-12", "Asia/Tokyo");
    d.all_day = true;
    d.alarms.clear();
    let r = create(&mut a, d.clone(), "2026-03-01T08:00:00Z");
    let o = &a
        .occurrences(&RangeQuery {
            from: "2026-03-09T00:00".into(),
            to: "2026-03-16T00:00".into(),
            per_day: None,
        })
        .expect("o")
        .items[0];
    assert_eq!(
        (o.start.as_str(), o.end.as_str(), o.all_day),
        ("2026-03-10", "2026-03-13", true)
    );
    assert_eq!(a.get_event(&r).expect("get").draft, d);
}
