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
    a.save_settings(s.clone()).expect("save");
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
        let e = b.save_settings(bad).expect_err("refused");
        assert!(e.message.contains(field), "{field}: {}", e.message);
    }
    assert_eq!(b.get_settings().expect("get"), s);
}
