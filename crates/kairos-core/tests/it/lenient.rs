//! Lenient reading: one test per thing real producers write, each checking
//! what is kept, the warning given, and that strict reading still refuses
//! what it always refused (with the same error).

use chrono_tz::Tz;
use kairos_core::model::{Calendar, End, When};
use kairos_core::{Error, Limits, ics};

use super::support::{starts, wrap};

/// Reads leniently; the warnings as displayed.
pub fn lenient(text: &str) -> (Calendar, Vec<String>) {
    lenient_bytes(text.as_bytes())
}

pub fn lenient_bytes(bytes: &[u8]) -> (Calendar, Vec<String>) {
    match ics::parse_calendar_lenient(bytes, &Limits::default()) {
        Ok((c, w)) => (c, w.iter().map(ToString::to_string).collect()),
        Err(e) => panic!("lenient read failed: {e}"),
    }
}

pub fn strict_error(text: &str) -> String {
    match ics::parse_calendar(text.as_bytes(), &Limits::default()) {
        Ok(_) => panic!("strict reading accepted it:\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn summaries(c: &Calendar) -> Vec<&str> {
    c.events
        .iter()
        .map(|e| e.summary.as_deref().unwrap_or("-"))
        .collect()
}

#[test]
fn copies_of_one_uid_keep_the_highest_sequence_then_the_latest_stamp() {
    let text = wrap(
        "BEGIN:VEVENT\nUID:a\nSEQUENCE:0\nSUMMARY:old\nDTSTART:20260301T090000Z\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:a\nSEQUENCE:2\nSUMMARY:newest\nDTSTART:20260301T100000Z\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:a\nSEQUENCE:1\nSUMMARY:middle\nDTSTART:20260301T110000Z\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:b\nDTSTAMP:20260302T000000Z\nSUMMARY:b later stamp\nDTSTART:20260301T090000Z\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:b\nDTSTAMP:20260301T000000Z\nSUMMARY:b earlier stamp\nDTSTART:20260301T090000Z\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:c\nSUMMARY:c first\nDTSTART:20260301T090000Z\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:c\nSUMMARY:c last\nDTSTART:20260301T090000Z\nEND:VEVENT",
    );
    let (c, w) = lenient(&text);
    assert_eq!(summaries(&c), ["newest", "b later stamp", "c last"]);
    assert_eq!(w.len(), 4, "{w:#?}");
    assert_eq!(
        w[0],
        "line 4 (VEVENT uid a): another copy of this event (line 10, SEQUENCE 2) supersedes \
         this one (SEQUENCE 0): this copy ignored"
    );
    // Not an error: strict reading keeps the same one.
    let strict = ics::parse_calendar(text.as_bytes(), &Limits::default()).expect("strict");
    assert_eq!(summaries(&strict), summaries(&c));
    assert_eq!(
        starts(&c, "2026-03-01T00:00:00Z", "2026-03-02T00:00:00Z", Tz::UTC).len(),
        3
    );
}

#[test]
fn all_day_series_match_date_time_exdates_and_recurrence_ids_by_date() {
    // Google and Outlook write these with a time on all-day series.
    let text = wrap(
        "BEGIN:VEVENT\nUID:d\nSUMMARY:Bins\nDTSTART;VALUE=DATE:20260302\nRRULE:FREQ=WEEKLY;COUNT=4\n\
         EXDATE:20260309T000000Z\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:d\nSUMMARY:Bins (moved)\nRECURRENCE-ID;TZID=Europe/Berlin:20260316T000000\n\
         DTSTART;VALUE=DATE:20260317\nEND:VEVENT",
    );
    let (c, w) = lenient(&text);
    let got = starts(
        &c,
        "2026-03-01T00:00:00Z",
        "2026-04-01T00:00:00Z",
        Tz::Asia__Tokyo,
    );
    assert_eq!(got, ["2026-03-02", "2026-03-17", "2026-03-23"]);
    assert_eq!(w.len(), 2, "{w:#?}");
    assert!(w[0].contains("EXDATE: value type differs from DTSTART's (DATE): matched by date"));
    assert!(
        w[1].starts_with("line 11 (VEVENT uid d): RECURRENCE-ID"),
        "{w:#?}"
    );
}

#[test]
fn dtend_and_duration_both_present_dtend_wins() {
    let text = wrap(
        "BEGIN:VEVENT\nUID:x@y\nDTSTART:20260301T090000Z\nDTEND:20260301T100000Z\n\
         DURATION:PT3H\nEND:VEVENT",
    );
    let (c, w) = lenient(&text);
    assert!(matches!(c.events[0].end, Some(End::At(_))));
    assert_eq!(
        w,
        [
            "line 8 (VEVENT uid x@y): DURATION: an event may have one DTEND or one DURATION, \
          not both: DTEND used, DURATION ignored"
        ]
    );
    assert!(strict_error(&text).starts_with("line 8: DURATION: an event may have one DTEND"));
}

#[test]
fn dtend_before_dtstart_is_zero_length() {
    let text =
        wrap("BEGIN:VEVENT\nUID:x@y\nDTSTART:20260301T090000Z\nDTEND:20260301T080000Z\nEND:VEVENT");
    let (c, w) = lenient(&text);
    assert_eq!(c.events[0].end, Some(End::At(c.events[0].start)));
    assert_eq!(
        w,
        ["line 7 (VEVENT uid x@y): DTEND: DTEND is before DTSTART: treated as zero length"]
    );
    assert_eq!(
        strict_error(&text),
        "line 7: DTEND: DTEND is before DTSTART"
    );
}

#[test]
fn dtend_in_a_dst_gap_takes_the_offset_before_it_or_zero_length_when_before_the_start() {
    // 02:30 does not exist in New York on 8 March 2026: read as 03:30 EDT.
    let text = wrap(
        "BEGIN:VEVENT\nUID:g\nDTSTART;TZID=America/New_York:20260308T010000\n\
         DTEND;TZID=America/New_York:20260308T023000\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:h\nDTSTART;TZID=America/New_York:20260308T024500\n\
         DTEND;TZID=America/New_York:20260308T031500\nEND:VEVENT",
    );
    let (c, w) = lenient(&text);
    let occ = kairos_core::query::occurrences(
        &c,
        super::support::t("2026-03-08T00:00:00Z"),
        super::support::t("2026-03-09T00:00:00Z"),
        Tz::UTC,
        &Limits::default(),
    )
    .expect("query");
    let spans: Vec<String> = occ
        .iter()
        .map(|o| {
            let end = o.end.map(|e| e.display(Tz::UTC)).unwrap_or_default();
            format!("{} {}", o.start.display(Tz::UTC), end)
        })
        .collect();
    // 02:45 is in the gap too: it starts at 03:45 EDT, after its 03:15 end.
    assert_eq!(
        spans,
        [
            "2026-03-08T01:00:00-05:00 2026-03-08T03:30:00-04:00",
            "2026-03-08T03:45:00-04:00 2026-03-08T03:45:00-04:00",
        ]
    );
    assert_eq!(w.len(), 2, "{w:#?}");
    assert!(w[0].contains("DTEND: the time falls in a daylight-saving gap"));
    assert!(w[1].contains("DTEND is before DTSTART: treated as zero length"));
}

#[test]
fn date_and_date_time_mixed_in_one_event_take_dtstart_s_type() {
    let text = wrap(
        "BEGIN:VEVENT\nUID:m1\nDTSTART;VALUE=DATE:20260310\nDTEND:20260311T120000Z\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:m2\nDTSTART;TZID=Europe/Berlin:20260310T090000\n\
         RRULE:FREQ=DAILY;COUNT=2\nRDATE;VALUE=DATE:20260320\nEXDATE;VALUE=DATE:20260311\nEND:VEVENT",
    );
    let (c, w) = lenient(&text);
    // An end at 12:00 on the 11th covers that day: the event spans 10–11 March.
    assert_eq!(
        c.events[0].end,
        Some(End::At(When::Date(
            chrono::NaiveDate::from_ymd_opt(2026, 3, 12).expect("date")
        )))
    );
    assert_eq!(
        starts(&c, "2026-03-09T00:00:00Z", "2026-04-01T00:00:00Z", Tz::UTC),
        [
            "2026-03-10",
            "2026-03-10T09:00:00+01:00",
            "2026-03-20T09:00:00+01:00"
        ]
    );
    assert_eq!(w.len(), 3, "{w:#?}");
    assert!(w[0].contains("converted to DTSTART's type"));
    assert!(strict_error(&text).contains("DTEND must have the same value type"));
}

#[test]
fn an_alarm_without_trigger_is_skipped_and_one_without_action_rings_as_display() {
    let text = wrap(
        "BEGIN:VEVENT\nUID:al\nDTSTART:20260301T090000Z\n\
         BEGIN:VALARM\nTRIGGER:-PT5M\nEND:VALARM\n\
         BEGIN:VALARM\nACTION:DISPLAY\nEND:VALARM\n\
         BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT10M\nREPEAT:2\nEND:VALARM\nEND:VEVENT",
    );
    let (c, w) = lenient(&text);
    let alarms = &c.events[0].alarms;
    assert_eq!(alarms.len(), 2);
    assert_eq!(alarms[0].action, "DISPLAY", "no ACTION: a plain reminder");
    assert_eq!(
        alarms[0].trigger,
        kairos_core::model::Trigger::Relative {
            offset: kairos_core::time::Dur {
                days: 0,
                secs: -300
            },
            related: kairos_core::model::Related::Start
        }
    );
    assert_eq!(alarms[1].repeat, 0, "REPEAT without DURATION: fires once");
    assert_eq!(
        w,
        [
            "line 7 (VALARM uid al): VALARM has no ACTION: read as a DISPLAY alarm",
            "line 10 (VALARM uid al): VALARM has no TRIGGER: alarm skipped",
            "line 16 (VALARM uid al): REPEAT: REPEAT:2 needs a DURATION between repetitions: \
             its repetitions ignored",
        ]
    );
    assert_eq!(strict_error(&text), "line 7: VALARM has no ACTION");
}

#[test]
fn a_missing_uid_is_a_stable_hash_of_the_content_without_dtstamp() {
    let ev = |stamp: &str| {
        wrap(&format!(
            "BEGIN:VEVENT\nDTSTAMP:{stamp}\nDTSTART:20260301T090000Z\nSUMMARY:no uid\nEND:VEVENT"
        ))
    };
    let (a, w) = lenient(&ev("20260101T000000Z"));
    let (b, _) = lenient(&ev("20261204T101010Z"));
    assert_eq!(a.events[0].uid, b.events[0].uid, "a new download, same UID");
    assert!(a.events[0].uid.starts_with("kairos-nouid-"));
    assert_eq!(
        w,
        [format!(
            "line 4 (VEVENT): VEVENT has no UID: given UID {} (a hash of its content)",
            a.events[0].uid
        )]
    );
}

#[test]
fn an_event_without_dtstart_is_skipped_and_the_others_kept() {
    let text = wrap(
        "BEGIN:VEVENT\nUID:no-start\nSUMMARY:lost\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:bad-start\nDTSTART:2026-03-01\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:ok\nSUMMARY:kept\nDTSTART:20260301T090000Z\nEND:VEVENT",
    );
    let (c, w) = lenient(&text);
    assert_eq!(summaries(&c), ["kept"]);
    assert_eq!(
        w,
        [
            "line 4 (VEVENT uid no-start): VEVENT has no DTSTART (RFC 5545 requires one for a \
             calendar event): event skipped",
            "line 10 (VEVENT uid bad-start): DTSTART: \"2026-03-01\" is not a DATE-TIME \
             (YYYYMMDDTHHMMSS[Z]): event skipped",
        ]
    );
    assert!(strict_error(&text).contains("has no DTSTART"));
}

#[test]
fn an_unknown_tzid_without_vtimezone_is_floating_time() {
    let text = wrap("BEGIN:VEVENT\nUID:u\nDTSTART;TZID=Mars/Olympus:20260301T090000\nEND:VEVENT");
    let (c, w) = lenient(&text);
    assert_eq!(
        starts(
            &c,
            "2026-03-01T00:00:00Z",
            "2026-03-02T00:00:00Z",
            Tz::Asia__Tokyo
        ),
        ["2026-03-01T09:00:00+09:00"]
    );
    assert_eq!(
        w,
        [
            "line 6 (VEVENT uid u): DTSTART: unknown time zone TZID=\"Mars/Olympus\": not an IANA \
          name, and no VTIMEZONE defines it: read as floating time"
        ]
    );
    assert!(strict_error(&text).contains("unknown time zone"));
}

#[test]
fn limits_and_non_icalendar_input_are_errors_in_both_modes() {
    let text = wrap("BEGIN:VEVENT\nUID:a\nDTSTART:20260301T090000Z\nEND:VEVENT");
    let small = Limits {
        max_file_bytes: 20,
        ..Limits::default()
    };
    let got = ics::parse_calendar_lenient(text.as_bytes(), &small);
    assert!(matches!(got, Err(Error::Limit(_))), "{got:?}");
    let few = Limits {
        max_components: 1,
        ..Limits::default()
    };
    let got = ics::parse_calendar_lenient(text.as_bytes(), &few);
    assert!(matches!(got, Err(Error::Limit(_))), "{got:?}");
    for junk in ["", "hello\nworld\n", "<html><body>404</body></html>"] {
        let got = ics::parse_calendar_lenient(junk.as_bytes(), &Limits::default());
        assert!(got.is_err(), "{junk:?}: {got:?}");
    }
    let repeat = wrap(
        "BEGIN:VEVENT\nUID:a\nDTSTART:20260301T090000Z\nBEGIN:VALARM\nACTION:DISPLAY\n\
         TRIGGER:PT0S\nREPEAT:5000\nDURATION:PT1M\nEND:VALARM\nEND:VEVENT",
    );
    assert!(ics::parse_calendar_lenient(repeat.as_bytes(), &Limits::default()).is_err());
}

#[test]
fn warnings_serialise_with_their_fields() {
    let text =
        wrap("BEGIN:VEVENT\nUID:x@y\nDTSTART:20260301T090000Z\nDTEND:20260301T080000Z\nEND:VEVENT");
    let (_, w) = ics::parse_calendar_lenient(text.as_bytes(), &Limits::default()).expect("read");
    let fields: Vec<&str> = vec![&w[0].component, &w[0].problem, &w[0].action]
        .into_iter()
        .map(String::as_str)
        .collect();
    assert_eq!(
        (w[0].line, w[0].uid.as_deref(), fields),
        (
            7,
            Some("x@y"),
            vec![
                "VEVENT",
                "DTEND: DTEND is before DTSTART",
                "treated as zero length"
            ]
        )
    );
}
