//! `kairos upcoming --until`: reminders beyond the engine's two-day horizon
//! are listed, computed on the fly and marked `"planned": true`; without
//! `--until` only stored ones are; a bad or too distant `--until` is a
//! clear error.

use chrono::{Duration, Utc};

use crate::assert_clean_failure;
use crate::daemon::kairos;
use crate::ok_lines;

#[test]
fn until_shows_a_reminder_30_days_out_and_without_it_only_stored_ones() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("k.db");
    let now = Utc::now();
    let soon = (now + Duration::hours(5)).format("%Y%m%dT%H0000Z");
    let far = (now + Duration::days(30)).format("%Y%m%dT%H0000Z");
    let file = dir.path().join("c.ics");
    std::fs::write(
        &file,
        crate::wrap(&format!(
            "BEGIN:VEVENT\nUID:soon\nSUMMARY:Soon\nDTSTART:{soon}\n\
             BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT15M\nEND:VALARM\nEND:VEVENT\n\
             BEGIN:VEVENT\nUID:far\nSUMMARY:Far\nDTSTART:{far}\n\
             BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT15M\nEND:VALARM\nEND:VEVENT"
        )),
    )
    .expect("write");
    let out = kairos(&db)
        .args(["import", "--tz", "UTC"])
        .arg(&file)
        .output()
        .expect("import");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let stored = ok_lines(&kairos(&db).arg("upcoming").output().expect("run"));
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert_eq!(stored[0]["summary"], "Soon");
    assert_eq!(stored[0]["planned"], false);

    let until = (now + Duration::days(31)).format("%Y-%m-%d").to_string();
    let all = ok_lines(
        &kairos(&db)
            .args(["upcoming", "--tz", "UTC", "--until", &until])
            .output()
            .expect("run"),
    );
    assert_eq!(all.len(), 2, "{all:?}");
    assert_eq!(all[0]["summary"], "Soon");
    assert_eq!(all[0]["planned"], false);
    assert_eq!(all[1]["summary"], "Far");
    assert_eq!(all[1]["planned"], true);
    let key = all[1]["key"].as_str().expect("key");
    assert!(key.contains("/far/"), "{key}");

    // --limit bounds both kinds together.
    let one = ok_lines(
        &kairos(&db)
            .args(["upcoming", "--until", &until, "--limit", "1"])
            .output()
            .expect("run"),
    );
    assert_eq!(one.len(), 1, "{one:?}");
}

#[test]
fn a_bad_until_names_the_value_and_a_distant_one_names_the_limit() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("k.db");
    let out = kairos(&db)
        .args(["upcoming", "--until", "next-tuesday"])
        .output()
        .expect("run");
    assert_clean_failure(&out, "next-tuesday");

    let far = (Utc::now() + Duration::days(400))
        .format("%Y-%m-%d")
        .to_string();
    let out = kairos(&db)
        .args(["upcoming", "--until", &far])
        .output()
        .expect("run");
    assert_clean_failure(&out, "366 days");
}
