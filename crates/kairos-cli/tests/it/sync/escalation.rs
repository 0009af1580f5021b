//! An escalating reminder ("again every minute until dismissed") on two
//! devices: dismissed on one, the repetition showing on the other is taken
//! back and the rest never ring there.

use super::{in_secs, lines, pair_of, until_line, wait_connected};

#[test]
fn a_dismissal_on_one_device_stops_the_repetitions_on_the_other() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_server, a, b) = pair_of(dir.path());
    let bd = b.daemon();
    wait_connected(&b);
    // The reminder itself was due 58 s ago (before anything was planned);
    // its repetitions come every minute from then: 2 s from now, 62 s, 122 s.
    a.import(&format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\n\
         BEGIN:VEVENT\r\nUID:pill\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:{}\r\nSUMMARY:Pill\r\n\
         BEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:x\r\nTRIGGER:PT0S\r\n\
         X-KAIROS-ESCALATE:v=1;every=PT1M;max=3\r\nEND:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
        in_secs(-58)
    ));
    let (fired, _) = until_line(&bd, 20, "B rings the first repetition", |v| {
        v["key"].is_string()
    });
    let key = fired["key"].as_str().expect("key").to_owned();
    assert!(key.contains("/pill/") && key.ends_with("~again@1"), "{key}");
    b.wait_upcoming("B holds the next repetitions", |u| {
        u.iter().filter(|(k, _)| k.contains("/pill/")).count() == 2
    });

    let out = lines(&a.run(&["dismiss", &key]));
    assert!(!out.is_empty(), "dismiss printed nothing");
    let (w, _) = until_line(&bd, 20, "B takes it back", |v| v["withdrawn"].is_string());
    assert_eq!(w["withdrawn"], key.as_str());
    assert_eq!(w["reason"], "dismissed");
    b.wait_upcoming("B's later repetitions are gone", |u| {
        u.iter().all(|(k, _)| !k.contains("/pill/"))
    });
    assert!(a.upcoming().iter().all(|(k, _)| !k.contains("/pill/")));
}
