//! Account settings over sync: the working week and the holiday flag
//! (`calendar.work` ops) set on one device reach the other and move its
//! pending working-day reminders; concurrent changes end the same on both.

use chrono::{DateTime, Duration, Utc};
use kairos_core::{Limits, ics};
use kairos_engine::clock::Clock;
use kairos_engine::workdays::set_work_time;
use kairos_store::State;

use crate::support::{Device, Server, pair_of};

/// Due Wednesday 3 June 2026 10:00 UTC; reminded one working day before at
/// 09:00: Tuesday 2 June 09:00 with a Monday–Friday week.
const REPORT: &str = "BEGIN:VEVENT\nUID:report\nSUMMARY:Report\nDTSTART:20260603T100000Z\n\
                      BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT15M\n\
                      X-KAIROS-WORKDAYS:v=1;before=1;at=09:00\nEND:VALARM\nEND:VEVENT";

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

/// Imports `body` (VEVENTs) into calendar `calendar` of `d`.
fn import_into(d: &mut Device, calendar: &str, body: &str) {
    let text = format!(
        "BEGIN:VCALENDAR\r\n{}\r\nEND:VCALENDAR\r\n",
        body.trim().replace('\n', "\r\n")
    );
    let cal = ics::parse_calendar(text.as_bytes(), &Limits::default()).unwrap();
    let horizon = kairos_engine::engine::Config::default().horizon;
    let t = d.clock.now();
    kairos_engine::import::import(&mut d.store, calendar, &cal, t, horizon, chrono_tz::UTC)
        .unwrap();
}

/// The report's pending reminder on `d`: (key, trigger).
fn report(d: &Device) -> (String, DateTime<Utc>) {
    let due = d.store.due(DateTime::<Utc>::MAX_UTC, 10).unwrap();
    let i = due
        .into_iter()
        .find(|i| i.event_uid == "report")
        .expect("the report's reminder is pending");
    assert_eq!(i.state, State::Pending);
    (i.key, i.trigger_at)
}

/// Calendar `name`'s (week, holidays) on `d`.
fn work(d: &Device, name: &str) -> (u8, bool) {
    let s = d.store.work_settings().unwrap();
    let s = s.iter().find(|s| s.name == name).expect("calendar");
    (s.week, s.holidays)
}

fn set(d: &mut Device, name: &str, week: Option<u8>, holidays: Option<bool>) -> usize {
    let t = d.clock.now();
    set_work_time(&mut d.store, name, week, holidays, t, chrono_tz::UTC)
        .unwrap()
        .1
}

fn week(days: &str) -> u8 {
    kairos_core::workdays::parse_week(days).unwrap()
}

/// A and B both holding [`REPORT`] in "work".
async fn both_with_report(server: &Server) -> (Device, Device, String) {
    let (mut a, mut b) = pair_of(server).await;
    import_into(&mut a, "work", REPORT);
    assert_eq!(a.push().await.unwrap(), 2);
    assert_eq!(b.sync_now().await.unwrap(), (0, 2));
    let (key, due) = report(&a);
    assert_eq!(due, at("2026-06-02T09:00:00Z"));
    assert_eq!(
        report(&b),
        (key.clone(), due),
        "the same key and trigger on B"
    );
    (a, b, key)
}

#[tokio::test]
async fn a_working_week_set_on_one_device_moves_the_pending_reminder_on_the_other() {
    let server = Server::start();
    let (mut a, mut b, key) = both_with_report(&server).await;
    // Tuesday is no longer a working day: the day before Wednesday is Monday.
    let no_tue = week("mon,wed,thu,fri");
    assert_eq!(set(&mut a, "work", Some(no_tue), None), 1);
    assert_eq!(report(&a), (key.clone(), at("2026-06-01T09:00:00Z")));
    assert_eq!(a.outbox_len(), 1, "one calendar.work op");
    assert_eq!(a.push().await.unwrap(), 1);

    assert_eq!(b.sync_now().await.unwrap(), (0, 1));
    assert_eq!(work(&b, "work"), (no_tue, false));
    assert_eq!(
        report(&b),
        (key.clone(), at("2026-06-01T09:00:00Z")),
        "moved on B too, same key"
    );
    assert_eq!(b.outbox_len(), 0, "applying records nothing to send back");

    // Saving the same settings again is no change: nothing to send.
    assert_eq!(set(&mut a, "work", Some(no_tue), Some(false)), 0);
    assert_eq!(a.outbox_len(), 0);
}

#[tokio::test]
async fn the_holiday_calendar_flag_set_on_one_device_moves_reminders_on_the_other() {
    let server = Server::start();
    let (mut a, mut b) = pair_of(&server).await;
    import_into(
        &mut a,
        "feiertage",
        "BEGIN:VEVENT\nUID:h1\nSUMMARY:Holiday\nDTSTART;VALUE=DATE:20260602\nEND:VEVENT",
    );
    import_into(&mut a, "work", REPORT);
    a.push().await.unwrap();
    b.sync_now().await.unwrap();
    let (key, due) = report(&b);
    assert_eq!(due, at("2026-06-02T09:00:00Z"), "not a holiday feed yet");

    assert_eq!(set(&mut a, "feiertage", None, Some(true)), 1);
    assert_eq!(a.push().await.unwrap(), 1);
    assert_eq!(b.sync_now().await.unwrap(), (0, 1));
    assert_eq!(work(&b, "feiertage"), (week("mon,tue,wed,thu,fri"), true));
    assert_eq!(report(&b), (key, at("2026-06-01T09:00:00Z")));
}

#[tokio::test]
async fn concurrent_working_time_changes_resolve_the_same_on_both_devices() {
    let server = Server::start();
    let (mut a, mut b, key) = both_with_report(&server).await;
    // Neither has seen the other's change; B's is a minute later.
    assert_eq!(set(&mut a, "work", Some(week("mon,wed,thu,fri")), None), 1);
    b.clock.advance(Duration::minutes(1));
    let every_day = week("mon,tue,wed,thu,fri,sat,sun");
    assert_eq!(set(&mut b, "work", Some(every_day), None), 0);
    assert_eq!(b.push().await.unwrap(), 1);
    assert_eq!(a.push().await.unwrap(), 1);
    a.sync_now().await.unwrap();
    b.sync_now().await.unwrap();

    for d in [&a, &b] {
        assert_eq!(work(d, "work"), (every_day, false), "the later change wins");
        assert_eq!(report(d), (key.clone(), at("2026-06-02T09:00:00Z")));
    }
    // Both devices saw both versions: each logs which one lost.
    let cal = a.store.calendars().unwrap();
    let uid = &cal.iter().find(|c| c.name == "work").unwrap().uid;
    let from = a.identity().unwrap().device;
    for d in [&a, &b] {
        let notes = d.store.audit_of(&format!("work/{uid}")).unwrap();
        assert!(
            notes
                .iter()
                .any(|n| n.reason.starts_with(&format!("edit from {from} lost to "))),
            "{notes:?}"
        );
    }
}

#[tokio::test]
async fn joining_sends_working_time_set_before_pairing() {
    let server = Server::start();
    let mut a = Device::new();
    import_into(&mut a, "work", REPORT);
    let no_tue = week("mon,wed,thu,fri");
    set(&mut a, "work", Some(no_tue), None);
    assert_eq!(a.outbox_len(), 0, "not paired: nothing recorded");
    a.join(&server.url, &server.invite(), "laptop")
        .await
        .unwrap();
    a.push().await.unwrap();
    let mut b = Device::new();
    let (code, _) = kairos_sync::pair(&a.store, &kairos_sync::Tls::default())
        .await
        .unwrap();
    b.join(&server.url, &code, "desktop").await.unwrap();
    b.sync_now().await.unwrap();
    assert_eq!(work(&b, "work"), (no_tue, false));
    assert_eq!(report(&b).1, at("2026-06-01T09:00:00Z"));
}
