//! A task done on one device: its reminder showing on the other is taken
//! back, and the next one does not fire there.

use super::{in_secs, lines, pair_of, until_line, wait_connected};

#[test]
fn a_task_done_on_one_device_stops_its_reminders_on_the_other() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_server, a, b) = pair_of(dir.path());
    let bd = b.daemon();
    wait_connected(&b);
    // Due in 60 s, reminded at 2 s and 15 s from now; a sentinel event at
    // 17 s shows B went on past the second reminder.
    a.import(&format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\n\
         BEGIN:VTODO\r\nUID:pay\r\nSUMMARY:Pay rent\r\nDUE:{}\r\n\
         BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER;RELATED=END:-PT58S\r\nEND:VALARM\r\n\
         BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER;RELATED=END:-PT45S\r\nEND:VALARM\r\nEND:VTODO\r\n\
         BEGIN:VEVENT\r\nUID:sentinel\r\nDTSTART:{}\r\nSUMMARY:Sentinel\r\n\
         BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:PT0S\r\nEND:VALARM\r\nEND:VEVENT\r\n\
         END:VCALENDAR\r\n",
        in_secs(60),
        in_secs(17)
    ));
    let (fired, _) = until_line(&bd, 20, "B fires the first task reminder", |v| {
        v["key"].is_string()
    });
    let first = fired["key"].as_str().expect("key").to_owned();
    assert!(first.contains("/pay/"), "{first}");

    let done = &lines(&a.run(&["done", "pay", "--tz", "UTC"]))[0];
    assert_eq!(done["done"], "pay");
    let (w, _) = until_line(&bd, 20, "B takes the first back", |v| {
        v["withdrawn"].is_string()
    });
    assert_eq!(w["withdrawn"], first.as_str());
    assert_eq!(w["reason"], "done");
    let (s, before) = until_line(&bd, 40, "B fires the sentinel", |v| {
        v["key"].as_str().is_some_and(|k| k.contains("/sentinel/"))
    });
    assert!(s["key"].is_string());
    assert!(
        !before.iter().any(|v| v["key"].is_string()),
        "B fired a reminder of the done task: {before:?}"
    );
    assert!(lines(&b.run(&["tasks", "--tz", "UTC"])).is_empty());
}
