//! Tasks (`VTODO`, RFC 5545 §3.6.2): how they are anchored in time, what
//! their alarms do (`RELATED=END` is the due time), that a done or
//! cancelled task rings no more, and that they round-trip.

use chrono_tz::Tz;
use kairos_core::model::{End, Todo, When};
use kairos_core::{Limits, alarms, ics};

use super::lenient::{lenient, strict_error};
use super::support::{cal, starts, t, wrap};

fn triggers(text: &str, from: &str, to: &str) -> Vec<String> {
    let c = cal(text);
    alarms::alarms(&c, t(from), t(to), Tz::UTC, &Limits::default())
        .unwrap_or_else(|e| panic!("{e}"))
        .iter()
        .map(|h| format!("{} {}", h.key("cal"), h.trigger.to_rfc3339()))
        .collect()
}

/// Events without the `DTSTAMP` export adds (the fixtures have none).
fn unstamped(mut events: Vec<kairos_core::model::Event>) -> Vec<kairos_core::model::Event> {
    for e in &mut events {
        e.extra.retain(|x| !x.line.starts_with("DTSTAMP"));
    }
    events
}

const CONTRACT: &str = "BEGIN:VTODO\nUID:contract\nSUMMARY:Renew the contract\n\
    DTSTART;TZID=Europe/Berlin:20261201T090000\nDUE;TZID=Europe/Berlin:20261230T170000\n\
    PRIORITY:1\nPERCENT-COMPLETE:40\nSTATUS:IN-PROCESS\n\
    BEGIN:VALARM\nACTION:DISPLAY\nDESCRIPTION:due soon\nTRIGGER;RELATED=END:-P3D\nEND:VALARM\n\
    BEGIN:VALARM\nACTION:DISPLAY\nDESCRIPTION:started\nTRIGGER:PT0S\nEND:VALARM\nEND:VTODO";

#[test]
fn a_task_reads_its_start_due_priority_and_progress() {
    let c = cal(&wrap(CONTRACT));
    let task = &c.events[0];
    let todo = task.todo.as_ref().expect("a task");
    assert_eq!(
        (todo.has_start, todo.has_due, todo.priority, todo.percent),
        (true, true, Some(1), Some(40))
    );
    assert!(matches!(task.end, Some(End::At(When::DateTime { .. }))));
    assert!(!task.is_closed_task());
}

#[test]
fn related_end_alarms_count_from_the_due_time_and_start_alarms_from_dtstart() {
    let got = triggers(
        &wrap(CONTRACT),
        "2026-11-01T00:00:00Z",
        "2027-01-01T00:00:00Z",
    );
    assert_eq!(
        got,
        [
            "cal/contract/2026-12-01T08:00:00Z/#1 2026-12-01T08:00:00+00:00",
            // 17:00 Berlin on the 27th (three nominal days before the 30th).
            "cal/contract/2026-12-01T08:00:00Z/#0 2026-12-27T16:00:00+00:00",
        ]
    );
}

#[test]
fn a_task_with_only_a_due_time_is_anchored_on_it() {
    let text = wrap(
        "BEGIN:VTODO\nUID:pill\nDUE:20261205T080000Z\nRRULE:FREQ=DAILY;COUNT=3\n\
         BEGIN:VALARM\nACTION:DISPLAY\nDESCRIPTION:x\nTRIGGER;RELATED=END:-PT10M\nEND:VALARM\n\
         END:VTODO",
    );
    let c = cal(&text);
    let todo = c.events[0].todo.as_ref().expect("a task");
    assert_eq!((todo.has_start, todo.has_due), (false, true));
    assert_eq!(
        starts(&c, "2026-12-01T00:00:00Z", "2027-01-01T00:00:00Z", Tz::UTC),
        [
            "2026-12-05T08:00:00Z",
            "2026-12-06T08:00:00Z",
            "2026-12-07T08:00:00Z"
        ]
    );
    let got = triggers(&text, "2026-12-01T00:00:00Z", "2027-01-01T00:00:00Z");
    assert_eq!(got.len(), 3, "{got:?}");
    assert!(got[0].ends_with("2026-12-05T07:50:00+00:00"), "{got:?}");
    // Written back as it came: DUE, no DTSTART.
    let out = ics::write_calendar(&c, t("2026-12-01T00:00:00Z"));
    assert!(out.contains("BEGIN:VTODO\r\n"), "{out}");
    assert!(out.contains("DUE:20261205T080000Z\r\n"), "{out}");
    assert!(!out.contains("DTSTART"), "{out}");
}

#[test]
fn an_undated_task_has_no_occurrences_and_round_trips() {
    let text = wrap("BEGIN:VTODO\nUID:milk\nSUMMARY:Buy milk\nPRIORITY:5\nEND:VTODO");
    let c = cal(&text);
    assert!(c.events[0].is_undated_task());
    assert!(starts(&c, "0001-01-01T00:00:00Z", "9999-01-01T00:00:00Z", Tz::UTC).is_empty());
    let out = ics::write_calendar(&c, t("2026-12-01T00:00:00Z"));
    assert!(!out.contains("DTSTART") && !out.contains("DUE"), "{out}");
    assert_eq!(unstamped(cal(&out).events), c.events);
}

#[test]
fn a_completed_or_cancelled_task_rings_no_more() {
    let open = triggers(
        &wrap(CONTRACT),
        "2026-11-01T00:00:00Z",
        "2027-01-01T00:00:00Z",
    );
    assert_eq!(open.len(), 2);
    for closing in [
        "STATUS:COMPLETED",
        "STATUS:CANCELLED",
        "COMPLETED:20261202T100000Z",
        "PERCENT-COMPLETE:100",
    ] {
        let text = wrap(&CONTRACT.replace("STATUS:IN-PROCESS", closing));
        let got = triggers(&text, "2026-11-01T00:00:00Z", "2027-01-01T00:00:00Z");
        assert!(got.is_empty(), "{closing}: {got:?}");
    }
}

#[test]
fn completing_one_occurrence_of_a_recurring_task_silences_only_that_one() {
    let text = wrap(
        "BEGIN:VTODO\nUID:w\nDTSTART:20261207T090000Z\nDUE:20261207T100000Z\nRRULE:FREQ=WEEKLY;COUNT=3\n\
         BEGIN:VALARM\nACTION:DISPLAY\nDESCRIPTION:x\nTRIGGER;RELATED=END:-PT5M\nEND:VALARM\nEND:VTODO\n\
         BEGIN:VTODO\nUID:w\nRECURRENCE-ID:20261214T090000Z\nDTSTART:20261214T090000Z\n\
         DUE:20261214T100000Z\nSTATUS:COMPLETED\nCOMPLETED:20261214T093000Z\n\
         BEGIN:VALARM\nACTION:DISPLAY\nDESCRIPTION:x\nTRIGGER;RELATED=END:-PT5M\nEND:VALARM\nEND:VTODO",
    );
    let got = triggers(&text, "2026-12-01T00:00:00Z", "2027-01-01T00:00:00Z");
    assert_eq!(
        got,
        [
            "cal/w/2026-12-07T09:00:00Z/#0 2026-12-07T09:55:00+00:00",
            "cal/w/2026-12-21T09:00:00Z/#0 2026-12-21T09:55:00+00:00",
        ]
    );
}

#[test]
fn a_task_round_trips_through_export() {
    let c = cal(&wrap(&CONTRACT.replace(
        "STATUS:IN-PROCESS",
        "STATUS:COMPLETED\nCOMPLETED:20261202T100000Z",
    )));
    let out = ics::write_calendar(&c, t("2026-12-01T00:00:00Z"));
    for line in [
        "BEGIN:VTODO",
        "DUE;TZID=Europe/Berlin:20261230T170000",
        "COMPLETED:20261202T100000Z",
        "PERCENT-COMPLETE:40",
        "PRIORITY:1",
        "STATUS:COMPLETED",
        "END:VTODO",
    ] {
        assert!(out.contains(&format!("{line}\r\n")), "{line}:\n{out}");
    }
    assert_eq!(unstamped(cal(&out).events), c.events);
}

#[test]
fn a_task_with_dtstart_and_duration_is_due_at_their_sum() {
    let text = wrap(
        "BEGIN:VTODO\nUID:d\nDTSTART:20261201T090000Z\nDURATION:PT2H\n\
         BEGIN:VALARM\nACTION:DISPLAY\nDESCRIPTION:x\nTRIGGER;RELATED=END:PT0S\nEND:VALARM\nEND:VTODO",
    );
    let todo = cal(&text).events[0].todo.clone().expect("a task");
    assert!(todo.has_due);
    let got = triggers(&text, "2026-11-01T00:00:00Z", "2027-01-01T00:00:00Z");
    assert!(got[0].ends_with("2026-12-01T11:00:00+00:00"), "{got:?}");
}

#[test]
fn broken_task_properties_are_repaired_leniently_and_refused_strictly() {
    let text = wrap(
        "BEGIN:VTODO\nUID:b\nDUE:20261201T090000Z\nPRIORITY:high\nPERCENT-COMPLETE:250\n\
         COMPLETED:yesterday\nDURATION:PT1H\nEND:VTODO",
    );
    let (c, warnings) = lenient(&text);
    let task = &c.events[0];
    assert_eq!(
        task.todo,
        Some(Todo {
            has_start: false,
            has_due: true,
            completed: Some(chrono::DateTime::UNIX_EPOCH),
            percent: None,
            priority: None,
        })
    );
    // Marked done by someone, so it must not ring even though the time is unreadable.
    assert!(task.is_closed_task());
    let joined = warnings.join("\n");
    for what in [
        "PRIORITY ignored",
        "PERCENT-COMPLETE ignored",
        "read as completed",
        "DURATION ignored",
    ] {
        assert!(joined.contains(what), "{what}:\n{joined}");
    }
    assert!(
        strict_error(&text).contains("PRIORITY"),
        "{}",
        strict_error(&text)
    );
}

#[test]
fn a_due_before_dtstart_is_zero_length_and_an_rrule_without_dates_is_dropped() {
    let text = wrap(
        "BEGIN:VTODO\nUID:z\nDTSTART:20261201T090000Z\nDUE:20261130T090000Z\nEND:VTODO\n\
         BEGIN:VTODO\nUID:u\nRRULE:FREQ=DAILY\nEND:VTODO",
    );
    let (c, warnings) = lenient(&text);
    assert_eq!(c.events.len(), 2);
    assert_eq!(c.events[0].end, Some(End::At(c.events[0].start)));
    let joined = warnings.join("\n");
    assert!(joined.contains("DUE is before DTSTART"), "{joined}");
    assert!(
        joined.contains("RRULE needs a DTSTART or a DUE"),
        "{joined}"
    );
}
