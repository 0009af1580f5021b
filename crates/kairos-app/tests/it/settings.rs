//! Settings: validated, stored, read back.

use kairos_app::App;
use kairos_app::api::QuietHours;

use super::{app, t};

#[test]
fn settings_survive_reopen_and_bad_values_are_named() {
    let (mut a, _d, path) = app("UTC", "2026-03-01T00:00:00Z");
    let mut s = a.get_settings().expect("get");
    s.language = "zh-CN".into();
    s.time_zone = Some("Asia/Shanghai".into());
    s.default_snooze = 30;
    a.save_settings(s.clone(), t("2026-03-01T00:00:00Z"))
        .expect("save");
    drop(a);
    let b = App::open(&path, "UTC", t("2026-03-01T00:00:00Z")).expect("reopen");
    assert_eq!(b.get_settings().expect("get"), s);
    assert_eq!(b.display_tz().name(), "Asia/Shanghai");
    let mut b = b;
    for (f, field) in [
        (
            Box::new(|s: &mut kairos_app::api::Settings| s.language = "fr".into())
                as Box<dyn Fn(&mut _)>,
            "language",
        ),
        (
            Box::new(|s: &mut kairos_app::api::Settings| s.time_zone = Some("Nowhere".into())),
            "time zone",
        ),
        (
            Box::new(|s: &mut kairos_app::api::Settings| s.default_snooze = 0),
            "snooze",
        ),
        (
            Box::new(|s: &mut kairos_app::api::Settings| {
                s.quiet_hours = Some(QuietHours {
                    start: "25:00".into(),
                    end: "07:00".into(),
                })
            }),
            "quiet hours",
        ),
    ] {
        let mut bad = s.clone();
        f(&mut bad);
        let e = b
            .save_settings(bad, t("2026-03-01T00:00:00Z"))
            .expect_err("refused");
        assert!(e.message.contains(field), "{field}: {}", e.message);
    }
    assert_eq!(b.get_settings().expect("get"), s);
}

/// Floating times ("09:00", no zone) mean the display zone's clock: a new
/// display zone moves their pending reminders, and only theirs; the engine
/// is told the zone; reopening with the same zone changes nothing.
#[test]
fn a_new_display_zone_moves_the_reminders_of_floating_events_only() {
    let now = "2026-12-01T08:00:00Z";
    let (mut a, d, path) = app("Europe/Berlin", now);
    let ics = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\n\
        BEGIN:VEVENT\r\nUID:floating\r\nDTSTART:20261202T090000\r\nSUMMARY:Pill\r\n\
        BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:PT0S\r\nEND:VALARM\r\nEND:VEVENT\r\n\
        BEGIN:VEVENT\r\nUID:zoned\r\nDTSTART;TZID=Europe/Berlin:20261202T100000\r\nSUMMARY:Call\r\n\
        BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:PT0S\r\nEND:VALARM\r\nEND:VEVENT\r\n\
        END:VCALENDAR\r\n";
    let file = d.path().join("f.ics");
    std::fs::write(&file, ics).expect("write");
    a.import_ics(
        &kairos_app::api::ImportIcs {
            path: file.display().to_string(),
            calendar: "Home".into(),
        },
        t(now),
    )
    .expect("import");
    let triggers = |a: &mut App| -> Vec<(String, String)> {
        let mut v: Vec<_> = a
            .store()
            .due(chrono::DateTime::<chrono::Utc>::MAX_UTC, 100)
            .expect("pending")
            .into_iter()
            .map(|i| (i.event_uid, i.trigger_at.to_rfc3339()))
            .collect();
        v.sort();
        v
    };
    let before = [
        (
            "floating".to_owned(),
            "2026-12-02T08:00:00+00:00".to_owned(),
        ),
        ("zoned".to_owned(), "2026-12-02T09:00:00+00:00".to_owned()),
    ];
    assert_eq!(triggers(&mut a), before);
    let mut s = a.get_settings().expect("get");
    s.time_zone = Some("America/New_York".into());
    a.save_settings(s, t(now)).expect("save");
    assert_eq!(
        triggers(&mut a),
        [
            (
                "floating".to_owned(),
                "2026-12-02T14:00:00+00:00".to_owned()
            ),
            ("zoned".to_owned(), "2026-12-02T09:00:00+00:00".to_owned()),
        ],
        "09:00 in New York now; the zoned event stays"
    );
    assert_eq!(
        a.store()
            .meta_get(kairos_engine::engine::FLOATING_ZONE)
            .expect("meta")
            .as_deref(),
        Some("America/New_York")
    );
    // Back to following the system (Berlin), as a reopen sees it.
    let mut s = a.get_settings().expect("get");
    s.time_zone = None;
    a.save_settings(s, t(now)).expect("save");
    drop(a);
    let mut b = App::open(&path, "Europe/Berlin", t(now)).expect("reopen");
    assert_eq!(triggers(&mut b), before);
    assert_eq!(b.follow_zone(t(now)).expect("follow"), 0, "nothing to do");
}
