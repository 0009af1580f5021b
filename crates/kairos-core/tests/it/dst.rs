//! Daylight-saving cases in several zones. Expected values were worked out by
//! hand from RFC 5545 §3.3.5 (a time in a gap uses the offset before the gap; a
//! time in an overlap is the first) and each zone's published 2026 changes,
//! cross-checked with Python's zoneinfo.

use chrono_tz::Tz;
use kairos_core::{Limits, alarms};

use super::support::{cal, starts, t, wrap};

fn daily(zone: &str, start: &str, count: u32) -> String {
    wrap(&format!(
        "BEGIN:VEVENT\nUID:d\nDTSTART;TZID={zone}:{start}\nRRULE:FREQ=DAILY;COUNT={count}\nEND:VEVENT"
    ))
}

fn all(text: &str) -> Vec<String> {
    starts(
        &cal(text),
        "2025-01-01T00:00:00Z",
        "2028-01-01T00:00:00Z",
        Tz::UTC,
    )
}

#[test]
fn new_york_nine_am_stays_nine_am_across_spring_forward() {
    let got = all(&daily("America/New_York", "20260307T090000", 3));
    assert_eq!(
        got,
        [
            "2026-03-07T09:00:00-05:00",
            "2026-03-08T09:00:00-04:00",
            "2026-03-09T09:00:00-04:00"
        ]
    );
}

#[test]
fn new_york_gap_time_moves_forward_by_the_gap() {
    let got = all(&daily("America/New_York", "20260307T023000", 3));
    assert_eq!(
        got,
        [
            "2026-03-07T02:30:00-05:00",
            "2026-03-08T03:30:00-04:00",
            "2026-03-09T02:30:00-04:00"
        ]
    );
}

#[test]
fn dtstart_inside_the_gap_is_accepted_and_resolved() {
    // The rrule crate rejects such a DTSTART outright (FINDINGS.md).
    let got = all(&daily("America/New_York", "20260308T023000", 2));
    assert_eq!(
        got,
        ["2026-03-08T03:30:00-04:00", "2026-03-09T02:30:00-04:00"]
    );
}

#[test]
fn new_york_overlap_time_is_the_first_of_the_two() {
    let got = all(&daily("America/New_York", "20261031T013000", 3));
    assert_eq!(
        got,
        [
            "2026-10-31T01:30:00-04:00",
            "2026-11-01T01:30:00-04:00",
            "2026-11-02T01:30:00-05:00"
        ]
    );
}

#[test]
fn berlin_and_london_spring_forward() {
    let got = all(&daily("Europe/Berlin", "20260328T023000", 3));
    assert_eq!(
        got,
        [
            "2026-03-28T02:30:00+01:00",
            "2026-03-29T03:30:00+02:00",
            "2026-03-30T02:30:00+02:00"
        ]
    );
    let got = all(&daily("Europe/London", "20260328T013000", 3));
    assert_eq!(
        got,
        [
            "2026-03-28T01:30:00+00:00",
            "2026-03-29T02:30:00+01:00",
            "2026-03-30T01:30:00+01:00"
        ]
    );
}

#[test]
fn berlin_fall_back_overlap() {
    let got = all(&daily("Europe/Berlin", "20261024T023000", 3));
    assert_eq!(
        got,
        [
            "2026-10-24T02:30:00+02:00",
            "2026-10-25T02:30:00+02:00",
            "2026-10-26T02:30:00+01:00"
        ]
    );
}

#[test]
fn sydney_southern_hemisphere_changes() {
    let got = all(&daily("Australia/Sydney", "20261003T023000", 3));
    assert_eq!(
        got,
        [
            "2026-10-03T02:30:00+10:00",
            "2026-10-04T03:30:00+11:00",
            "2026-10-05T02:30:00+11:00"
        ]
    );
    let got = all(&daily("Australia/Sydney", "20260404T023000", 3));
    assert_eq!(
        got,
        [
            "2026-04-04T02:30:00+11:00",
            "2026-04-05T02:30:00+11:00",
            "2026-04-06T02:30:00+10:00"
        ]
    );
}

#[test]
fn santiago_midnight_change_keeps_the_occurrence_on_the_change_day() {
    // Chile springs forward at 00:00 on 2026-09-06: midnight does not exist that
    // day. The rrule crate loses this occurrence and pads COUNT with a later day.
    let got = all(&daily("America/Santiago", "20260905T000000", 3));
    assert_eq!(
        got,
        [
            "2026-09-05T00:00:00-04:00",
            "2026-09-06T01:00:00-03:00",
            "2026-09-07T00:00:00-03:00"
        ]
    );
    // …and falls back at 24:00 on 2026-04-04, so 23:30 that evening happens twice.
    let got = all(&daily("America/Santiago", "20260403T233000", 3));
    assert_eq!(
        got,
        [
            "2026-04-03T23:30:00-03:00",
            "2026-04-04T23:30:00-03:00",
            "2026-04-05T23:30:00-04:00"
        ]
    );
}

#[test]
fn shanghai_has_no_dst() {
    let text = wrap(
        "BEGIN:VEVENT\nUID:s\nDTSTART;TZID=Asia/Shanghai:20260301T090000\nRRULE:FREQ=MONTHLY;COUNT=12\nEND:VEVENT",
    );
    let got = all(&text);
    assert_eq!(got.len(), 12);
    assert!(
        got.iter().all(|s| s.ends_with("T09:00:00+08:00")),
        "{got:?}"
    );
}

#[test]
fn weekly_rule_in_a_zone_with_dst_keeps_local_time_all_year() {
    let text = wrap(
        "BEGIN:VEVENT\nUID:w\nDTSTART;TZID=Europe/Berlin:20260105T170000\nRRULE:FREQ=WEEKLY;BYDAY=MO\nEND:VEVENT",
    );
    let got = all(&text);
    let in_2026: Vec<_> = got.iter().filter(|s| s.starts_with("2026")).collect();
    assert_eq!(in_2026.len(), 52);
    assert!(
        in_2026.iter().all(|s| s.contains("T17:00:00+0")),
        "{in_2026:?}"
    );
}

#[test]
fn a_day_before_is_nominal_but_24_hours_is_exact() {
    // Noon in Berlin the day summer time starts; the day before is in winter time.
    let text = wrap(
        "BEGIN:VEVENT\nUID:a\nDTSTART;TZID=Europe/Berlin:20260329T120000\n\
         BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-P1D\nEND:VALARM\n\
         BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT24H\nEND:VALARM\nEND:VEVENT",
    );
    let c = cal(&text);
    let hits = alarms::alarms(
        &c,
        t("2026-03-01T00:00:00Z"),
        t("2026-04-01T00:00:00Z"),
        Tz::UTC,
        &Limits::default(),
    )
    .expect("query");
    let mut got: Vec<_> = hits
        .iter()
        .map(|h| (h.index, h.trigger.to_rfc3339()))
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            (0, "2026-03-28T11:00:00+00:00".to_owned()),
            (1, "2026-03-28T10:00:00+00:00".to_owned())
        ]
    );
}

#[test]
fn floating_times_follow_the_zone_the_caller_gives() {
    let text = wrap("BEGIN:VEVENT\nUID:f\nDTSTART:20260310T080000\nEND:VEVENT");
    let c = cal(&text);
    assert_eq!(
        starts(
            &c,
            "2026-03-01T00:00:00Z",
            "2026-04-01T00:00:00Z",
            Tz::Asia__Tokyo
        ),
        ["2026-03-10T08:00:00+09:00"]
    );
    assert_eq!(
        starts(
            &c,
            "2026-03-01T00:00:00Z",
            "2026-04-01T00:00:00Z",
            Tz::America__New_York
        ),
        ["2026-03-10T08:00:00-04:00"]
    );
}

#[test]
fn a_custom_vtimezone_with_central_european_rules_becomes_a_zone_people_know() {
    let text = wrap(
        "BEGIN:VTIMEZONE\nTZID:My Office Time\nBEGIN:STANDARD\nDTSTART:16010101T030000\nTZOFFSETFROM:+0200\n\
         TZOFFSETTO:+0100\nRRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=10\nEND:STANDARD\nBEGIN:DAYLIGHT\n\
         DTSTART:16010101T020000\nTZOFFSETFROM:+0100\nTZOFFSETTO:+0200\nRRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=3\n\
         END:DAYLIGHT\nEND:VTIMEZONE\nBEGIN:VEVENT\nUID:o\nDTSTART;TZID=My Office Time:20260701T090000\nEND:VEVENT",
    );
    let c = cal(&text);
    assert_eq!(
        c.events[0].start.zone(),
        kairos_core::model::Zone::Tz(Tz::Europe__Berlin)
    );
}
