//! Working-day reminders in the real engine (issue #11 §3): a holiday feed
//! or a working week that changes after a reminder was scheduled moves it
//! under the same key (one pending row, delivered once); a rule version
//! change is a schedule change (new key, the old pending one dropped).

use std::sync::{Arc, Mutex};

use crate::support::{at, cal};
use chrono::{DateTime, Duration, Utc};
use kairos_engine::channel::{Channel, Delivery, Reminder};
use kairos_engine::clock::ManualClock;
use kairos_engine::engine::{Config, Engine};
use kairos_engine::import::import;
use kairos_engine::workdays::set_work_time;
use kairos_store::{State, Store};

#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<String>>>);

impl Recorder {
    fn keys(&self) -> Vec<String> {
        self.0.lock().expect("lock").clone()
    }
}

impl Channel for Recorder {
    fn name(&self) -> &str {
        "recorder"
    }
    fn deliver<'a>(&'a self, r: &'a Reminder) -> Delivery<'a> {
        Box::pin(async move {
            self.0.lock().expect("lock").push(r.key.clone());
            Ok(())
        })
    }
}

/// The report is due Monday 6 April 2026 (Easter Monday) 09:00 Berlin;
/// remind one working day before at 09:00.
fn report(rule: &str) -> kairos_core::model::Calendar {
    cal(&format!(
        "BEGIN:VEVENT\nUID:report\nSUMMARY:Report\nDTSTART;TZID=Europe/Berlin:20260406T090000\n\
         BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT15M\nX-KAIROS-WORKDAYS:{rule}\nEND:VALARM\n\
         END:VEVENT"
    ))
}

/// A holiday feed: one all-day event per holiday.
fn feed(dates: &[&str]) -> kairos_core::model::Calendar {
    let body: String = dates
        .iter()
        .map(|d| {
            format!("BEGIN:VEVENT\nUID:h{d}\nSUMMARY:Holiday\nDTSTART;VALUE=DATE:{d}\nEND:VEVENT\n")
        })
        .collect();
    cal(&body)
}

const H: i64 = 24 * 7;

fn setup(dir: &std::path::Path, now: DateTime<Utc>) -> (Engine, Arc<ManualClock>, Recorder) {
    let clock = Arc::new(ManualClock::new(now));
    let ch = Recorder::default();
    let store = Store::open(dir.join("k.db")).expect("open");
    let config = Config {
        horizon: Duration::hours(H),
        ..Config::default()
    };
    let e = Engine::new(store, clock.clone(), vec![Box::new(ch.clone())], config);
    (e, clock, ch)
}

/// Every instance of the report: (key, trigger, state).
fn report_rows(e: &mut Engine) -> Vec<(String, DateTime<Utc>, State)> {
    let store = e.store();
    let cal = store
        .calendars()
        .expect("calendars")
        .into_iter()
        .find(|c| c.name == "work")
        .expect("work");
    store
        .instances_of_event(cal.id, "report")
        .expect("instances")
        .into_iter()
        .map(|i| (i.key, i.trigger_at, i.state))
        .collect()
}

#[tokio::test]
async fn a_holiday_feed_changed_after_scheduling_moves_the_reminder_under_its_key() {
    let dir = tempfile::tempdir().expect("tmp");
    let now = at("2026-04-01T06:00:00Z");
    let (mut e, clock, ch) = setup(dir.path(), now);
    let h = Duration::hours(H);
    let utc = chrono_tz::UTC;
    import(e.store(), "feiertage", &feed(&["20260101"]), now, h, utc).expect("feed v1");
    set_work_time(e.store(), "feiertage", None, Some(true), now, utc).expect("mark");
    import(
        e.store(),
        "work",
        &report("v=1;before=1;at=09:00"),
        now,
        h,
        utc,
    )
    .expect("report");
    e.materialise().expect("materialise");
    // Good Friday is not in the feed yet: Friday 3 April 09:00 CEST.
    let rows = report_rows(&mut e);
    assert_eq!(rows.len(), 1, "{rows:?}");
    let (key, trigger, _) = rows[0].clone();
    assert_eq!(trigger, at("2026-04-03T07:00:00Z"));

    // The feed's next version adds Good Friday: Thursday, same key, one row.
    import(
        e.store(),
        "feiertage",
        &feed(&["20260101", "20260403"]),
        now,
        h,
        utc,
    )
    .expect("feed v2");
    e.materialise().expect("materialise");
    assert_eq!(
        report_rows(&mut e),
        [(key.clone(), at("2026-04-02T07:00:00Z"), State::Pending)]
    );

    clock.set(at("2026-04-02T07:00:01Z"));
    e.materialise().expect("materialise");
    e.fire_due().await.expect("fire");
    assert_eq!(ch.keys(), std::slice::from_ref(&key));

    // Good Friday taken out again after delivery: nothing new is pending.
    let later = at("2026-04-02T08:00:00Z");
    import(e.store(), "feiertage", &feed(&["20260101"]), later, h, utc).expect("feed v3");
    clock.set(at("2026-04-03T07:00:01Z"));
    e.materialise().expect("materialise");
    e.fire_due().await.expect("fire");
    assert_eq!(
        report_rows(&mut e),
        [(key.clone(), at("2026-04-02T07:00:00Z"), State::Delivered)]
    );
    assert_eq!(ch.keys(), [key], "delivered once");
}

#[tokio::test]
async fn unmarking_a_holiday_calendar_and_changing_the_week_move_pending_reminders() {
    let dir = tempfile::tempdir().expect("tmp");
    let now = at("2026-04-01T06:00:00Z");
    let (mut e, _clock, _ch) = setup(dir.path(), now);
    let h = Duration::hours(H);
    let utc = chrono_tz::UTC;
    import(e.store(), "feiertage", &feed(&["20260403"]), now, h, utc).expect("feed");
    import(
        e.store(),
        "work",
        &report("v=1;before=1;at=09:00"),
        now,
        h,
        utc,
    )
    .expect("report");
    let key = report_rows(&mut e)[0].0.clone();
    // Not a holiday calendar yet: Friday.
    assert_eq!(report_rows(&mut e)[0].1, at("2026-04-03T07:00:00Z"));
    let (_, moved) =
        set_work_time(e.store(), "feiertage", None, Some(true), now, utc).expect("mark");
    assert_eq!(moved, 1);
    assert_eq!(
        report_rows(&mut e),
        [(key.clone(), at("2026-04-02T07:00:00Z"), State::Pending)]
    );
    // Sunday to Thursday: Sunday 5 April is the working day before Monday.
    let sun_thu = kairos_core::workdays::parse_week("sun,mon,tue,wed,thu").expect("week");
    set_work_time(e.store(), "work", Some(sun_thu), None, now, utc).expect("week");
    assert_eq!(
        report_rows(&mut e),
        [(key.clone(), at("2026-04-05T07:00:00Z"), State::Pending)]
    );
    let err = set_work_time(e.store(), "nope", None, Some(true), now, utc).expect_err("unknown");
    assert!(err.to_string().contains("\"nope\""), "{err}");
}

#[tokio::test]
async fn a_rule_version_change_replans_under_a_new_key_and_fires_the_plain_trigger() {
    let dir = tempfile::tempdir().expect("tmp");
    let now = at("2026-04-01T06:00:00Z");
    let (mut e, clock, ch) = setup(dir.path(), now);
    let h = Duration::hours(H);
    let utc = chrono_tz::UTC;
    import(
        e.store(),
        "work",
        &report("v=1;before=1;at=09:00"),
        now,
        h,
        utc,
    )
    .expect("v1");
    let v1 = report_rows(&mut e);
    assert_eq!(v1.len(), 1);
    // A newer client rewrote the rule as v=2: this version falls back to the
    // plain trigger (Monday 08:45 CEST) under a new key; the v=1 one is gone.
    import(
        e.store(),
        "work",
        &report("v=2;before=1;at=09:00"),
        now,
        h,
        utc,
    )
    .expect("v2");
    let v2 = report_rows(&mut e);
    assert_eq!(v2.len(), 1, "{v2:?}");
    assert_ne!(v2[0].0, v1[0].0);
    let base = |k: &str| k.rsplit_once('@').map(|(b, _)| b.to_owned());
    assert_eq!(
        base(&v2[0].0),
        base(&v1[0].0),
        "same reminder, new schedule"
    );
    assert_eq!(v2[0].1, at("2026-04-06T06:45:00Z"));
    clock.set(at("2026-04-03T07:00:01Z"));
    e.materialise().expect("materialise");
    e.fire_due().await.expect("fire");
    assert!(ch.keys().is_empty(), "the v=1 Friday reminder is gone");
    clock.set(at("2026-04-06T06:45:01Z"));
    e.materialise().expect("materialise");
    e.fire_due().await.expect("fire");
    assert_eq!(ch.keys(), std::slice::from_ref(&v2[0].0));
}

#[test]
fn upcoming_beyond_the_horizon_uses_the_working_time_the_engine_will_use() {
    let dir = tempfile::tempdir().expect("tmp");
    let now = at("2026-03-01T06:00:00Z");
    let (mut e, clock, _ch) = setup(dir.path(), now);
    let h = Duration::hours(H);
    let utc = chrono_tz::UTC;
    import(e.store(), "feiertage", &feed(&["20260403"]), now, h, utc).expect("feed");
    set_work_time(e.store(), "feiertage", None, Some(true), now, utc).expect("mark");
    import(
        e.store(),
        "work",
        &report("v=1;before=1;at=09:00"),
        now,
        h,
        utc,
    )
    .expect("report");
    e.materialise().expect("materialise");
    assert!(
        report_rows(&mut e).is_empty(),
        "a month away: not stored yet"
    );
    let until = at("2026-04-30T00:00:00Z");
    let preview =
        kairos_engine::preview::beyond_horizon(e.store(), now, until, utc, 100).expect("preview");
    let got: Vec<(String, DateTime<Utc>)> = preview
        .into_iter()
        .filter(|p| p.uid == "report")
        .map(|p| (p.key, p.trigger))
        .collect();
    // Good Friday is a holiday: Thursday 2 April 09:00 CEST.
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].1, at("2026-04-02T07:00:00Z"));
    // When the engine gets there it stores the same key at the same time.
    clock.set(at("2026-03-30T06:00:00Z"));
    e.materialise().expect("materialise");
    let rows = report_rows(&mut e);
    assert_eq!(rows, [(got[0].0.clone(), got[0].1, State::Pending)]);
}
