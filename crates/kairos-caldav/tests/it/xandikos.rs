//! The same sync against a second server, Xandikos, to catch quirks: its
//! own ETags and sync tokens, hrefs and principal layout.

use chrono::Duration;

use crate::{Fx, delete_here, edit_here, event, t0, todo};

#[test]
fn xandikos_first_sync_edits_both_ways_deletions_and_a_quiet_resync() {
    let mut fx = Fx::xandikos();
    let p = fx.path;
    fx.rad.put(
        &format!("{p}e1.ics"),
        &event("e1", "20260301T100000Z", "One", "20260101T000000Z"),
    );
    fx.rad.put(
        &format!("{p}e2.ics"),
        &event("e2", "20260301T120000Z", "Two", "20260101T000000Z"),
    );
    fx.rad.put(
        &format!("{p}t1.ics"),
        &todo("t1", "20260301T170000Z", "Task"),
    );
    let cals = fx.add();
    assert!(
        cals.iter().any(|c| c.href == p && c.calendar_id.is_some()),
        "{cals:?}"
    );
    let r = fx.sync(t0());
    assert_eq!((r.method, r.changed_here), ("propfind", 3), "{r:?}");
    let at = |h, m| chrono::TimeZone::with_ymd_and_hms(&chrono::Utc, 2026, 3, 1, h, m, 0).unwrap();
    assert_eq!(fx.pending("e1"), [at(9, 45)]);

    fx.rad.put(
        &format!("{p}e1.ics"),
        &event("e1", "20260301T110000Z", "One moved", "20260301T080000Z"),
    );
    fx.rad.delete(&format!("{p}e2.ics"));
    let later = t0() + Duration::minutes(1);
    edit_here(
        &mut fx,
        &todo("t1", "20260301T180000Z", "Task edited here"),
        later,
    );
    edit_here(
        &mut fx,
        &event("n1", "20260301T150000Z", "New here", "20260101T000000Z"),
        later,
    );
    let r = fx.sync(t0() + Duration::minutes(2));
    assert_eq!(
        (r.changed_here, r.deleted_here, r.written_there, r.conflicts),
        (1, 1, 2, 0),
        "{r:?}"
    );
    assert_eq!(fx.pending("e1"), [at(10, 45)]);
    assert!(
        fx.rad
            .get(&format!("{p}t1.ics"))
            .body
            .contains("Task edited here")
    );
    assert!(fx.rad.get(&format!("{p}n1.ics")).body.contains("New here"));

    delete_here(&mut fx, "n1", t0() + Duration::minutes(3));
    let r = fx.sync(t0() + Duration::minutes(4));
    assert_eq!(r.deleted_there, 1, "{r:?}");
    assert_eq!(fx.rad.get(&format!("{p}n1.ics")).status, 404);
    let quiet = fx.sync(t0() + Duration::minutes(5));
    assert_eq!(
        (
            quiet.fetched,
            quiet.changed_here,
            quiet.written_there,
            quiet.deleted_there
        ),
        (0, 0, 0, 0),
        "{quiet:?}"
    );
}

/// RFC 5545 §3.6.5: an object whose times carry `TZID=` must carry the
/// `VTIMEZONE` each names. What Kairos writes has them, with the zone's
/// real transitions, and reads back to the same reminders.
#[test]
fn written_objects_carry_the_vtimezones_their_tzids_name() {
    let mut fx = Fx::xandikos();
    let p = fx.path;
    fx.add();
    fx.sync(t0());
    let ics = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:z1\r\n\
               DTSTAMP:20260101T000000Z\r\nDTSTART;TZID=Europe/Berlin:20260302T100000\r\n\
               DTEND;TZID=America/New_York:20260302T050000\r\nRRULE:FREQ=WEEKLY;COUNT=10\r\n\
               SUMMARY:Zoned\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:r\r\n\
               TRIGGER:-PT15M\r\nEND:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n";
    edit_here(&mut fx, ics, t0() + Duration::minutes(1));
    let r = fx.sync(t0() + Duration::minutes(2));
    assert_eq!(r.written_there, 1, "{r:?}");
    let got = fx.rad.get(&format!("{p}z1.ics"));
    assert_eq!(got.status, 200);
    let body = got.body.replace("\r\n ", "");
    for tz in ["Europe/Berlin", "America/New_York"] {
        assert_eq!(
            body.matches(&format!("TZID:{tz}\r\n")).count(),
            1,
            "one VTIMEZONE for {tz}: {body}"
        );
    }
    let berlin = body
        .split("BEGIN:VTIMEZONE")
        .find(|b| b.contains("TZID:Europe/Berlin\r\n"))
        .unwrap();
    // 2026: CET → CEST on 29 March at 02:00 local, back on 25 October at 03:00.
    assert!(
        berlin.contains(
            "BEGIN:DAYLIGHT\r\nDTSTART:20260329T020000\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0200"
        ) || berlin.contains("RDATE:20260329T020000") && berlin.contains("TZOFFSETTO:+0200"),
        "{berlin}"
    );
    assert!(berlin.contains("20261025T030000"), "{berlin}");
    assert!(
        body.find("BEGIN:VTIMEZONE") < body.find("BEGIN:VEVENT"),
        "{body}"
    );
    // A strict reader takes it, and the zone means what it meant.
    let (cal, warnings) = kairos_core::ics::parse_calendar_lenient(
        got.body.as_bytes(),
        &kairos_core::Limits::default(),
    )
    .unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(cal.events.len(), 1);
    // 10:00 Berlin (CET) on 2 March is 09:00Z; the reminder at 08:45Z.
    let at = chrono::TimeZone::with_ymd_and_hms(&chrono::Utc, 2026, 3, 2, 8, 45, 0).unwrap();
    assert!(fx.pending("z1").contains(&at), "{:?}", fx.pending("z1"));
    let quiet = fx.sync(t0() + Duration::minutes(3));
    assert_eq!((quiet.fetched, quiet.written_there), (0, 0), "{quiet:?}");
}
