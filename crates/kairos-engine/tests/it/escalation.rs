//! Escalating reminders (`X-KAIROS-ESCALATE`) on a real database with the
//! engine's clock moved by hand: the reminder fires, then again every
//! `every` up to `max` times, and stops the moment it is acknowledged —
//! dismissed or snoozed here, hidden here, or dismissed on another device
//! and applied through sync.

use std::sync::{Arc, Mutex};

use crate::support::{at, cal, now};
use crate::sync::{device, drain};
use chrono::{DateTime, Duration, Utc};
use kairos_core::Limits;
use kairos_engine::actions::{dismiss, dismiss_here, snooze};
use kairos_engine::channel::{Channel, Delivery, Reminder};
use kairos_engine::clock::{Clock, ManualClock};
use kairos_engine::engine::{Config, Engine};
use kairos_engine::import::import;
use kairos_engine::materialise::{CalendarLabel, plan};
use kairos_engine::sync::apply::apply_remote;
use kairos_store::{State, Store};

/// Keeps (key, when it fired) of every delivery.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<(String, String)>>>);

impl Recorder {
    fn got(&self) -> Vec<(String, String)> {
        self.0.lock().expect("lock").clone()
    }
}

impl Channel for Recorder {
    fn name(&self) -> &str {
        "recorder"
    }
    fn deliver<'a>(&'a self, r: &'a Reminder) -> Delivery<'a> {
        Box::pin(async move {
            let at = r.fired_at.clone();
            self.0.lock().expect("lock").push((r.key.clone(), at));
            Ok(())
        })
    }
}

/// 10:00 meeting, reminded at 09:45 and then every 5 minutes, 3 more times
/// (its RFC REPEAT is ignored: the rule replaces it).
fn event(rule: &str) -> String {
    format!(
        "BEGIN:VEVENT\nUID:m\nSUMMARY:Meeting\nDTSTART:20260601T100000Z\n\
         BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT15M\nREPEAT:2\nDURATION:PT1M\n\
         X-KAIROS-ESCALATE:{rule}\nEND:VALARM\nEND:VEVENT"
    )
}

struct Setup {
    _dir: tempfile::TempDir,
    engine: Engine,
    clock: Arc<ManualClock>,
    rec: Recorder,
}

fn setup(body: &str) -> Setup {
    let dir = tempfile::tempdir().expect("tmp");
    let mut store = Store::open(dir.path().join("k.db")).expect("open");
    let h = Config::default().horizon;
    import(&mut store, "work", &cal(body), now(), h, chrono_tz::UTC).expect("import");
    let clock = Arc::new(ManualClock::new(now()));
    let rec = Recorder::default();
    let engine = Engine::new(
        store,
        clock.clone(),
        vec![Box::new(rec.clone())],
        Config::default(),
    );
    Setup {
        _dir: dir,
        engine,
        clock,
        rec,
    }
}

impl Setup {
    /// Walks the clock minute by minute up to `until`, as the daemon would
    /// wake: materialise, then fire what is due.
    async fn walk_to(&mut self, until: DateTime<Utc>) {
        while self.clock.now() < until {
            self.clock.advance(Duration::minutes(1));
            self.engine.materialise().expect("materialise");
            self.engine.fire_due().await.expect("fire");
        }
    }

    /// The keys fired, with their suffix after the base key, and when.
    fn fired(&self) -> Vec<(String, String)> {
        self.rec
            .got()
            .into_iter()
            .map(|(k, t)| {
                let suffix = k.split_once('~').map_or("base", |(_, s)| s).to_owned();
                (suffix, at(&t).to_rfc3339())
            })
            .collect()
    }

    fn base(&self) -> String {
        let got = self.rec.got();
        got[0].0.clone()
    }
}

fn fired(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, t)| ((*k).to_owned(), at(t).to_rfc3339()))
        .collect()
}

#[tokio::test]
async fn fires_the_reminder_then_every_interval_up_to_max_and_no_more() {
    let mut s = setup(&event("v=1;every=PT5M;max=3"));
    s.walk_to(at("2026-06-01T11:00:00Z")).await;
    assert_eq!(
        s.fired(),
        fired(&[
            ("base", "2026-06-01T09:45:00Z"),
            ("again@1", "2026-06-01T09:50:00Z"),
            ("again@2", "2026-06-01T09:55:00Z"),
            ("again@3", "2026-06-01T10:00:00Z"),
        ])
    );
    let base = s.base();
    assert!(!base.contains('~') && !base.ends_with("/1"), "{base}");
}

#[tokio::test]
async fn dismissing_after_the_second_repetition_stops_the_rest() {
    let mut s = setup(&event("v=1;every=PT5M;max=6"));
    s.walk_to(at("2026-06-01T09:55:00Z")).await;
    assert_eq!(s.fired().len(), 3, "{:?}", s.fired());
    // The person dismisses the repetition on screen: the whole reminder
    // is acknowledged.
    let shown = s.rec.got()[2].0.clone();
    assert!(shown.ends_with("~again@2"), "{shown}");
    dismiss(s.engine.store(), &shown, s.clock.now()).expect("dismiss");
    s.walk_to(at("2026-06-01T11:00:00Z")).await;
    assert_eq!(
        s.fired().len(),
        3,
        "no more after the dismissal: {:?}",
        s.fired()
    );
    let base = s.base();
    for k in 3..=6 {
        let i = s
            .engine
            .store()
            .get(&format!("{base}~again@{k}"))
            .expect("get");
        assert_eq!(i.expect("stored").state, State::Acknowledged, "again@{k}");
    }
}

#[tokio::test]
async fn repetitions_stored_after_a_dismissal_stay_quiet() {
    // Every 12 hours, 6 times: most repetitions are beyond the 48 h horizon
    // when the reminder is dismissed, and are stored later. The database
    // never joined an account (no acknowledgement record is kept).
    let mut s = setup(&event("v=1;every=PT12H;max=6"));
    s.walk_to(at("2026-06-01T09:46:00Z")).await;
    let base = s.base();
    dismiss(s.engine.store(), &base, s.clock.now()).expect("dismiss");
    s.walk_to(at("2026-06-05T12:00:00Z")).await;
    assert_eq!(s.fired().len(), 1, "{:?}", s.fired());
    let last = s
        .engine
        .store()
        .get(&format!("{base}~again@6"))
        .expect("get");
    assert_eq!(last.expect("stored later").state, State::Acknowledged);
}

#[tokio::test]
async fn hiding_here_stops_the_repetitions_here() {
    let mut s = setup(&event("v=1;every=PT5M;max=6"));
    s.walk_to(at("2026-06-01T09:50:00Z")).await;
    let shown = s.rec.got()[1].0.clone();
    dismiss_here(s.engine.store(), &shown, s.clock.now()).expect("hide");
    s.walk_to(at("2026-06-01T11:00:00Z")).await;
    assert_eq!(s.fired().len(), 2, "{:?}", s.fired());
}

#[tokio::test]
async fn a_snoozed_escalating_reminder_fires_at_the_snooze_and_stops_escalating() {
    let mut s = setup(&event("v=1;every=PT5M;max=6"));
    s.walk_to(at("2026-06-01T09:50:00Z")).await;
    let shown = s.rec.got()[1].0.clone();
    snooze(
        s.engine.store(),
        &shown,
        Duration::minutes(12),
        s.clock.now(),
    )
    .expect("snooze");
    s.walk_to(at("2026-06-01T11:00:00Z")).await;
    assert_eq!(
        s.fired(),
        fired(&[
            ("base", "2026-06-01T09:45:00Z"),
            ("again@1", "2026-06-01T09:50:00Z"),
            ("snooze@20260601T100200Z", "2026-06-01T10:02:00Z"),
        ])
    );
}

#[tokio::test]
async fn a_dismissal_from_another_device_stops_the_repetitions() {
    let dir = tempfile::tempdir().expect("tmp");
    let (mut a, mut b) = (device(dir.path(), "a"), device(dir.path(), "b"));
    let h = Config::default().horizon;
    let body = event("v=1;every=PT12H;max=6");
    import(&mut a, "work", &cal(&body), now(), h, chrono_tz::UTC).expect("import");
    let puts = drain(&mut a);
    apply_remote(&mut b, &puts, None, now(), h, chrono_tz::UTC).expect("apply puts");
    let clock = Arc::new(ManualClock::new(now()));
    let rec = Recorder::default();
    let mut engine = Engine::new(
        b,
        clock.clone(),
        vec![Box::new(rec.clone())],
        Config::default(),
    );
    let mut s = Setup {
        _dir: dir,
        engine,
        clock,
        rec,
    };
    s.walk_to(at("2026-06-01T22:00:00Z")).await;
    assert_eq!(s.fired().len(), 2, "base and again@1 on B: {:?}", s.fired());
    // A dismisses; B applies the op as the sync client would.
    let base = s.base();
    dismiss(&mut a, &base, s.clock.now()).expect("dismiss on A");
    let acks = drain(&mut a);
    assert_eq!(acks.len(), 1);
    engine = s.engine;
    let r = apply_remote(
        engine.store(),
        &acks,
        None,
        s.clock.now(),
        h,
        chrono_tz::UTC,
    )
    .expect("apply ack");
    s.engine = engine;
    assert_eq!(
        r.withdrawals.len(),
        2,
        "both shown ones withdrawn: {:?}",
        r.withdrawals
    );
    s.walk_to(at("2026-06-05T12:00:00Z")).await;
    assert_eq!(s.fired().len(), 2, "no more on B: {:?}", s.fired());
}

#[test]
fn keys_without_the_rule_are_unchanged_and_the_base_key_is_the_plain_key() {
    let two = "BEGIN:VEVENT\nUID:m\nDTSTART:20260601T100000Z\n\
               BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT15M\nEND:VALARM\n\
               BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT5M\nEND:VALARM\nEND:VEVENT";
    let with = two.replacen(
        "TRIGGER:-PT15M\n",
        "TRIGGER:-PT15M\nX-KAIROS-ESCALATE:v=1;every=PT1M;max=2\n",
        1,
    );
    let label = CalendarLabel {
        uid: "c",
        name: "c",
    };
    let keys = |body: &str| -> Vec<String> {
        let c = cal(body);
        let mut k: Vec<String> = plan(
            label,
            &c,
            now(),
            now() + Duration::days(1),
            chrono_tz::UTC,
            &Limits::default(),
        )
        .expect("plan")
        .into_iter()
        .map(|p| p.key)
        .collect();
        k.sort();
        k
    };
    let plain = keys(two);
    let escalating = keys(&with);
    assert_eq!(plain.len(), 2);
    assert_eq!(escalating.len(), 4, "{escalating:?}");
    for k in &plain {
        assert!(escalating.contains(k), "{k} kept: {escalating:?}");
    }
    let base = plain
        .iter()
        .find(|k| k.contains("/#0@"))
        .expect("first alarm");
    assert!(escalating.contains(&format!("{base}~again@1")));
    assert!(escalating.contains(&format!("{base}~again@2")));
}

#[test]
fn repetitions_of_a_trigger_before_the_window_are_planned_in_it() {
    let c = cal(&event("v=1;every=PT5M;max=3"));
    let label = CalendarLabel {
        uid: "c",
        name: "c",
    };
    let p = plan(
        label,
        &c,
        at("2026-06-01T09:52:00Z"),
        at("2026-06-01T09:58:00Z"),
        chrono_tz::UTC,
        &Limits::default(),
    )
    .expect("plan");
    let got: Vec<(String, DateTime<Utc>)> = p
        .iter()
        .map(|p| (p.key.rsplit('~').next().unwrap_or("").to_owned(), p.trigger))
        .collect();
    assert_eq!(
        got,
        vec![("again@2".to_owned(), at("2026-06-01T09:55:00Z"))]
    );
}
