//! RFC 9074 snoozes of one occurrence of a recurring series that has an
//! override (`RECURRENCE-ID`): written into the override's `VEVENT` (the
//! alarm of that instance) and read from there, about that occurrence only;
//! and snooze alarms with a relative `TRIGGER`. Against Radicale.

use chrono::{DateTime, Duration, TimeZone, Utc};
use kairos_caldav::account;
use kairos_caldav::secret::FileStore;
use kairos_store::{Instance, State, Store};

use crate::server::{PASSWORD, USER};
use crate::{Fx, t0, when};

fn at(d: u32, h: u32, m: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, d, h, m, 0).unwrap()
}

fn instances(store: &Store, uid: &str) -> Vec<Instance> {
    let cal = store
        .read(|r| r.calendars())
        .unwrap()
        .into_iter()
        .find(|c| c.name == "Work")
        .unwrap();
    let mut v = store.read(|r| r.instances_of_event(cal.id, uid)).unwrap();
    v.sort_by(|a, b| a.key.cmp(&b.key));
    v
}

/// The open (not snooze) reminder of `occurrence`.
fn of(store: &Store, uid: &str, occurrence: &str) -> Instance {
    instances(store, uid)
        .into_iter()
        .find(|i| i.occurrence == occurrence && i.snooze_of.is_none())
        .unwrap_or_else(|| panic!("no reminder of {occurrence}: {:?}", instances(store, uid)))
}

/// A daily stand-up at 10:00, three days from 1 March, reminders 15
/// minutes before (`alarm` is the alarm's extra lines, e.g. its `UID`),
/// and `over`: override components (whole `VEVENT`s).
fn series(uid: &str, alarm: &str, over: &str) -> String {
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:{uid}\r\n\
         DTSTAMP:20260101T000000Z\r\nDTSTART:20260301T100000Z\r\nDURATION:PT30M\r\n\
         RRULE:FREQ=DAILY;COUNT=3\r\nSUMMARY:Stand-up\r\nBEGIN:VALARM\r\n{alarm}\
         ACTION:DISPLAY\r\nDESCRIPTION:r\r\nTRIGGER:-PT15M\r\nEND:VALARM\r\nEND:VEVENT\r\n\
         {over}END:VCALENDAR\r\n"
    )
}

/// An override of occurrence `rid` moved to `start`, with `alarms`.
fn override_of(uid: &str, rid: &str, start: &str, alarms: &str) -> String {
    format!(
        "BEGIN:VEVENT\r\nUID:{uid}\r\nDTSTAMP:20260101T000000Z\r\nRECURRENCE-ID:{rid}\r\n\
         DTSTART:{start}\r\nDURATION:PT30M\r\nSUMMARY:Stand-up (moved)\r\n{alarms}END:VEVENT\r\n"
    )
}

const ALARM: &str =
    "BEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:r\r\nTRIGGER:-PT15M\r\nEND:VALARM\r\n";

/// The server's copy of `path` unfolded, as its `VEVENT` blocks.
fn vevents(fx: &Fx, path: &str) -> Vec<String> {
    let body = fx.rad.get(path).body.replace("\r\n ", "");
    body.split("BEGIN:VEVENT")
        .skip(1)
        .map(|e| e.split("END:VEVENT").next().unwrap_or_default().to_owned())
        .collect()
}

/// Another database linked to the same account (another of alice's
/// computers, or the same one reinstalled).
struct Other {
    store: Store,
    secrets: FileStore,
    _dir: tempfile::TempDir,
}

impl Other {
    fn linked(fx: &Fx, now: DateTime<Utc>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("o.db");
        let mut store = Store::open(&db).unwrap();
        let secrets = FileStore::beside(&db);
        let url = fx.rad.url();
        let login = account::Login {
            url: &url,
            user: USER,
            password: PASSWORD,
            ca_pem: None,
        };
        account::add(&mut store, &secrets, &login, &[], when(now)).unwrap();
        let mut o = Self {
            store,
            secrets,
            _dir: dir,
        };
        o.sync(now);
        o
    }

    fn sync(&mut self, now: DateTime<Utc>) -> kairos_caldav::sync::SyncReport {
        let mut r = account::sync(&mut self.store, &self.secrets, None, when(now)).unwrap();
        r.remove(0)
    }
}

#[test]
fn a_snooze_of_an_overridden_occurrence_is_written_into_the_override_and_read_from_there() {
    let mut fx = Fx::new();
    let path = "/alice/work/daily.ics";
    let over = override_of("daily", "20260302T100000Z", "20260302T110000Z", ALARM);
    fx.rad.put(path, &series("daily", "", &over));
    fx.add();
    fx.sync(t0());
    let mut other = Other::linked(&fx, t0());

    // The moved occurrence (2 March, now 11:00) rings at 10:45; snoozed
    // ten minutes at 10:46.
    let moved = of(&fx.store, "daily", "2026-03-02T10:00:00Z");
    assert_eq!(moved.trigger_at, at(2, 10, 45));
    let (_, until) = kairos_engine::actions::snooze(
        &mut fx.store,
        &moved.key,
        Duration::minutes(10),
        at(2, 10, 46),
    )
    .unwrap();
    let r = fx.sync(at(2, 10, 47));
    assert_eq!((r.snoozed_there, r.written_there), (1, 1), "{r:?}");

    let ev = vevents(&fx, path);
    assert_eq!(ev.len(), 2, "{ev:?}");
    let (master, over): (Vec<&String>, Vec<&String>) =
        ev.iter().partition(|e| !e.contains("RECURRENCE-ID"));
    assert!(
        !master[0].contains("RELTYPE=SNOOZE") && !master[0].contains("ACKNOWLEDGED"),
        "the master's alarm is not the snoozed one: {}",
        master[0]
    );
    assert!(
        over[0].contains("RELATED-TO;RELTYPE=SNOOZE:kairos-alarm-0.daily"),
        "{}",
        over[0]
    );
    assert!(
        over[0].contains("TRIGGER;VALUE=DATE-TIME:20260302T105600Z"),
        "{}",
        over[0]
    );
    assert!(
        over[0].contains("ACKNOWLEDGED:20260302T104600Z"),
        "{}",
        over[0]
    );
    // The keys stay (the alarm got a Kairos UID, which maps back to #0).
    assert_eq!(
        of(&fx.store, "daily", "2026-03-02T10:00:00Z").key,
        moved.key
    );
    let quiet = fx.sync(at(2, 10, 48));
    assert_eq!(
        (quiet.snoozed_there, quiet.written_there),
        (0, 0),
        "{quiet:?}"
    );

    // Read from the override on the other database: that occurrence's
    // reminder is snoozed to the same time, and no other.
    let r = other.sync(at(2, 10, 48));
    assert_eq!(r.snoozed_here, 1, "{r:?}");
    let there = of(&other.store, "daily", "2026-03-02T10:00:00Z");
    assert_eq!(there.key, moved.key);
    assert_eq!(there.state, State::Snoozed);
    let snooze = instances(&other.store, "daily")
        .into_iter()
        .find(|i| i.snooze_of.as_deref() == Some(there.key.as_str()))
        .expect("a snooze instance");
    assert_eq!((snooze.trigger_at, snooze.state), (until, State::Pending));
    let snoozed: Vec<String> = instances(&other.store, "daily")
        .into_iter()
        .filter(|i| i.state == State::Snoozed)
        .map(|i| i.occurrence)
        .collect();
    assert_eq!(snoozed, ["2026-03-02T10:00:00Z"]);
}

#[test]
fn another_clients_snooze_in_an_override_snoozes_that_occurrence_only() {
    let mut fx = Fx::new();
    let path = "/alice/work/daily.ics";
    // The third day's stand-up moved to the first day at noon (rings
    // 11:45); master and override alarm share the UID "a1", as clients
    // copy alarms into overrides.
    let uid_alarm = "UID:a1\r\n";
    let alarm = format!(
        "BEGIN:VALARM\r\n{uid_alarm}ACTION:DISPLAY\r\nDESCRIPTION:r\r\nTRIGGER:-PT15M\r\nEND:VALARM\r\n"
    );
    let over = override_of("daily", "20260303T100000Z", "20260301T120000Z", &alarm);
    fx.rad.put(path, &series("daily", uid_alarm, &over));
    fx.add();
    fx.sync(t0());
    let moved = of(&fx.store, "daily", "2026-03-03T10:00:00Z");
    assert_eq!(moved.trigger_at, at(1, 11, 45));

    // At 11:46 another client snoozes the moved one until 10:00 the next
    // day — after the second day's reminder (09:45), which must stay.
    let snoozed = "BEGIN:VALARM\r\nUID:a1\r\nACTION:DISPLAY\r\nDESCRIPTION:r\r\nTRIGGER:-PT15M\r\n\
         ACKNOWLEDGED:20260301T114600Z\r\nEND:VALARM\r\nBEGIN:VALARM\r\nUID:s1\r\n\
         RELATED-TO;RELTYPE=SNOOZE:a1\r\nACTION:DISPLAY\r\nDESCRIPTION:r\r\n\
         TRIGGER;VALUE=DATE-TIME:20260302T100000Z\r\nEND:VALARM\r\n";
    let over = override_of("daily", "20260303T100000Z", "20260301T120000Z", snoozed);
    fx.rad.put(path, &series("daily", uid_alarm, &over));
    let r = fx.sync(at(1, 11, 50));
    assert_eq!(r.snoozed_here, 1, "{r:?}");
    assert_eq!(
        of(&fx.store, "daily", "2026-03-03T10:00:00Z").state,
        State::Snoozed
    );
    let second = of(&fx.store, "daily", "2026-03-02T10:00:00Z");
    assert_eq!(
        (second.state, second.trigger_at),
        (State::Pending, at(2, 9, 45)),
        "the second day's reminder is not the snoozed one"
    );
}

/// The snoozed alarm `a1` acknowledged at `acked` and its snooze alarm
/// `s1` with `trigger` (a whole `TRIGGER…` line), as another client writes
/// them.
fn snoozed_alarms(acked: &str, trigger: &str) -> String {
    format!(
        "BEGIN:VALARM\r\nUID:a1\r\nACTION:DISPLAY\r\nDESCRIPTION:r\r\nTRIGGER:-PT15M\r\n\
         ACKNOWLEDGED:{acked}\r\nEND:VALARM\r\nBEGIN:VALARM\r\nUID:s1\r\n\
         RELATED-TO;RELTYPE=SNOOZE:a1\r\nACTION:DISPLAY\r\nDESCRIPTION:r\r\n\
         {trigger}\r\nEND:VALARM\r\n"
    )
}

fn snooze_of(store: &Store, uid: &str, base: &str) -> Option<Instance> {
    instances(store, uid)
        .into_iter()
        .find(|i| i.snooze_of.as_deref() == Some(base))
}

#[test]
fn another_clients_snooze_with_a_relative_trigger_is_resolved_against_the_occurrence() {
    let mut fx = Fx::new();
    let path = "/alice/work/one.ics";
    let one = |alarms: &str| {
        format!(
            "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:one\r\n\
             DTSTAMP:20260101T000000Z\r\nDTSTART:20260301T100000Z\r\nDURATION:PT30M\r\n\
             SUMMARY:Call\r\n{alarms}END:VEVENT\r\nEND:VCALENDAR\r\n"
        )
    };
    let alarm = "BEGIN:VALARM\r\nUID:a1\r\nACTION:DISPLAY\r\nDESCRIPTION:r\r\nTRIGGER:-PT15M\r\nEND:VALARM\r\n";
    fx.rad.put(path, &one(alarm));
    fx.add();
    fx.sync(t0());
    let r0 = of(&fx.store, "one", "2026-03-01T10:00:00Z");
    assert_eq!(r0.trigger_at, at(1, 9, 45));

    // Snoozed at 09:46 "until 5 minutes before the start" (09:55).
    fx.rad.put(
        path,
        &one(&snoozed_alarms("20260301T094600Z", "TRIGGER:-PT5M")),
    );
    let r = fx.sync(at(1, 9, 47));
    assert_eq!((r.snoozed_here, r.acknowledged_here), (1, 0), "{r:?}");
    let base = of(&fx.store, "one", "2026-03-01T10:00:00Z");
    assert_eq!(base.state, State::Snoozed, "snoozed, not dismissed");
    let s = snooze_of(&fx.store, "one", &base.key).expect("a snooze instance");
    assert_eq!((s.trigger_at, s.state), (at(1, 9, 55), State::Pending));
    // Read again: nothing new.
    fx.rad.put(
        path,
        &one(&snoozed_alarms("20260301T094600Z", "TRIGGER:-PT5M")),
    );
    assert_eq!(fx.sync(at(1, 9, 48)).snoozed_here, 0);

    // Snoozed again "until the end" (RELATED=END: 10:30).
    fx.rad.put(
        path,
        &one(&snoozed_alarms(
            "20260301T095600Z",
            "TRIGGER;RELATED=END:PT0S",
        )),
    );
    let r = fx.sync(at(1, 9, 57));
    assert_eq!(r.snoozed_here, 1, "{r:?}");
    let open: Vec<DateTime<Utc>> = instances(&fx.store, "one")
        .into_iter()
        .filter(|i| i.state == State::Pending)
        .map(|i| i.trigger_at)
        .collect();
    assert_eq!(open, [at(1, 10, 30)]);
}

#[test]
fn a_relative_snooze_in_an_override_is_resolved_against_its_moved_start() {
    let mut fx = Fx::new();
    let path = "/alice/work/daily.ics";
    let uid_alarm = "UID:a1\r\n";
    let alarm = format!(
        "BEGIN:VALARM\r\n{uid_alarm}ACTION:DISPLAY\r\nDESCRIPTION:r\r\nTRIGGER:-PT15M\r\nEND:VALARM\r\n"
    );
    // The second day's stand-up moved to 11:00 (rings 10:45).
    let over = override_of("daily", "20260302T100000Z", "20260302T110000Z", &alarm);
    fx.rad.put(path, &series("daily", uid_alarm, &over));
    fx.add();
    fx.sync(t0());
    let moved = of(&fx.store, "daily", "2026-03-02T10:00:00Z");
    assert_eq!(moved.trigger_at, at(2, 10, 45));

    // Snoozed at 10:46 until 5 minutes before its (moved) start: 10:55.
    let snoozed = snoozed_alarms("20260302T104600Z", "TRIGGER:-PT5M");
    let over = override_of("daily", "20260302T100000Z", "20260302T110000Z", &snoozed);
    fx.rad.put(path, &series("daily", uid_alarm, &over));
    let r = fx.sync(at(2, 10, 47));
    assert_eq!(r.snoozed_here, 1, "{r:?}");
    let base = of(&fx.store, "daily", "2026-03-02T10:00:00Z");
    assert_eq!(base.state, State::Snoozed);
    let s = snooze_of(&fx.store, "daily", &base.key).expect("a snooze instance");
    assert_eq!(s.trigger_at, at(2, 10, 55));
}

#[test]
fn a_dismissal_in_kairos_ends_another_clients_snooze_with_a_relative_trigger() {
    // "5 minutes before the start" (09:55) and "at the end" (10:30).
    for (trigger, due) in [
        ("TRIGGER:-PT5M", at(1, 9, 55)),
        ("TRIGGER;RELATED=END:PT0S", at(1, 10, 30)),
    ] {
        let mut fx = Fx::new();
        let path = "/alice/work/one.ics";
        let one = |alarms: &str| {
            format!(
                "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\n\
                 UID:one\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20260301T100000Z\r\n\
                 DURATION:PT30M\r\nSUMMARY:Call\r\n{alarms}END:VEVENT\r\nEND:VCALENDAR\r\n"
            )
        };
        let alarm = "BEGIN:VALARM\r\nUID:a1\r\nACTION:DISPLAY\r\nDESCRIPTION:r\r\n\
                     TRIGGER:-PT15M\r\nEND:VALARM\r\n";
        fx.rad.put(path, &one(alarm));
        fx.add();
        fx.sync(t0());
        // The other client snoozes it when it rings at 09:45.
        fx.rad
            .put(path, &one(&snoozed_alarms("20260301T094600Z", trigger)));
        let r = fx.sync(at(1, 9, 47));
        assert_eq!(r.snoozed_here, 1, "{trigger}: {r:?}");
        let base = of(&fx.store, "one", "2026-03-01T10:00:00Z");
        let s = snooze_of(&fx.store, "one", &base.key).expect("a snooze instance");
        assert_eq!(s.trigger_at, due, "{trigger}");

        // It rings again at its time; dismissed here a minute later.
        let dismissed = due + Duration::minutes(1);
        kairos_engine::actions::dismiss(&mut fx.store, &s.key, dismissed).unwrap();
        let r = fx.sync(dismissed + Duration::minutes(1));
        assert_eq!(r.acknowledged_there, 1, "{trigger}: {r:?}");
        let stamp = format!("ACKNOWLEDGED:{}", dismissed.format("%Y%m%dT%H%M%SZ"));
        let ev = vevents(&fx, path).remove(0);
        let alarms: Vec<&str> = ev.split("BEGIN:VALARM").skip(1).collect();
        assert_eq!(alarms.len(), 2, "{trigger}: {alarms:?}");
        for a in &alarms {
            assert!(
                a.contains(&stamp),
                "{trigger}: both alarms done: {alarms:?}"
            );
        }

        // Read back (here, and by a client that reads RFC 9074): nothing
        // snoozes it any more, nothing rings.
        let r = fx.sync(dismissed + Duration::minutes(2));
        assert_eq!(
            (r.snoozed_here, r.written_there),
            (0, 0),
            "{trigger}: {r:?}"
        );
        let open: Vec<Instance> = instances(&fx.store, "one")
            .into_iter()
            .filter(|i| i.state == State::Pending)
            .collect();
        assert!(open.is_empty(), "{trigger}: {open:?}");
    }
}
