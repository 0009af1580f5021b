//! Issue #20, the smallest broken unit goes: one bad `RRULE` part costs that
//! part (or that value), not the rule; an escaped `TZID` and a `VTIMEZONE`
//! with `DATE` observance starts are read; a task (`VTODO`) is read as an
//! event is. Each test checks what lenient reading keeps, the warning naming
//! what went, and strict reading's error naming line and property.

use chrono_tz::Tz;

use super::lenient::{lenient, strict_error};
use super::support::{cal, starts, wrap};

const MARCH: (&str, &str) = ("2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z");

fn march(text: &str) -> Vec<String> {
    let (c, _) = lenient(text);
    starts(&c, MARCH.0, MARCH.1, Tz::UTC)
}

fn event(rule: &str) -> String {
    // DTSTART is Monday 2 March 2026; the RRULE is on line 7.
    wrap(&format!(
        "BEGIN:VEVENT\nUID:r\nDTSTART:20260302T090000Z\nRRULE:{rule}\nEND:VEVENT"
    ))
}

#[test]
fn a_negative_count_drops_count_and_keeps_the_weekly_rule() {
    let text = event("FREQ=WEEKLY;COUNT=-1;BYDAY=MO,WE");
    let (_, w) = lenient(&text);
    assert_eq!(
        w,
        [
            "line 7 (VEVENT uid r): RRULE: COUNT=-1 is not a count: COUNT dropped, the rest of \
          the rule kept"
        ]
    );
    assert_eq!(march(&text).len(), 9, "Mondays and Wednesdays from the 2nd");
    assert_eq!(
        strict_error(&text),
        "line 7: RRULE: COUNT=-1 is not a count"
    );
}

#[test]
fn an_unknown_byday_value_drops_that_value_only() {
    let text = event("FREQ=WEEKLY;BYDAY=MO,XX,WE;COUNT=4");
    let (_, w) = lenient(&text);
    assert_eq!(w.len(), 1, "{w:#?}");
    assert!(
        w[0].contains(
            "RRULE: BYDAY: \"XX\" is not a weekday such as MO, 1MO or -1FR: that value dropped"
        ),
        "{w:#?}"
    );
    assert_eq!(
        march(&text),
        [
            "2026-03-02T09:00:00Z",
            "2026-03-04T09:00:00Z",
            "2026-03-09T09:00:00Z",
            "2026-03-11T09:00:00Z"
        ]
    );
    assert!(strict_error(&text).starts_with("line 7: RRULE: BYDAY: \"XX\""));
}

#[test]
fn unknown_parts_bad_interval_and_wkst_and_a_part_freq_forbids_go_one_by_one() {
    let text = event("FREQ=WEEKLY;X-NAME=1;INTERVAL=0;WKST=XX;BYMONTHDAY=15;COUNT=3");
    let (_, w) = lenient(&text);
    let dropped: Vec<&str> = w.iter().filter_map(|w| w.split(": ").nth(1)).collect();
    assert_eq!(w.len(), 4, "{w:#?}");
    assert!(
        w[0].contains("unknown rule part \"X-NAME\": X-NAME dropped"),
        "{w:#?}"
    );
    assert!(w[1].contains("INTERVAL=0 is not between 1 and 65535: INTERVAL dropped"));
    assert!(w[2].contains("WKST=XX is not a weekday"));
    assert!(
        w[3].contains("BYMONTHDAY: ")
            && w[3].ends_with("BYMONTHDAY dropped, the rest of the rule kept")
    );
    assert_eq!(dropped.len(), 4);
    assert_eq!(
        march(&text),
        [
            "2026-03-02T09:00:00Z",
            "2026-03-09T09:00:00Z",
            "2026-03-16T09:00:00Z"
        ]
    );
    assert_eq!(
        strict_error(&text),
        "line 7: RRULE: unknown rule part \"X-NAME\""
    );
}

#[test]
fn an_empty_rule_part_is_refused_strictly_and_skipped_with_a_warning_leniently() {
    let text = event("FREQ=DAILY;;COUNT=3");
    let (_, w) = lenient(&text);
    assert_eq!(
        w,
        [
            "line 7 (VEVENT uid r): RRULE: rule part 2 is empty (a stray ';'): the empty part \
          skipped, the rest of the rule kept"
        ]
    );
    assert_eq!(march(&text).len(), 3);
    assert_eq!(
        strict_error(&text),
        "line 7: RRULE: rule part 2 is empty (a stray ';')"
    );
    // A trailing ';' is no part: accepted in both modes without a word.
    let trailing = event("FREQ=DAILY;COUNT=3;");
    assert_eq!(starts(&cal(&trailing), MARCH.0, MARCH.1, Tz::UTC).len(), 3);
    assert!(lenient(&trailing).1.is_empty());
}

#[test]
fn count_and_until_together_keep_the_one_that_ends_the_series_first() {
    let until_first = event("FREQ=DAILY;COUNT=10;UNTIL=20260304T090000Z");
    let (_, w) = lenient(&until_first);
    assert_eq!(march(&until_first).len(), 3);
    assert!(
        w[0].ends_with("COUNT dropped: UNTIL ends the series first (python-dateutil applies both)"),
        "{w:#?}"
    );
    let count_first = event("FREQ=DAILY;COUNT=2;UNTIL=20261231T000000Z");
    let (c, w) = lenient(&count_first);
    assert_eq!(march(&count_first).len(), 2);
    assert!(
        w[0].contains("UNTIL dropped: COUNT ends the series first"),
        "{w:#?}"
    );
    assert_eq!(c.events[0].rrules[0].source, "FREQ=DAILY;COUNT=2");
    assert_eq!(
        strict_error(&count_first),
        "line 7: RRULE: COUNT and UNTIL must not both be given (RFC 5545 §3.3.10)"
    );
}

#[test]
fn a_rule_without_freq_cannot_be_repaired_and_is_ignored() {
    let text = event("COUNT=3;BYDAY=MO");
    let (_, w) = lenient(&text);
    assert_eq!(
        w,
        ["line 7 (VEVENT uid r): RRULE: the rule has no FREQ: this rule ignored"]
    );
    assert_eq!(march(&text), ["2026-03-02T09:00:00Z"]);
}

const CANBERRA: &str = "BEGIN:VTIMEZONE\nTZID:(UTC+10:00) Canberra\\, Melbourne\\, Sydney\n\
    BEGIN:STANDARD\nDTSTART:16010401T030000\nRRULE:FREQ=YEARLY;BYDAY=1SU;BYMONTH=4\n\
    TZOFFSETFROM:+1100\nTZOFFSETTO:+1000\nEND:STANDARD\n\
    BEGIN:DAYLIGHT\nDTSTART:16011007T020000\nRRULE:FREQ=YEARLY;BYDAY=1SU;BYMONTH=10\n\
    TZOFFSETFROM:+1000\nTZOFFSETTO:+1100\nEND:DAYLIGHT\nEND:VTIMEZONE";

#[test]
fn an_escaped_tzid_matches_its_vtimezone_with_or_without_the_backslashes() {
    for param in [
        "\"(UTC+10:00) Canberra, Melbourne, Sydney\"",
        "\"(UTC+10:00) Canberra\\, Melbourne\\, Sydney\"",
    ] {
        let text = wrap(&format!(
            "{CANBERRA}\nBEGIN:VEVENT\nUID:e\nDTSTART;TZID={param}:20260302T090000\nEND:VEVENT"
        ));
        // Read strictly: it used to be an unknown zone (lenient: floating, 9 h off).
        let got = starts(&cal(&text), MARCH.0, MARCH.1, Tz::UTC);
        assert_eq!(got, ["2026-03-02T09:00:00+11:00"], "{param}");
        assert!(lenient(&text).1.is_empty(), "{param}");
    }
}

#[test]
fn a_vtimezone_whose_observances_start_on_a_date_reads_its_rules() {
    let block = CANBERRA
        .replace(
            "TZID:(UTC+10:00) Canberra\\, Melbourne\\, Sydney",
            "TZID:Customized Time Zone",
        )
        .replace("DTSTART:16010401T030000", "DTSTART;VALUE=DATE:16010401")
        .replace("DTSTART:16011007T020000", "DTSTART:16011007");
    let text = wrap(&format!(
        "{block}\nBEGIN:VEVENT\nUID:e\nDTSTART;TZID=Customized Time Zone:20260302T090000\nEND:VEVENT"
    ));
    assert_eq!(
        starts(&cal(&text), MARCH.0, MARCH.1, Tz::UTC),
        ["2026-03-02T09:00:00+11:00"],
        "read strictly; it was floating time, 10 h off"
    );
    let (_, w) = lenient(&text);
    assert_eq!(
        w,
        [
            "line 7 (VTIMEZONE): DTSTART: STANDARD starts on a DATE, not a DATE-TIME: read as \
             midnight of that day",
            "line 13 (VTIMEZONE): DTSTART: DAYLIGHT starts on a DATE, not a DATE-TIME: read as \
             midnight of that day",
        ]
    );
}

#[test]
fn an_empty_part_in_a_vtimezone_rule_is_passed_over_as_before() {
    let block = CANBERRA
        .replace(
            "TZID:(UTC+10:00) Canberra\\, Melbourne\\, Sydney",
            "TZID:Sydney (custom)",
        )
        .replace(
            "RRULE:FREQ=YEARLY;BYDAY=1SU",
            "RRULE:FREQ=YEARLY;;BYDAY=1SU",
        );
    assert!(block.contains(";;"));
    let text = wrap(&format!(
        "{block}\nBEGIN:VEVENT\nUID:e\nDTSTART;TZID=Sydney (custom):20260302T090000\nEND:VEVENT"
    ));
    assert_eq!(
        starts(&cal(&text), MARCH.0, MARCH.1, Tz::UTC),
        ["2026-03-02T09:00:00+11:00"]
    );
    assert!(lenient(&text).1.is_empty());
}

#[test]
fn a_task_reads_an_unknown_tzid_and_a_broken_alarm_as_an_event_does() {
    let cases = [
        "DTSTART;TZID=Mars/Olympus:20260302T090000",
        "DTSTART:20260302T090000Z\nBEGIN:VALARM\nACTION:DISPLAY\nEND:VALARM",
        "DTSTART:20260302T090000Z\nBEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:soon\nEND:VALARM",
        "DTSTART:20260302T090000Z\nDURATION:-PT1H",
        "DTSTART:20260302T090000Z\nRRULE:FREQ=DAILY;;COUNT=2",
        "DTSTART:20260302T090000Z\nRRULE:FREQ=DAILY\nEXDATE;TZID=Mars/Olympus:20260303T090000",
    ];
    for body in cases {
        let read = |kind: &str| {
            let text = wrap(&format!("BEGIN:{kind}\nUID:k\n{body}\nEND:{kind}"));
            let (c, w) = lenient(&text);
            // The same words but for what it is.
            let same = |s: &str| {
                s.replace(kind, "ITEM")
                    .replace("for a task", "for an event")
            };
            let w: Vec<String> = w.iter().map(|w| same(w)).collect();
            let alarms = c.events.iter().map(|e| e.alarms.len()).sum::<usize>();
            (same(&strict_error(&text)), w, c.events.len(), alarms)
        };
        let (event, task) = (read("VEVENT"), read("VTODO"));
        assert_eq!(event, task, "{body}");
        assert!(!task.1.is_empty(), "{body}: no warning");
    }
}
