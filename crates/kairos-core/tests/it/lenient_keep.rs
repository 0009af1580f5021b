//! Lenient repairs that drop only the broken unit (issue #20): a stray
//! line, a misspelt or missing `END`, a value of the other type under
//! `VALUE=`, two copies nothing can order. Each test checks what is kept,
//! the warning, and what strict reading says.

use chrono_tz::Tz;
use kairos_core::model::{Calendar, When};
use kairos_core::{Limits, ics};

use super::lenient::{lenient, strict_error};
use super::support::{starts, wrap};

fn uids(c: &Calendar) -> Vec<&str> {
    c.events.iter().map(|e| e.uid.as_str()).collect()
}

#[test]
fn a_stray_line_after_a_complete_property_is_dropped_alone() {
    // Apple-style: an address split off a location lands after the UID and
    // after DTSTART. Gluing it on corrupted both (and lost the event).
    let text = wrap(
        "BEGIN:VEVENT\nUID:apple-1\nCupertino CA 95014\nDTSTART:20260301T090000Z\n\
         1 Infinite Loop\nSUMMARY:Keynote\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:apple-2\nDTSTART:20260302T090000Z\nEND:VEVENT",
    );
    let (c, w) = lenient(&text);
    assert_eq!(uids(&c), ["apple-1", "apple-2"]);
    assert_eq!(c.events[0].summary.as_deref(), Some("Keynote"));
    assert_eq!(
        c.events[0].start,
        When::DateTime {
            local: chrono::NaiveDate::from_ymd_opt(2026, 3, 1)
                .and_then(|d| d.and_hms_opt(9, 0, 0))
                .expect("valid"),
            zone: kairos_core::model::Zone::Utc
        }
    );
    assert_eq!(
        w,
        [
            "line 6 (VEVENT): \"Cupertino CA 95014\" is not a content line, and the UID line \
             before it is complete: line skipped",
            "line 8 (VEVENT): \"1 Infinite Loop\" is not a content line, and the DTSTART line \
             before it is complete: line skipped",
        ]
    );
    assert_eq!(
        strict_error(&text),
        "line 6: CUPERTINO: missing ':' before the value"
    );
}

#[test]
fn a_stray_line_continues_free_text_or_a_line_cut_at_the_fold_width() {
    // A raw line break in a DESCRIPTION, and an ATTENDEE folded at 75
    // octets without the leading space: both are the previous line's rest.
    let attendee = "ATTENDEE;CN=\"Someone With A Long Name\";ROLE=REQ-PARTICIPANT:mailto:some";
    assert!(attendee.len() >= 70);
    let text = wrap(&format!(
        "BEGIN:VEVENT\nUID:m\nDTSTART:20260301T090000Z\nDESCRIPTION:Line one\n\
         line two\n{attendee}\none@example.com\nEND:VEVENT"
    ));
    let (c, w) = lenient(&text);
    let ev = &c.events[0];
    assert_eq!(ev.description.as_deref(), Some("Line oneline two"));
    let att = ev
        .extra
        .iter()
        .find(|p| p.line.starts_with("ATTENDEE"))
        .expect("kept");
    assert!(att.line.ends_with("mailto:someone@example.com"), "{att:?}");
    assert_eq!(w.len(), 2, "{w:#?}");
    assert!(
        w.iter()
            .all(|w| w.ends_with("appended to the previous line (mis-folded)"))
    );
}

#[test]
fn a_misspelt_end_closes_what_it_misspells_and_loses_nothing_after_it() {
    let text = wrap(
        "BEGIN:VTODO\nUID:t\nDUE:20260301T170000Z\nSUMMARY:Report\nEND:VTOOD\n\
         BEGIN:VEVENT\nUID:e1\nDTSTART:20260302T090000Z\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:e2\nDTSTART:20260303T090000Z\nEND:VEVNT\n\
         BEGIN:VEVENT\nUID:e3\nDTSTART:20260304T090000Z\nEND:VEVENT",
    );
    let (c, w) = lenient(&text);
    assert_eq!(uids(&c), ["t", "e1", "e2", "e3"]);
    assert!(c.events[0].todo.is_some());
    assert_eq!(
        w,
        [
            "line 8 (VTODO): END: END:VTOOD closes BEGIN:VTODO from line 4: read as END:VTODO",
            "line 16 (VEVENT): END: END:VEVNT closes BEGIN:VEVENT from line 13: read as \
             END:VEVENT",
        ]
    );
    assert_eq!(
        strict_error(&text),
        "line 8: END: END:VTOOD closes BEGIN:VTODO from line 4"
    );
}

#[test]
fn a_begin_that_cannot_nest_closes_the_component_missing_its_end() {
    // No END:VEVENT, no END:VTODO, an END:VALARM lost: each next BEGIN
    // closes what cannot hold it; nothing after a missing END is swallowed.
    let text = wrap(
        "BEGIN:VEVENT\nUID:a\nDTSTART:20260301T090000Z\n\
         BEGIN:VTODO\nUID:b\nDUE:20260302T090000Z\n\
         BEGIN:VEVENT\nUID:c\nDTSTART:20260303T090000Z\n\
         BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT5M\n\
         BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT10M\nEND:VALARM\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:d\nDTSTART:20260304T090000Z\nEND:VEVENT",
    );
    let (c, w) = lenient(&text);
    assert_eq!(uids(&c), ["a", "b", "c", "d"]);
    assert_eq!(c.events[2].alarms.len(), 2);
    assert_eq!(
        w,
        [
            "line 7 (VEVENT): BEGIN: BEGIN:VTODO cannot stand inside BEGIN:VEVENT from line 4, \
             which has no END: closed VEVENT before it",
            "line 10 (VTODO): BEGIN: BEGIN:VEVENT cannot stand inside BEGIN:VTODO from line 7, \
             which has no END: closed VTODO before it",
            "line 16 (VALARM): BEGIN: BEGIN:VALARM cannot stand inside BEGIN:VALARM from line \
             13, which has no END: closed VALARM before it",
        ]
    );
    assert!(strict_error(&text).starts_with("line 7: BEGIN: BEGIN:VTODO cannot stand inside"));
    let got = starts(&c, "2026-03-01T00:00:00Z", "2026-03-05T00:00:00Z", Tz::UTC);
    assert_eq!(got.len(), 4, "{got:?} (b: the task, on its DUE)");
}

#[test]
fn a_date_time_under_value_date_is_read_as_a_date_time_and_the_reverse() {
    // A festival generator writes VALUE=DATE on timed starts; another
    // writes VALUE=DATE-TIME on all-day ones.
    let text = wrap(
        "BEGIN:VEVENT\nUID:f1\nDTSTART;VALUE=DATE:20260301T190000Z\n\
         DTEND;VALUE=DATE:20260301T220000Z\nRRULE:FREQ=DAILY;COUNT=3\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:f2\nDTSTART;VALUE=DATE-TIME:20260310\nEND:VEVENT",
    );
    let (c, w) = lenient(&text);
    assert_eq!(uids(&c), ["f1", "f2"]);
    assert!(!c.events[0].start.is_date());
    assert!(c.events[1].start.is_date());
    let got = starts(&c, "2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z", Tz::UTC);
    assert_eq!(got.len(), 4, "{got:?}");
    assert_eq!(
        w,
        [
            "line 6 (VEVENT uid f1): DTSTART: VALUE=DATE, but \"20260301T190000Z\" is a \
             DATE-TIME: read as the DATE-TIME it is",
            "line 7 (VEVENT uid f1): DTEND: VALUE=DATE, but \"20260301T220000Z\" is a \
             DATE-TIME: read as the DATE-TIME it is",
            "line 12 (VEVENT uid f2): DTSTART: VALUE=DATE-TIME, but \"20260310\" is a DATE: \
             read as the DATE it is",
        ]
    );
    assert_eq!(
        strict_error(&text),
        "line 6: DTSTART: VALUE=DATE, but \"20260301T190000Z\" is a DATE-TIME"
    );
}

#[test]
fn differing_copies_nothing_can_order_keep_the_later_and_warn_in_both_modes() {
    let text = wrap(
        "BEGIN:VEVENT\nUID:dup\nSEQUENCE:1\nSUMMARY:Room A\nDTSTART:20260301T090000Z\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:dup\nSEQUENCE:1\nSUMMARY:Room B\nDTSTART:20260301T090000Z\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:same\nSUMMARY:Twice\nDTSTART:20260302T090000Z\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:same\nSUMMARY:Twice\nDTSTART:20260302T090000Z\nEND:VEVENT",
    );
    let warning = "line 4 (VEVENT uid dup): another copy of this event (line 10) differs from \
                   this one and nothing tells which is newer (same SEQUENCE 1, no later \
                   LAST-MODIFIED or DTSTAMP): this copy ignored: the later copy in the file is \
                   kept";
    let (c, w) = lenient(&text);
    assert_eq!(c.events[0].summary.as_deref(), Some("Room B"));
    assert_eq!(w.len(), 2, "{w:#?}");
    assert_eq!(w[0], warning);
    assert!(w[1].contains("uid same") && w[1].contains("supersedes"));
    // Strict reading keeps the same copy, and says so too (identical
    // copies lose nothing: no word in strict mode).
    let (strict, sw) =
        ics::parse_calendar_strict(text.as_bytes(), &Limits::default()).expect("a valid file");
    assert_eq!(strict.events, c.events);
    let sw: Vec<String> = sw.iter().map(ToString::to_string).collect();
    assert_eq!(sw, [warning]);
}

#[test]
fn a_broken_parameter_is_dropped_and_its_property_kept() {
    let text = wrap(
        "BEGIN:VEVENT\nUID:p\nDTSTART;TZID=Europe/Berlin;X-BROKEN:20260301T090000\n\
         ATTENDEE;CN=\"Unclosed;ROLE=CHAIR:mailto:a@example.com\n\
         LOCATION;=x;LANGUAGE=de:Raum 1\nEND:VEVENT",
    );
    let (c, w) = lenient(&text);
    let ev = &c.events[0];
    let got = starts(&c, "2026-03-01T00:00:00Z", "2026-03-02T00:00:00Z", Tz::UTC);
    assert_eq!(got, ["2026-03-01T09:00:00+01:00"], "TZID kept");
    assert_eq!(ev.location.as_deref(), Some("Raum 1"));
    let att = ev
        .extra
        .iter()
        .find(|p| p.line.starts_with("ATTENDEE"))
        .expect("kept");
    assert_eq!(att.line, "ATTENDEE;ROLE=CHAIR:mailto:a@example.com");
    assert_eq!(
        w,
        [
            "line 6 (VEVENT): DTSTART: parameter \"X-BROKEN\" has no '=value': this parameter \
             dropped",
            "line 7 (VEVENT): ATTENDEE: parameter CN has an unterminated quote: this parameter \
             dropped",
            "line 8 (VEVENT): LOCATION: empty parameter name: this parameter dropped",
        ]
    );
    assert_eq!(
        strict_error(&text),
        "line 6: DTSTART: parameter \"X-BROKEN\" has no '=value'"
    );
}
