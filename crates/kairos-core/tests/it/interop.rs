//! Calendars as real producers export them (`tests/data/interop/`): Google
//! Calendar, Outlook/Exchange, Apple Calendar and Thunderbird, plus custom
//! `VTIMEZONE`s. For each: it parses; occurrences and alarm triggers in a window
//! match values worked out by hand from the file's own rules (written below,
//! with the arithmetic in comments); and export → re-import gives the same
//! occurrences and alarm keys and keeps the vendor's X- properties.

use chrono::{Duration, Offset, TimeZone};
use chrono_tz::Tz;
use kairos_core::model::{Calendar, When, Zone};
use kairos_core::{Error, Limits, alarms, ics, query};

use crate::support::{cal, t};

const GOOGLE: &str = include_str!("../data/interop/google.ics");
const OUTLOOK: &str = include_str!("../data/interop/outlook.ics");
const APPLE: &str = include_str!("../data/interop/apple.ics");
const THUNDERBIRD: &str = include_str!("../data/interop/thunderbird.ics");
const CUSTOM_BERLIN: &str = include_str!("../data/interop/custom-tz-berlin-rules.ics");
const CUSTOM_UNKNOWN: &str = include_str!("../data/interop/custom-tz-unknown-offset.ics");

/// `start summary` for every occurrence starting in `[from, to)`.
fn agenda(c: &Calendar, from: &str, to: &str, tz: Tz) -> Vec<String> {
    match query::occurrences(c, t(from), t(to), tz, &Limits::default()) {
        Ok(v) => v
            .iter()
            .map(|o| {
                format!(
                    "{} {}",
                    o.start.display(tz),
                    o.event.summary.as_deref().unwrap_or("")
                )
            })
            .collect(),
        Err(e) => panic!("query failed: {e}"),
    }
}

/// `trigger summary` for every alarm trigger in `[from, to)`; with `keys`, the
/// alarm's instance key instead of the summary.
fn triggers(c: &Calendar, from: &str, to: &str, tz: Tz, keys: bool) -> Vec<String> {
    match alarms::alarms(c, t(from), t(to), tz, &Limits::default()) {
        Ok(v) => v
            .iter()
            .map(|h| {
                let what = if keys {
                    h.key("interop").to_string()
                } else {
                    h.occurrence.event.summary.clone().unwrap_or_default()
                };
                format!("{} {what}", h.trigger.format("%Y-%m-%dT%H:%M:%SZ"))
            })
            .collect(),
        Err(e) => panic!("alarm query failed: {e}"),
    }
}

/// Exports `c`, re-imports it, and checks that the window looks the same
/// (occurrences, alarm keys and triggers) and that a second export is
/// identical to the first. Returns the exported text.
fn round_trip(c: &Calendar, from: &str, to: &str, tz: Tz) -> String {
    let text = ics::write_calendar(c, t("2026-04-01T00:00:00Z"));
    let again = cal(&text);
    assert_eq!(
        agenda(&again, from, to, tz),
        agenda(c, from, to, tz),
        "occurrences after re-import\n{text}"
    );
    assert_eq!(
        triggers(&again, from, to, tz, true),
        triggers(c, from, to, tz, true),
        "alarms after re-import\n{text}"
    );
    assert_eq!(
        ics::write_calendar(&again, t("2026-04-01T00:00:00Z")),
        text,
        "export is not stable"
    );
    text
}

fn assert_kept(text: &str, lines: &[&str]) {
    // Compare unfolded: export folds long lines at 75 octets.
    let unfolded = text.replace("\r\n ", "");
    for l in lines {
        assert!(unfolded.contains(l), "export lost {l:?}:\n{text}");
    }
}

#[test]
fn google_calendar_export() {
    let c = cal(GOOGLE);
    assert_eq!(c.name.as_deref(), Some("Family"));
    let (from, to) = ("2026-03-01T00:00:00Z", "2026-04-14T00:00:00Z");
    let berlin = Tz::Europe__Berlin;
    // Weekly on Monday 10:00 Berlin; 16 March excluded; 23 March moved to Tuesday
    // 24 March 14:00; summer time from 29 March. The all-day birthday floats
    // (midnight Berlin); the dentist is in UTC, as Google writes single events.
    assert_eq!(
        agenda(&c, from, to, berlin),
        [
            "2026-03-02T10:00:00+01:00 Family sync",
            "2026-03-09T10:00:00+01:00 Family sync",
            "2026-03-10T16:00:00Z Dentist",
            "2026-03-24T14:00:00+01:00 Family sync (moved)",
            "2026-03-30T10:00:00+02:00 Family sync",
            "2026-04-06T10:00:00+02:00 Family sync",
            "2026-04-12 Oma's birthday",
            "2026-04-13T10:00:00+02:00 Family sync",
        ]
    );
    let occ =
        query::occurrences(&c, t(from), t(to), berlin, &Limits::default()).unwrap_or_default();
    let moved = occ
        .iter()
        .find(|o| o.event.recurrence_id.is_some())
        .map(|o| o.recurrence_id.map(|r| r.display(berlin)));
    assert_eq!(moved, Some(Some("2026-03-23T10:00:00+01:00".to_owned())));
    // -P0DT0H10M0S before each sync (09:00Z in winter, 08:00Z in summer); the
    // override keeps its own alarm; -P1D before the dentist; -P0DT15H0M0S before
    // the birthday's midnight (2026-04-12T00:00+02:00) is 09:00+02:00 the day before.
    assert_eq!(
        triggers(&c, from, to, berlin, false),
        [
            "2026-03-02T08:50:00Z Family sync",
            "2026-03-09T08:50:00Z Family sync",
            "2026-03-09T16:00:00Z Dentist",
            "2026-03-24T12:50:00Z Family sync (moved)",
            "2026-03-30T07:50:00Z Family sync",
            "2026-04-06T07:50:00Z Family sync",
            "2026-04-11T07:00:00Z Oma's birthday",
            "2026-04-13T07:50:00Z Family sync",
        ]
    );
    let text = round_trip(&c, from, to, berlin);
    assert_kept(
        &text,
        &[
            "X-WR-CALNAME:Family",
            "X-WR-TIMEZONE:Europe/Berlin",
            "X-WR-CALDESC:Shared family calendar",
            "X-GOOGLE-CONFERENCE:https://meet.google.com/abc-defg-hij",
            "X-WR-ALARMUID:0F7B1F4E-7F1D-4C55-9B0A-3C1D2E4F5A6B",
            "X-WR-ALARMUID:6A2C9D3E-1B4F-4A7C-8E5D-9F0A1B2C3D4E",
            "X-NUM-GUESTS=0:mailto:anna.schmidt@gmail.com",
            "DTSTAMP:20260401T081500Z",
        ],
    );
}

#[test]
fn outlook_export_with_windows_zone_names() {
    let c = cal(OUTLOOK);
    let (from, to) = ("2026-03-09T00:00:00Z", "2026-06-01T00:00:00Z");
    let berlin = Tz::Europe__Berlin;
    // "Eastern Standard Time": its block's rules say DST from the 2nd Sunday of
    // March (8 March 2026), so 9 March 09:00 is -04:00, not EST's -05:00.
    // "W. Europe Standard Time": weekly Wednesday 14:00 until 2026-04-22T12:00Z
    // (14:00+02:00, inclusive); 1 April excluded; 8 April moved to 16:00.
    assert_eq!(
        agenda(&c, from, to, berlin),
        [
            "2026-03-09T09:00:00-04:00 Call with the New York office",
            "2026-03-18T14:00:00+01:00 Project review",
            "2026-03-25T14:00:00+01:00 Project review",
            "2026-04-03 Good Friday",
            "2026-04-08T16:00:00+02:00 Project review",
            "2026-04-15T14:00:00+02:00 Project review",
            "2026-04-22T14:00:00+02:00 Project review",
        ]
    );
    // -PT30M before 13:00Z; -PT15M before 13:00Z (winter) / 12:00Z (summer) and
    // before the override's 14:00Z; -PT18H before Good Friday's midnight in
    // Berlin (2026-04-02T22:00Z) is 04:00Z.
    assert_eq!(
        triggers(&c, from, to, berlin, false),
        [
            "2026-03-09T12:30:00Z Call with the New York office",
            "2026-03-18T12:45:00Z Project review",
            "2026-03-25T12:45:00Z Project review",
            "2026-04-02T04:00:00Z Good Friday",
            "2026-04-08T13:45:00Z Project review",
            "2026-04-15T11:45:00Z Project review",
            "2026-04-22T11:45:00Z Project review",
        ]
    );
    let text = round_trip(&c, from, to, berlin);
    assert_kept(
        &text,
        &[
            "X-MICROSOFT-CDO-BUSYSTATUS:BUSY",
            "X-MICROSOFT-CDO-BUSYSTATUS:TENTATIVE",
            "X-MICROSOFT-CDO-BUSYSTATUS:OOF",
            "X-MICROSOFT-CDO-ALLDAYEVENT:TRUE",
            "X-MICROSOFT-CDO-INTENDEDSTATUS:BUSY",
            "X-MICROSOFT-DISALLOW-COUNTER:FALSE",
            "X-MS-OLK-CONFTYPE:0",
            "X-MS-OLK-APPTSEQTIME:20260310T091500Z",
            "X-MS-OLK-WKHRDAYS:MO,TU,WE,TH,FR",
            "X-WR-RELCALID:{0000002E-5B27-0B3C-2B8B-6A0E1C7A3E2D}",
            "X-ALT-DESC;FMTTYPE=text/html:<!DOCTYPE HTML PUBLIC",
            "<P><FONT FACE=\"Calibri\">Weekly project review.</FONT></P>",
        ],
    );
}

#[test]
fn apple_calendar_export() {
    let c = cal(APPLE);
    assert_eq!(c.name.as_deref(), Some("Home"));
    let (from, to) = ("2026-03-01T00:00:00Z", "2026-06-01T00:00:00Z");
    let berlin = Tz::Europe__Berlin;
    // Weekly Thursday 18:30 until 2026-04-30T21:59:59Z (Apple's "end of that
    // day"), so 30 April is the last; summer time from 29 March.
    assert_eq!(
        agenda(&c, from, to, berlin),
        [
            "2026-03-05T18:30:00+01:00 Yoga",
            "2026-03-12T18:30:00+01:00 Yoga",
            "2026-03-19T18:30:00+01:00 Yoga",
            "2026-03-26T18:30:00+01:00 Yoga",
            "2026-04-02T18:30:00+02:00 Yoga",
            "2026-04-06 Easter Monday",
            "2026-04-09T18:30:00+02:00 Yoga",
            "2026-04-16T18:30:00+02:00 Yoga",
            "2026-04-23T18:30:00+02:00 Yoga",
            "2026-04-30T18:30:00+02:00 Yoga",
        ]
    );
    let yoga = &c.events[0].alarms;
    assert_eq!(yoga[0].acknowledged, Some(t("2026-03-05T17:15:00Z")));
    assert_eq!(
        yoga[1].snooze_of.as_deref(),
        Some("C3A1E2B4-5D6F-4A7B-9C8D-0E1F2A3B4C5D")
    );
    assert_eq!(yoga[2].action, "NONE");
    // -PT15M before 17:30Z / 16:30Z; the RFC 9074 snooze alarm (17:25Z) is
    // no reminder of its own (it says when the snoozed one rings again,
    // which the engine's snooze carries); the ACTION:NONE placeholder is in 1976; -PT15H before Easter Monday's
    // midnight (2026-04-05T22:00Z) is 07:00Z on Easter Sunday.
    assert_eq!(
        triggers(&c, from, to, berlin, false),
        [
            "2026-03-05T17:15:00Z Yoga",
            "2026-03-12T17:15:00Z Yoga",
            "2026-03-19T17:15:00Z Yoga",
            "2026-03-26T17:15:00Z Yoga",
            "2026-04-02T16:15:00Z Yoga",
            "2026-04-05T07:00:00Z Easter Monday",
            "2026-04-09T16:15:00Z Yoga",
            "2026-04-16T16:15:00Z Yoga",
            "2026-04-23T16:15:00Z Yoga",
            "2026-04-30T16:15:00Z Yoga",
        ]
    );
    let text = round_trip(&c, from, to, berlin);
    assert_kept(
        &text,
        &[
            "X-APPLE-CALENDAR-COLOR:#1BADF8",
            "X-APPLE-TRAVEL-ADVISORY-BEHAVIOR:AUTOMATIC",
            "X-APPLE-STRUCTURED-LOCATION;VALUE=URI;X-ADDRESS=\"Torstraße 1, 10119 Berlin, Germany\";X-APPLE-RADIUS=70.59;X-TITLE=Yoga Loft:geo:52.529090,13.401390",
            "X-APPLE-UNIVERSAL-ID:7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d",
            "X-WR-ALARMUID:C3A1E2B4-5D6F-4A7B-9C8D-0E1F2A3B4C5D",
            "X-APPLE-DEFAULT-ALARM:TRUE",
            "X-APPLE-LOCAL-DEFAULT-ALARM:TRUE",
            "ACKNOWLEDGED:20260305T171500Z",
            "RELATED-TO;RELTYPE=SNOOZE:C3A1E2B4-5D6F-4A7B-9C8D-0E1F2A3B4C5D",
            "ATTACH;VALUE=URI:Chord",
        ],
    );
}

#[test]
fn thunderbird_export() {
    let c = cal(THUNDERBIRD);
    let (from, to) = ("2026-03-05T00:00:00Z", "2026-03-14T00:00:00Z");
    let ny = Tz::America__New_York;
    // Weekdays 09:30 New York; DST from 8 March; 10 March moved to 11:00;
    // 12 March excluded.
    assert_eq!(
        agenda(&c, from, to, ny),
        [
            "2026-03-05T09:30:00-05:00 Stand-up",
            "2026-03-06T09:30:00-05:00 Stand-up",
            "2026-03-09T09:30:00-04:00 Stand-up",
            "2026-03-10T11:00:00-04:00 Stand-up (late start)",
            "2026-03-11T09:30:00-04:00 Stand-up",
            "2026-03-11T16:00:00-04:00 Dentist",
            "2026-03-13T09:30:00-04:00 Stand-up",
        ]
    );
    // TRIGGER;VALUE=DURATION:-PT15M before 14:30Z / 13:30Z / 15:00Z (override);
    // the dentist's -PT1H before 20:00Z and RELATED=END -PT5M before 21:00Z.
    assert_eq!(
        triggers(&c, from, to, ny, false),
        [
            "2026-03-05T14:15:00Z Stand-up",
            "2026-03-06T14:15:00Z Stand-up",
            "2026-03-09T13:15:00Z Stand-up",
            "2026-03-10T14:45:00Z Stand-up (late start)",
            "2026-03-11T13:15:00Z Stand-up",
            "2026-03-11T19:00:00Z Dentist",
            "2026-03-11T20:55:00Z Dentist",
            "2026-03-13T13:15:00Z Stand-up",
        ]
    );
    let text = round_trip(&c, from, to, ny);
    assert_kept(
        &text,
        &[
            "X-MOZ-LASTACK:20260306T141500Z",
            // Thunderbird names a recurring event's snooze by the occurrence's start
            // in microseconds (2026-03-06T14:30:00Z): the exported start must match.
            "X-MOZ-SNOOZE-TIME-1772807400000000:20260306T142000Z",
            "X-MOZ-GENERATION:7",
            "X-MOZ-GENERATION:8",
            "X-MOZ-LASTACK:20260311T190100Z",
            "X-MOZ-SNOOZE-TIME:20260311T193100Z",
            "CATEGORIES:Work",
        ],
    );
}

#[test]
fn custom_vtimezone_with_berlin_rules_gets_berlin_offsets() {
    let c = cal(CUSTOM_BERLIN);
    let zone = match c.events[0].start {
        When::DateTime {
            zone: Zone::Tz(tz), ..
        } => tz,
        other => panic!("\"My Office Time\" did not resolve to a zone: {other:?}"),
    };
    // Whatever IANA name was picked, it must agree with Berlin every six hours
    // of 2026-2030 (both changes of every year included).
    let berlin = Tz::Europe__Berlin;
    let mut at = t("2026-01-01T00:00:00Z");
    while at < t("2031-01-01T00:00:00Z") {
        let off = |tz: Tz| tz.offset_from_utc_datetime(&at.naive_utc()).fix();
        assert_eq!(
            off(zone),
            off(berlin),
            "{} differs from Berlin at {at}",
            zone.name()
        );
        at += Duration::hours(6);
    }
    let (from, to) = ("2026-03-01T00:00:00Z", "2026-11-01T00:00:00Z");
    // Daily 09:00 for 4 days across the 29 March change; 26 October is after
    // the 25 October change back.
    assert_eq!(
        agenda(&c, from, to, Tz::UTC),
        [
            "2026-03-27T09:00:00+01:00 Office stand-up",
            "2026-03-28T09:00:00+01:00 Office stand-up",
            "2026-03-29T09:00:00+02:00 Office stand-up",
            "2026-03-30T09:00:00+02:00 Office stand-up",
            "2026-10-26T09:00:00+01:00 Autumn review",
        ]
    );
    assert_eq!(
        triggers(&c, from, to, Tz::UTC, false),
        [
            "2026-03-27T07:55:00Z Office stand-up",
            "2026-03-28T07:55:00Z Office stand-up",
            "2026-03-29T06:55:00Z Office stand-up",
            "2026-03-30T06:55:00Z Office stand-up",
        ]
    );
    round_trip(&c, from, to, Tz::UTC);
}

#[test]
fn custom_vtimezone_matching_no_iana_zone_is_an_error_naming_its_line() {
    let err = match ics::parse_calendar(CUSTOM_UNKNOWN.as_bytes(), &Limits::default()) {
        Ok(_) => panic!("a +05:17 zone resolved to some IANA zone"),
        Err(e) => e,
    };
    // Line 5 is `TZID:Kairos Test Time`.
    assert!(
        matches!(&err, Error::Property { line: 5, property, .. } if property == "TZID"),
        "unexpected error: {err:?}"
    );
    let msg = err.to_string();
    assert!(
        msg.starts_with("line 5: TZID:") && msg.contains("Kairos Test Time"),
        "{msg}"
    );
}
