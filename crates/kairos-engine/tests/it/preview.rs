//! `preview::beyond_horizon`: what it computes beyond the horizon is exactly
//! what the engine stores when its clock gets there (same keys, same
//! triggers), and it writes nothing.

use std::sync::Arc;

use crate::support::{cal, now};
use chrono::{DateTime, Duration, Utc};
use kairos_engine::clock::ManualClock;
use kairos_engine::engine::{Config, Engine};
use kairos_engine::import::import;
use kairos_engine::preview::{MAX_DAYS_AHEAD, PreviewError, beyond_horizon};
use kairos_store::Store;

/// A daily series in a DST zone plus a one-off 20 days out.
const EVENTS: &str = "BEGIN:VEVENT\nUID:daily\nSUMMARY:Standup\nDTSTART;TZID=Europe/Berlin:20260601T093000\n\
    RRULE:FREQ=DAILY;COUNT=12\nBEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT10M\nEND:VALARM\nEND:VEVENT\n\
    BEGIN:VEVENT\nUID:once\nSUMMARY:Dentist\nDTSTART:20260621T140000Z\n\
    BEGIN:VALARM\nUID:a1\nACTION:DISPLAY\nTRIGGER:-P1D\nEND:VALARM\nEND:VEVENT";

fn stored(store: &Store) -> Vec<(String, DateTime<Utc>)> {
    store
        .due(DateTime::<Utc>::MAX_UTC, 1000)
        .expect("due")
        .into_iter()
        .map(|i| (i.key, i.trigger_at))
        .collect()
}

#[test]
fn previewed_keys_are_the_keys_the_engine_materialises_later() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("k.db");
    let mut store = Store::open(&db).expect("open");
    let h = Config::default().horizon;
    import(&mut store, "work", &cal(EVENTS), now(), h, chrono_tz::UTC).expect("import");
    let before = stored(&store);
    let until = now() + Duration::days(30);
    let preview = beyond_horizon(&store, now(), until, chrono_tz::UTC, 1000).expect("preview");
    // 12 standups (the first already past, two inside the horizon), and
    // the dentist.
    assert_eq!(before.len(), 2, "{before:?}");
    assert_eq!(preview.len(), 10, "{preview:?}");
    assert_eq!(stored(&store), before, "a preview writes nothing");
    assert!(
        preview
            .iter()
            .all(|p| !before.iter().any(|(k, _)| *k == p.key))
    );
    assert!(preview.windows(2).all(|w| w[0].trigger <= w[1].trigger));

    // Let the engine's clock walk through the month, materialising as it goes.
    let clock = Arc::new(ManualClock::new(now()));
    let mut engine = Engine::new(store, clock.clone(), Vec::new(), Config::default());
    while clock_now(&clock) < until {
        clock.advance(Duration::hours(12));
        engine.materialise().expect("materialise");
    }
    let later: Vec<(String, DateTime<Utc>)> = stored(engine.store())
        .into_iter()
        .filter(|(k, _)| !before.iter().any(|(b, _)| b == k))
        .collect();
    let previewed: Vec<(String, DateTime<Utc>)> =
        preview.iter().map(|p| (p.key.clone(), p.trigger)).collect();
    assert_eq!(previewed, later);
}

fn clock_now(c: &ManualClock) -> DateTime<Utc> {
    kairos_engine::clock::Clock::now(c)
}

#[test]
fn a_preview_is_bounded_by_days_and_by_limit() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut store = Store::open(dir.path().join("k.db")).expect("open");
    let h = Config::default().horizon;
    import(&mut store, "work", &cal(EVENTS), now(), h, chrono_tz::UTC).expect("import");
    let too_far = now() + Duration::days(MAX_DAYS_AHEAD) + Duration::seconds(1);
    let err = beyond_horizon(&store, now(), too_far, chrono_tz::UTC, 10).expect_err("too far");
    assert!(matches!(err, PreviewError::TooFar { .. }), "{err}");
    assert!(err.to_string().contains("366 days"), "{err}");
    let edge = now() + Duration::days(MAX_DAYS_AHEAD);
    let three = beyond_horizon(&store, now(), edge, chrono_tz::UTC, 3).expect("edge");
    assert_eq!(three.len(), 3);
}

/// Repetitions of an escalating reminder are previewed with the keys the
/// engine stores later; once the reminder is dismissed, none is previewed.
#[test]
fn escalation_repetitions_are_previewed_and_an_acknowledged_one_is_not() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut store = Store::open(dir.path().join("k.db")).expect("open");
    let h = Config::default().horizon;
    // Reminded at 09:00 on June 1, then every 12 hours, 6 times: the last
    // three are beyond the horizon (June 3, 08:00).
    let body = "BEGIN:VEVENT\nUID:nag\nSUMMARY:Pay rent\nDTSTART:20260601T100000Z\n\
                BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT1H\n\
                X-KAIROS-ESCALATE:v=1;every=PT12H;max=6\nEND:VALARM\nEND:VEVENT";
    import(&mut store, "work", &cal(body), now(), h, chrono_tz::UTC).expect("import");
    let until = now() + Duration::days(10);
    let preview = beyond_horizon(&store, now(), until, chrono_tz::UTC, 100).expect("preview");
    let suffixes: Vec<&str> = preview
        .iter()
        .map(|p| p.key.rsplit_once('~').map_or("", |(_, s)| s))
        .collect();
    assert_eq!(suffixes, ["again@4", "again@5", "again@6"]);

    let clock = Arc::new(ManualClock::new(now()));
    let mut engine = Engine::new(store, clock.clone(), Vec::new(), Config::default());
    while clock_now(&clock) < until {
        clock.advance(Duration::hours(12));
        engine.materialise().expect("materialise");
    }
    for p in &preview {
        let stored = engine
            .store()
            .get(&p.key)
            .expect("get")
            .expect("stored later");
        assert_eq!(stored.trigger_at, p.trigger, "{}", p.key);
    }

    // A fresh database, dismissed before the repetitions are stored.
    let dir = tempfile::tempdir().expect("tmp");
    let mut store = Store::open(dir.path().join("k.db")).expect("open");
    import(&mut store, "work", &cal(body), now(), h, chrono_tz::UTC).expect("import");
    // (Another database: another calendar uid, so other keys.)
    let base = stored(&store)
        .into_iter()
        .map(|(k, _)| k)
        .find(|k| !k.contains('~'))
        .expect("base stored");
    kairos_engine::actions::dismiss(&mut store, &base, now()).expect("dismiss");
    let quiet = beyond_horizon(&store, now(), until, chrono_tz::UTC, 100).expect("preview");
    assert!(quiet.is_empty(), "{quiet:?}");
}
