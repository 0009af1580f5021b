//! `kairos import` keeps what it can: a bad event is skipped with a warning
//! in the JSON it prints; `--strict` refuses the whole file and stores
//! nothing.

use crate::daemon::kairos;

const FILE: &str = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\n\
    BEGIN:VEVENT\r\nUID:good\r\nDTSTART:20300101T100000Z\r\nSUMMARY:kept\r\n\
    BEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:x\r\nTRIGGER:-PT15M\r\nEND:VALARM\r\nEND:VEVENT\r\n\
    BEGIN:VEVENT\r\nUID:bad\r\nSUMMARY:no start\r\nEND:VEVENT\r\n\
    END:VCALENDAR\r\n";

#[test]
fn a_bad_event_is_skipped_with_a_warning_and_strict_refuses_the_file() {
    let dir = tempfile::tempdir().expect("tmp");
    let file = dir.path().join("mixed.ics");
    std::fs::write(&file, FILE).expect("write");

    let strict_db = dir.path().join("strict.db");
    let out = kairos(&strict_db)
        .args(["import", "--strict", "--tz", "UTC"])
        .arg(&file)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 14") && err.contains("DTSTART"), "{err}");
    let up = kairos(&strict_db)
        .arg("upcoming")
        .output()
        .expect("upcoming");
    assert!(up.stdout.is_empty(), "nothing stored under --strict");

    let db = dir.path().join("lenient.db");
    let out = kairos(&db)
        .args(["import", "--tz", "UTC"])
        .arg(&file)
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["events"], 1);
    assert_eq!(v["warning_count"], 1);
    let w = &v["warnings"][0];
    assert_eq!(w["uid"], "bad");
    assert_eq!(w["line"], 14);
    assert_eq!(v["changed"], 1, "the good event is stored: {v}");
}

#[test]
fn a_bad_escalation_rule_is_a_warning_and_the_alarm_still_fires_once() {
    let dir = tempfile::tempdir().expect("tmp");
    let file = dir.path().join("nag.ics");
    let soon = (chrono::Utc::now() + chrono::Duration::hours(3)).format("%Y%m%dT%H0000Z");
    std::fs::write(
        &file,
        format!(
            "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\nBEGIN:VEVENT\r\nUID:nag\r\n\
             DTSTART:{soon}\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT15M\r\n\
             X-KAIROS-ESCALATE:v=1;every=PT10S;max=6\r\nEND:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
        ),
    )
    .expect("write");
    let db = dir.path().join("k.db");
    let out = kairos(&db)
        .args(["import", "--tz", "UTC"])
        .arg(&file)
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["warning_count"], 1, "{v}");
    let w = &v["warnings"][0];
    assert_eq!(w["line"], 10, "{v}");
    assert!(
        w["problem"]
            .as_str()
            .is_some_and(|p| p.contains("every=PT10S")),
        "{v}"
    );
    assert_eq!(v["scheduled"], 1, "one plain reminder, no repetitions: {v}");
}

#[test]
fn strict_import_of_differing_copies_nothing_orders_keeps_the_later_and_warns() {
    let dir = tempfile::tempdir().expect("tmp");
    let file = dir.path().join("copies.ics");
    let copy = |room: &str| {
        format!(
            "BEGIN:VEVENT\r\nUID:dup\r\nSEQUENCE:1\r\nDTSTART:20300101T100000Z\r\n\
             LOCATION:{room}\r\nEND:VEVENT\r\n"
        )
    };
    let text = format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\n{}{}END:VCALENDAR\r\n",
        copy("Room A"),
        copy("Room B")
    );
    std::fs::write(&file, text).expect("write");
    for strict in [true, false] {
        let db = dir.path().join(format!("{strict}.db"));
        let mut cmd = kairos(&db);
        cmd.args(["import", "--tz", "UTC"]);
        if strict {
            cmd.arg("--strict");
        }
        let out = cmd.arg(&file).output().expect("run");
        assert!(out.status.success(), "strict={strict}: {out:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(v["events"], 1, "strict={strict}: {v}");
        assert_eq!(v["warning_count"], 1, "strict={strict}: {v}");
        let problem = v["warnings"][0]["problem"].as_str().unwrap_or_default();
        assert!(problem.contains("nothing tells which is newer"), "{v}");
    }
}
