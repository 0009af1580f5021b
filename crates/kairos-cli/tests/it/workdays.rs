//! `kairos calendar list|set`: the working week and holiday flag of each
//! calendar, and that setting them moves a working-day reminder at once.

use std::path::Path;
use std::process::Output;

use chrono::{DateTime, Utc};

use crate::assert_clean_failure;
use crate::daemon::kairos;
use crate::ok_lines;

const FEED: &str = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\n\
    BEGIN:VEVENT\r\nUID:good-friday\r\nSUMMARY:Karfreitag\r\nDTSTART;VALUE=DATE:20260403\r\nEND:VEVENT\r\n\
    END:VCALENDAR\r\n";

/// Due Monday 6 April 09:00 Berlin; one working day before at 09:00.
const REPORT: &str = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\n\
    BEGIN:VEVENT\r\nUID:report\r\nSUMMARY:Report\r\nDTSTART;TZID=Europe/Berlin:20260406T090000\r\n\
    BEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:x\r\nTRIGGER:-PT15M\r\n\
    X-KAIROS-WORKDAYS:v=1;before=1;at=09:00\r\nEND:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n";

/// `kairos --db DB --clock-offset … ARGS` as if it were 2026-04-02 06:00Z.
fn run(db: &Path, args: &[&str]) -> Output {
    let now: DateTime<Utc> = "2026-04-02T06:00:00Z".parse().expect("instant");
    let offset = (now - Utc::now()).num_seconds().to_string();
    kairos(db)
        .arg(format!("--clock-offset={offset}"))
        .args(args)
        .output()
        .expect("run kairos")
}

fn triggers(db: &Path) -> Vec<String> {
    ok_lines(&run(db, &["upcoming"]))
        .iter()
        .map(|v| v["trigger"].as_str().expect("trigger").to_owned())
        .collect()
}

#[test]
fn calendar_set_and_list_change_the_week_and_the_holidays_and_move_reminders() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("k.db");
    for (name, text) in [("feiertage", FEED), ("work", REPORT)] {
        let file = dir.path().join(format!("{name}.ics"));
        std::fs::write(&file, text).expect("write");
        let file = file.to_str().expect("utf-8");
        ok_lines(&run(
            &db,
            &["import", file, "--calendar", name, "--tz", "UTC"],
        ));
    }
    let list = ok_lines(&run(&db, &["calendar", "list"]));
    assert_eq!(list.len(), 2);
    assert_eq!(
        (
            &list[0]["name"],
            &list[0]["working_week"],
            &list[0]["holidays"]
        ),
        (
            &serde_json::json!("feiertage"),
            &serde_json::json!("mon,tue,wed,thu,fri"),
            &serde_json::json!(false)
        )
    );
    assert_eq!(list[1]["uid"].as_str().map(str::len), Some(32));
    // Friday 3 April 09:00 CEST.
    assert_eq!(triggers(&db), ["2026-04-03T07:00:00+00:00"]);

    let set = ok_lines(&run(
        &db,
        &["calendar", "set", "feiertage", "--holidays", "true"],
    ));
    assert_eq!(
        (&set[0]["holidays"], &set[0]["moved"]),
        (&true.into(), &1.into())
    );
    // Good Friday is a holiday now: Thursday.
    assert_eq!(triggers(&db), ["2026-04-02T07:00:00+00:00"]);

    let week = [
        "calendar",
        "set",
        "work",
        "--working-week",
        "sun,mon,tue,wed,thu",
    ];
    let set = ok_lines(&run(&db, &week));
    assert_eq!(set[0]["working_week"], "mon,tue,wed,thu,sun");
    // Sunday 5 April 09:00 CEST: past the 48 h horizon, planned again later.
    assert!(triggers(&db).is_empty());
    let list = ok_lines(&run(&db, &["calendar", "list"]));
    assert_eq!(list[0]["holidays"], true);
    assert_eq!(list[1]["working_week"], "mon,tue,wed,thu,sun");
}

#[test]
fn calendar_set_names_what_is_wrong() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("k.db");
    let file = dir.path().join("f.ics");
    std::fs::write(&file, FEED).expect("write");
    let file = file.to_str().expect("utf-8");
    ok_lines(&run(
        &db,
        &["import", file, "--calendar", "feiertage", "--tz", "UTC"],
    ));
    for (args, needle) in [
        (
            &[
                "calendar",
                "set",
                "feiertage",
                "--working-week",
                "mon,funday",
            ][..],
            "\"funday\" is not a weekday",
        ),
        (
            &["calendar", "set", "feiertage", "--holidays", "maybe"],
            "--holidays \"maybe\"",
        ),
        (
            &["calendar", "set", "nope", "--holidays", "true"],
            "\"nope\"",
        ),
        (&["calendar", "set", "feiertage"], "nothing to set"),
    ] {
        assert_clean_failure(&run(&db, args), needle);
    }
    let list = ok_lines(&run(&db, &["calendar", "list"]));
    assert_eq!(list[0]["working_week"], "mon,tue,wed,thu,fri", "unchanged");
}
