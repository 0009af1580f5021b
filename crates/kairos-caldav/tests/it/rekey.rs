//! A calendar linked by a version before 12-06 (a random uid) moves to the
//! uid derived from the collection at its device's next CalDAV sync, and
//! every device follows over Kairos sync: one calendar everywhere, the
//! same reminder keys, a dismissed reminder still dismissed, nothing that
//! rings twice. Real Radicale, real `kairos-server`: A linked by the old
//! version, B linked by today's (it made `Work (2)`), C not linked.

use chrono::{DateTime, Duration, Utc};
use kairos_store::{Instance, State};

use crate::event;
use crate::kx::{Dev, Kx};
use crate::linked::{PATH, UID, at};
use crate::server::DavServer;
use crate::t0;

const REVIEW: &str = "review-0815";
const REVIEW_PATH: &str = "/alice/work/review-0815.ics";
const RETRO: &str = "retro-42";
const RETRO_PATH: &str = "/alice/work/retro-42.ics";

/// What the old version did when it linked the collection: a calendar
/// called after it with a random uid (`import` makes one), the server's
/// series imported into it. Built here from today's link: its calendar
/// (the derived uid) is replaced by such a one, holding the same series.
fn link_as_before_12_06(d: &mut Dev, url: &str) {
    d.link(url);
    assert_eq!(d.caldav().changed_here, 3);
    let derived = d.work();
    let rows = d.store.read(|r| r.events_of(derived.id)).unwrap();
    let cal = kairos_engine::series::read_calendar(&rows, "Work").unwrap();
    let cc = d.store.read(|r| r.caldav_calendar_of(derived.id)).unwrap();
    let cc = cc.expect("linked");
    d.store.write(|tx| tx.delete_calendar(derived.id)).unwrap();
    let now = d.now();
    kairos_engine::import::import(
        &mut d.store,
        "Work",
        &cal,
        now,
        Duration::hours(48),
        chrono_tz::UTC,
    )
    .unwrap();
    let old = d.work();
    assert_ne!(old.uid, derived.uid, "a random uid");
    d.store
        .write(|tx| tx.caldav_calendar_link(cc.id, old.id))
        .unwrap();
}

/// Every reminder of series `uid` that would ring here, in any calendar:
/// (key, trigger).
fn ringing(d: &Dev, uid: &str) -> Vec<(String, DateTime<Utc>)> {
    let far = t0() + Duration::days(2);
    let mut v: Vec<_> = d
        .store
        .read(|r| r.due(far, 1000))
        .unwrap()
        .into_iter()
        .filter(|i| i.event_uid == uid)
        .map(|i| (i.key, i.trigger_at))
        .collect();
    v.sort();
    v
}

/// Every instance of series `uid` in any calendar.
fn instances(d: &Dev, uid: &str) -> Vec<Instance> {
    let cals = d.store.read(|r| r.calendars()).unwrap();
    let mut v = Vec::new();
    for c in cals {
        v.extend(d.store.read(|r| r.instances_of_event(c.id, uid)).unwrap());
    }
    v.sort_by(|a, b| a.key.cmp(&b.key));
    v
}

fn calendars(d: &Dev) -> Vec<(String, String)> {
    let mut v: Vec<_> = d
        .store
        .read(|r| r.calendars())
        .unwrap()
        .into_iter()
        .map(|c| (c.name, c.uid))
        .collect();
    v.sort();
    v
}

#[test]
fn a_calendar_linked_before_12_06_moves_to_the_derived_uid_on_every_device() {
    let rad = DavServer::radicale();
    rad.mkcalendar("work", "Work", "#3366ccff", &["VEVENT", "VTODO"]);
    rad.put(
        PATH,
        &event(UID, "20260301T100000Z", "Stand-up", "20260101T000000Z"),
    );
    rad.put(
        REVIEW_PATH,
        &event(REVIEW, "20260301T110000Z", "Review", "20260101T000000Z"),
    );
    rad.put(
        RETRO_PATH,
        &event(RETRO, "20260301T082000Z", "Retro", "20260101T000000Z"),
    );
    let kx = Kx::start();
    // A: linked by the old version, then paired; the stand-up's reminder
    // (09:45) dismissed in advance; the retro's (08:05) snoozed when it
    // rang, for 30 minutes.
    let mut a = Dev::new();
    link_as_before_12_06(&mut a, &rad.url());
    a.join(&kx, &kx.invite(), "laptop");
    a.exchange();
    let standup = a.pending(UID)[0].0.clone();
    kairos_engine::actions::dismiss(&mut a.store, &standup, t0()).unwrap();
    let retro = a.pending(RETRO)[0].0.clone();
    let rang = t0() + Duration::minutes(6);
    a.set_now(rang);
    let (_, until) =
        kairos_engine::actions::snooze(&mut a.store, &retro, Duration::minutes(30), rang).unwrap();
    assert_eq!(until, t0() + Duration::minutes(36));
    a.exchange();
    // B: paired, then adds the account with today's version: the derived
    // calendar, `Work (2)` beside A's `Work`.
    let mut b = Dev::joined(&kx, &a.pair(), "desktop");
    b.link(&rad.url());
    b.caldav();
    b.exchange();
    let mut c = Dev::joined(&kx, &a.pair(), "phone");
    a.exchange();
    let derived = b
        .store
        .read(|r| r.calendars())
        .unwrap()
        .into_iter()
        .find(|c| c.name == "Work (2)")
        .expect("B made Work (2)")
        .uid;
    // The defect as it was: two calendars on C, the review rings twice,
    // the dismissed stand-up rings from the copy.
    assert_eq!(calendars(&c).len(), 2, "{:?}", calendars(&c));
    assert_eq!(ringing(&c, REVIEW).len(), 2);
    assert_eq!(ringing(&b, UID).len(), 1);
    assert_eq!(ringing(&c, RETRO).len(), 2, "the snooze and the copy");

    // A's next CalDAV sync (today's version) moves its calendar.
    at(&[&a, &b, &c], 7);
    // (It writes the stand-up's dismissal and the retro's snooze there:
    // RFC 9074.)
    let ra = a.caldav();
    assert_eq!(
        (ra.acknowledged_there, ra.snoozed_there, ra.conflicts),
        (1, 1, 0),
        "{ra:?}"
    );
    a.exchange();
    b.exchange();
    c.exchange();
    let rb = b.caldav();
    assert_eq!((rb.written_there, rb.conflicts), (0, 0), "{rb:?}");
    b.exchange();
    a.exchange();
    c.exchange();
    assert_eq!(a.caldav().written_there, 0);

    let review_keys = ringing(&a, REVIEW);
    assert_eq!(review_keys.len(), 1, "{review_keys:?}");
    assert!(review_keys[0].0.starts_with(&format!("{derived}/")));
    assert_eq!(review_keys[0].1, t0() + Duration::minutes(165));
    let moved_standup = standup.replacen(standup.split('/').next().unwrap(), &derived, 1);
    let retro_keys = ringing(&a, RETRO);
    assert_eq!(retro_keys.len(), 1, "{retro_keys:?}");
    assert!(retro_keys[0].0.starts_with(&format!("{derived}/")));
    assert!(retro_keys[0].0.contains("~snooze@"), "{retro_keys:?}");
    assert_eq!(retro_keys[0].1, until, "rings once, at its snooze");
    for (name, d) in [("A", &a), ("B", &b), ("C", &c)] {
        assert_eq!(ringing(d, RETRO), retro_keys, "{name}: the snooze");
        assert_eq!(
            calendars(d),
            vec![("Work".to_owned(), derived.clone())],
            "{name}: one calendar, the derived uid"
        );
        assert_eq!(ringing(d, REVIEW), review_keys, "{name}: the same keys");
        assert!(ringing(d, UID).is_empty(), "{name}: the stand-up rings");
        let s = instances(d, UID);
        assert_eq!(s.len(), 1, "{name}: {s:?}");
        assert_eq!(
            (s[0].key.as_str(), s[0].state),
            (moved_standup.as_str(), State::Acknowledged)
        );
        let caldav: Vec<_> = d
            .conflicts()
            .into_iter()
            .filter(|c| c.starts_with("caldav/"))
            .collect();
        assert!(caldav.is_empty(), "{name}: {caldav:?}");
    }
    // The server holds the series, unmoved, with the dismissal and the
    // snooze.
    assert!(rad.get(RETRO_PATH).body.contains("RELTYPE=SNOOZE"));
    assert!(rad.get(PATH).body.contains("DTSTART:20260301T100000Z"));
    assert!(
        rad.get(REVIEW_PATH)
            .body
            .contains("DTSTART:20260301T110000Z")
    );
}

#[test]
fn a_device_never_paired_moves_its_old_link_and_keeps_its_reminders_state() {
    let rad = DavServer::radicale();
    rad.mkcalendar("work", "Work", "#3366ccff", &["VEVENT", "VTODO"]);
    rad.put(
        PATH,
        &event(UID, "20260301T100000Z", "Stand-up", "20260101T000000Z"),
    );
    rad.put(
        REVIEW_PATH,
        &event(REVIEW, "20260301T110000Z", "Review", "20260101T000000Z"),
    );
    rad.put(
        RETRO_PATH,
        &event(RETRO, "20260301T082000Z", "Retro", "20260101T000000Z"),
    );
    let mut a = Dev::new();
    link_as_before_12_06(&mut a, &rad.url());
    let old = a.work().uid;
    // No Kairos sync: the state is in the reminders' rows only.
    let standup = a.pending(UID)[0].0.clone();
    kairos_engine::actions::dismiss(&mut a.store, &standup, t0()).unwrap();
    let retro = a.pending(RETRO)[0].0.clone();
    let rang = t0() + Duration::minutes(6);
    a.set_now(rang);
    let (_, until) =
        kairos_engine::actions::snooze(&mut a.store, &retro, Duration::minutes(30), rang).unwrap();
    let review = a.pending(REVIEW);
    // Hidden here, with a default reminder: this device's settings.
    let id = a.work().id;
    let mut settings = a.store.read(|r| r.calendar_by_id(id)).unwrap().unwrap();
    settings.visible = false;
    settings.default_alarms = r#"[{"minutes":10}]"#.to_owned();
    a.store.write(|tx| tx.update_calendar(&settings)).unwrap();
    // Its working week: Monday to Thursday.
    let week = 0b000_1111;
    kairos_engine::workdays::set_work_time(
        &mut a.store,
        "Work",
        Some(week),
        None,
        rang,
        chrono_tz::UTC,
    )
    .unwrap();

    a.set_now(t0() + Duration::minutes(7));
    let ra = a.caldav();
    assert_eq!(
        (ra.changed_here, ra.conflicts),
        (3, 0),
        "the three series moved: {ra:?}"
    );
    let derived = a.work().uid;
    assert_ne!(derived, old);
    let moved = |k: &str| k.replacen(&old, &derived, 1);
    assert_eq!(calendars(&a), vec![("Work".to_owned(), derived.clone())]);
    let s = instances(&a, UID);
    assert_eq!(s.len(), 1, "{s:?}");
    assert_eq!(
        (s[0].key.clone(), s[0].state),
        (moved(&standup), State::Acknowledged)
    );
    assert_eq!(
        ringing(&a, REVIEW),
        vec![(moved(&review[0].0), review[0].1)]
    );
    let r = ringing(&a, RETRO);
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0].1, until);
    let id = a.work().id;
    let kept = a.store.read(|r| r.calendar_by_id(id)).unwrap().unwrap();
    assert_eq!(
        (kept.visible, kept.default_alarms.as_str()),
        (false, settings.default_alarms.as_str())
    );
    let works = a.store.read(|r| r.work_settings()).unwrap();
    let w = works.iter().find(|w| w.uid == derived).unwrap();
    assert_eq!(w.week, week, "the working week stays");
    // A second sync has nothing to move and nothing to write.
    let again = a.caldav();
    assert_eq!(
        (again.changed_here, again.written_there, again.conflicts),
        (0, 0, 0),
        "{again:?}"
    );
    assert_eq!(a.work().uid, derived);
}
