//! Lenient reading of text-level damage: encodings, folding, broken lines
//! and unbalanced components.

use kairos_core::{Limits, ics};

use super::lenient::{lenient, lenient_bytes, strict_error};
use super::support::wrap;

#[test]
fn bad_x_parameters_are_dropped_and_unknown_components_do_not_fail() {
    let text = wrap(
        "BEGIN:VTODO\nUID:t\nSUMMARY:a task\nEND:VTODO\n\
         BEGIN:X-VENDOR-THING\nX-A:1\nEND:X-VENDOR-THING\n\
         BEGIN:VEVENT\nUID:k\nDTSTART:20260301T090000Z\nX-BROKEN;NOVALUE:x\n\
         X-FINE;P=1:kept\nBEGIN:X-INNER\nX-B:2\nEND:X-INNER\nEND:VEVENT",
    );
    let (c, w) = lenient(&text);
    // The task is read too (it used to be dropped as unknown).
    assert_eq!(c.events.len(), 2);
    assert!(c.events[0].is_undated_task());
    assert!(
        c.events[1]
            .extra
            .iter()
            .any(|x| x.line == "X-FINE;P=1:kept")
    );
    assert_eq!(
        w,
        [
            "line 14 (VEVENT): X-BROKEN: parameter \"NOVALUE\" has no '=value': this parameter \
          dropped"
        ]
    );
    assert!(
        c.events[1].extra.iter().any(|x| x.line == "X-BROKEN:x"),
        "the property is kept without its broken parameter"
    );
    assert!(strict_error(&text).starts_with("line 14: X-BROKEN"));
}

#[test]
fn a_misfolded_line_is_appended_to_the_previous_one() {
    let text = wrap(
        "BEGIN:VEVENT\nUID:f\nDTSTART:20260301T090000Z\nDESCRIPTION:Agenda: budget and\n\
         hiring (bring the numbers)\nSUMMARY:Board\nEND:VEVENT",
    );
    let (c, w) = lenient(&text);
    assert_eq!(
        c.events[0].description.as_deref(),
        Some("Agenda: budget andhiring (bring the numbers)")
    );
    assert_eq!(c.events[0].summary.as_deref(), Some("Board"));
    assert_eq!(w.len(), 1);
    assert!(
        w[0].starts_with("line 8 (VEVENT): \"hiring (bring the numbers)\" is not a content line")
    );
    let e = strict_error(&text);
    assert_eq!(e, "line 8: HIRING: missing ':' before the value");
}

#[test]
fn latin1_and_windows_1252_text_is_decoded_with_one_warning() {
    let mut bytes = wrap(
        "BEGIN:VEVENT\nUID:l\nDTSTART:20260301T090000Z\nSUMMARY:Caf\u{1} \u{2}\n\
         LOCATION:M\u{3}nchen\nEND:VEVENT",
    )
    .into_bytes();
    // Latin-1 é and ü, and Windows-1252's €, in place of the placeholders.
    for b in &mut bytes {
        *b = match *b {
            1 => 0xe9,
            2 => 0x80,
            3 => 0xfc,
            other => other,
        };
    }
    let (c, w) = lenient_bytes(&bytes);
    assert_eq!(c.events[0].summary.as_deref(), Some("Café €"));
    assert_eq!(c.events[0].location.as_deref(), Some("München"));
    assert_eq!(
        w,
        [
            "line 7 (VCALENDAR): the file is not valid UTF-8 text: read its non-UTF-8 bytes as \
          Windows-1252 (Latin-1)"
        ]
    );
}

#[test]
fn a_bom_and_lf_line_ends_need_no_repair() {
    let text = "\u{feff}BEGIN:VCALENDAR\nVERSION:2.0\nBEGIN:VEVENT\nUID:b\n\
                DTSTART:20260301T090000Z\nEND:VEVENT\nEND:VCALENDAR\n";
    let (c, w) = lenient(text);
    assert_eq!((c.events.len(), w.len()), (1, 0));
    assert!(ics::parse_calendar(text.as_bytes(), &Limits::default()).is_ok());
}

#[test]
fn unbalanced_begin_and_end_close_what_is_open() {
    // END:VEVENT closes the VALARM left open in it; END:VALARM then closes
    // nothing; the last VEVENT and the VCALENDAR are never closed.
    let text = "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:a\r\nDTSTART:20260301T090000Z\r\n\
                BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT5M\r\nEND:VEVENT\r\n\
                END:VALARM\r\nBEGIN:VEVENT\r\nUID:b\r\nDTSTART:20260302T090000Z\r\n";
    let (c, w) = lenient(text);
    assert_eq!(c.events.len(), 2);
    assert_eq!(c.events[0].alarms.len(), 1);
    // In line order.
    assert_eq!(
        w,
        [
            "line 1 (VCALENDAR): BEGIN:VCALENDAR is never closed by END:VCALENDAR: closed at \
             the end of the file",
            "line 8 (VALARM): END: END:VEVENT closes BEGIN:VALARM from line 5: closed it here",
            "line 9 (VCALENDAR): END: END:VALARM closes BEGIN:VCALENDAR from line 1: line skipped",
            "line 10 (VEVENT): BEGIN:VEVENT is never closed by END:VEVENT: closed at the end of \
             the file",
        ]
    );
}
