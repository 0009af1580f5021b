//! The file's own `VTIMEZONE` is the law (RFC 5545 §3.6.5): a block whose
//! rules match no IANA zone is used as written when reading leniently.

use chrono_tz::Tz;
use kairos_core::model::{When, Zone};
use kairos_core::{Limits, alarms, ics};

use super::support::{cal, starts, t, wrap};

fn lenient(text: &str) -> (kairos_core::model::Calendar, Vec<String>) {
    match ics::parse_calendar_lenient(text.as_bytes(), &Limits::default()) {
        Ok((c, w)) => (c, w.iter().map(ToString::to_string).collect()),
        Err(e) => panic!("lenient read failed: {e}"),
    }
}

/// An invented zone: +03:00, and +04:00 from the second Sunday of April
/// 02:00 to the first Sunday of October 03:00. No IANA zone has these dates.
const INVENTED: &str = "BEGIN:VTIMEZONE\nTZID:Harbour Time\n\
    BEGIN:STANDARD\nDTSTART:19901007T030000\nRRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=1SU\n\
    TZOFFSETFROM:+0400\nTZOFFSETTO:+0300\nTZNAME:HST\nEND:STANDARD\n\
    BEGIN:DAYLIGHT\nDTSTART:19900408T020000\nRRULE:FREQ=YEARLY;BYMONTH=4;BYDAY=2SU\n\
    TZOFFSETFROM:+0300\nTZOFFSETTO:+0400\nTZNAME:HDT\nEND:DAYLIGHT\nEND:VTIMEZONE";

#[test]
fn a_custom_offset_zone_is_used_as_written() {
    let text = include_str!("../data/interop/custom-tz-unknown-offset.ics");
    let (c, w) = lenient(text);
    assert_eq!(
        starts(&c, "2026-04-01T00:00:00Z", "2026-04-02T00:00:00Z", Tz::UTC),
        ["2026-04-01T09:00:00+05:17"]
    );
    assert_eq!(
        w,
        [
            "line 5 (VTIMEZONE): time zone \"Kairos Test Time\" is not an IANA name, and its \
          VTIMEZONE rules match no IANA zone: its own rules are used"
        ]
    );
}

#[test]
fn a_custom_dst_zone_keeps_wall_clock_times_and_resolves_gaps_and_overlaps() {
    let text = wrap(&format!(
        "{INVENTED}\nBEGIN:VEVENT\nUID:daily\nSUMMARY:Ferry\n\
         DTSTART;TZID=Harbour Time:20260410T090000\nRRULE:FREQ=DAILY;COUNT=4\n\
         BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT10M\nEND:VALARM\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:gap\nDTSTART;TZID=Harbour Time:20260412T023000\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:overlap\nDTSTART;TZID=Harbour Time:20261004T023000\nEND:VEVENT"
    ));
    let (c, w) = lenient(&text);
    assert!(
        matches!(c.events[0].start, When::DateTime { zone: Zone::Custom(z), .. } if z.name() == "Harbour Time")
    );
    assert_eq!(w.len(), 1, "{w:#?}");
    // 12 April 2026 is the second Sunday: 02:00 → 03:00, +03:00 → +04:00.
    assert_eq!(
        starts(&c, "2026-04-10T00:00:00Z", "2026-04-14T00:00:00Z", Tz::UTC),
        [
            "2026-04-10T09:00:00+03:00",
            "2026-04-11T09:00:00+03:00",
            // 02:30 does not exist: the offset before the gap, so 03:30 +04:00.
            "2026-04-12T03:30:00+04:00",
            "2026-04-12T09:00:00+04:00",
            "2026-04-13T09:00:00+04:00",
        ]
    );
    let hits = alarms::alarms(
        &c,
        t("2026-04-10T00:00:00Z"),
        t("2026-04-14T00:00:00Z"),
        Tz::UTC,
        &Limits::default(),
    )
    .expect("alarms");
    let triggers: Vec<String> = hits.iter().map(|h| h.trigger.to_rfc3339()).collect();
    assert_eq!(
        triggers,
        [
            "2026-04-10T05:50:00+00:00",
            "2026-04-11T05:50:00+00:00",
            "2026-04-12T04:50:00+00:00",
            "2026-04-13T04:50:00+00:00",
        ]
    );
    // 4 October is the first Sunday: 03:00 → 02:00; 02:30 happens twice, the first counts.
    assert_eq!(
        starts(&c, "2026-10-03T00:00:00Z", "2026-10-05T00:00:00Z", Tz::UTC),
        ["2026-10-04T02:30:00+04:00"]
    );
}

#[test]
fn a_windows_name_with_its_own_rules_follows_the_rules_not_the_name() {
    // Named like Outlook's zone, but with the invented rules: the block wins.
    let text = wrap(&format!(
        "{}\nBEGIN:VEVENT\nUID:w\nDTSTART;TZID=Eastern Standard Time:20260701T090000\nEND:VEVENT",
        INVENTED.replace("Harbour Time", "Eastern Standard Time")
    ));
    let (c, _) = lenient(&text);
    assert_eq!(
        starts(&c, "2026-07-01T00:00:00Z", "2026-07-02T00:00:00Z", Tz::UTC),
        ["2026-07-01T09:00:00+04:00"]
    );
    // Without a block, the Windows name maps to its IANA zone.
    let bare =
        wrap("BEGIN:VEVENT\nUID:w\nDTSTART;TZID=Eastern Standard Time:20260701T090000\nEND:VEVENT");
    assert_eq!(
        starts(
            &cal(&bare),
            "2026-07-01T00:00:00Z",
            "2026-07-02T00:00:00Z",
            Tz::UTC
        ),
        ["2026-07-01T09:00:00-04:00"]
    );
}

#[test]
fn exchange_blocks_starting_in_1601_or_0001_keep_their_dst_rules() {
    for year in ["1601", "0001"] {
        let text = wrap(&format!(
            "BEGIN:VTIMEZONE\nTZID:Pacific Standard Time\n\
             BEGIN:STANDARD\nDTSTART:{year}0101T020000\nRRULE:FREQ=YEARLY;BYDAY=1SU;BYMONTH=11\n\
             TZOFFSETFROM:-0700\nTZOFFSETTO:-0800\nEND:STANDARD\n\
             BEGIN:DAYLIGHT\nDTSTART:{year}0101T020000\nRRULE:FREQ=YEARLY;BYDAY=2SU;BYMONTH=3\n\
             TZOFFSETFROM:-0800\nTZOFFSETTO:-0700\nEND:DAYLIGHT\nEND:VTIMEZONE\n\
             BEGIN:VEVENT\nUID:x\nDTSTART;TZID=Pacific Standard Time:20260105T090000\n\
             RRULE:FREQ=MONTHLY;COUNT=7\nEND:VEVENT"
        ));
        for c in [cal(&text), lenient(&text).0] {
            assert_eq!(
                starts(&c, "2026-01-01T00:00:00Z", "2026-08-01T00:00:00Z", Tz::UTC),
                [
                    "2026-01-05T09:00:00-08:00",
                    "2026-02-05T09:00:00-08:00",
                    "2026-03-05T09:00:00-08:00",
                    "2026-04-05T09:00:00-07:00",
                    "2026-05-05T09:00:00-07:00",
                    "2026-06-05T09:00:00-07:00",
                    "2026-07-05T09:00:00-07:00",
                ],
                "observances from {year}"
            );
        }
    }
}

#[test]
fn a_vtimezone_nobody_references_never_fails_a_file() {
    let text = wrap(
        "BEGIN:VTIMEZONE\nTZID:Broken\nBEGIN:STANDARD\nDTSTART:garbage\nTZOFFSETFROM:+99\n\
         END:STANDARD\nEND:VTIMEZONE\nBEGIN:VTIMEZONE\nBEGIN:STANDARD\nEND:STANDARD\nEND:VTIMEZONE\n\
         BEGIN:VEVENT\nUID:a\nDTSTART:20260301T090000Z\nEND:VEVENT",
    );
    assert_eq!(cal(&text).events.len(), 1);
    let (c, w) = lenient(&text);
    assert_eq!((c.events.len(), w.len()), (1, 0));
}

#[test]
fn export_writes_custom_zone_times_as_utc_instants_that_read_back_strictly() {
    let text = wrap(&format!(
        "{INVENTED}\nBEGIN:VEVENT\nUID:one\nDTSTART;TZID=Harbour Time:20260701T090000\n\
         DTEND;TZID=Harbour Time:20260701T100000\nEND:VEVENT"
    ));
    let (c, _) = lenient(&text);
    assert_eq!(
        ics::custom_zones(&c)
            .iter()
            .map(|z| z.name())
            .collect::<Vec<_>>(),
        ["Harbour Time"]
    );
    let out = ics::write_calendar(&c, t("2026-01-01T00:00:00Z"));
    assert!(
        out.contains("DTSTART:20260701T050000Z\r\nDTEND:20260701T060000Z\r\n"),
        "{out}"
    );
    let again = cal(&out);
    assert_eq!(
        starts(
            &again,
            "2026-07-01T00:00:00Z",
            "2026-07-02T00:00:00Z",
            Tz::UTC
        )[0],
        "2026-07-01T05:00:00Z"
    );
}
