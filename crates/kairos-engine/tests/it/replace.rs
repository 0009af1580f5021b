//! `Mode::Replace` (`kairos import --replace`, every subscription refresh):
//! what the file no longer has goes, what it still has is left alone.

use crate::support::{cal, now};
use chrono::{DateTime, Duration, Utc};
use kairos_engine::import::{Mode, import_with};
use kairos_store::Store;

const SERIES: &str = "BEGIN:VEVENT\nUID:m\nSUMMARY:Meeting\nDTSTART:20260601T100000Z\nRRULE:FREQ=DAILY;COUNT=3\n\
                      BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT15M\nEND:VALARM\nEND:VEVENT";
/// The second occurrence moved two hours later.
const OVERRIDE: &str = "BEGIN:VEVENT\nUID:m\nSUMMARY:Meeting\nRECURRENCE-ID:20260602T100000Z\n\
                        DTSTART:20260602T120000Z\n\
                        BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT15M\nEND:VALARM\nEND:VEVENT";
const OTHER: &str = "BEGIN:VEVENT\nUID:o\nSUMMARY:Other\nDTSTART:20260601T150000Z\n\
                     BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT15M\nEND:VALARM\nEND:VEVENT";

fn triggers(store: &Store) -> Vec<(String, DateTime<Utc>)> {
    let mut v: Vec<_> = store
        .due(DateTime::<Utc>::MAX_UTC, 100)
        .expect("due")
        .into_iter()
        .map(|i| (i.event_uid, i.trigger_at))
        .collect();
    v.sort();
    v
}

#[test]
fn an_override_that_left_the_file_puts_its_occurrence_back_and_merge_never_deletes() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut store = Store::open(dir.path().join("k.db")).expect("open");
    let h = Duration::hours(72);
    let put = |store: &mut Store, body: &str, mode| {
        import_with(store, "w", &cal(body), mode, now(), h, chrono_tz::UTC).expect("import")
    };
    put(
        &mut store,
        &format!("{SERIES}\n{OVERRIDE}\n{OTHER}"),
        Mode::Merge,
    );
    let moved = now() + Duration::hours(27) + Duration::minutes(45);
    assert!(triggers(&store).contains(&("m".into(), moved)));

    // Merge: a file without the override and without OTHER deletes nothing.
    let r = put(&mut store, SERIES, Mode::Merge);
    assert_eq!((r.changed, r.deleted), (0, 0));
    assert_eq!(
        store
            .events_of(store.calendars().expect("c")[0].id)
            .expect("e")
            .len(),
        3
    );

    // Replace: the override goes (the occurrence is back at 10:00), OTHER
    // is deleted, the rest of the series keeps its reminders.
    let r = put(&mut store, SERIES, Mode::Replace);
    assert_eq!(r.deleted, 1, "{r:?}");
    let t = triggers(&store);
    assert!(!t.iter().any(|(u, _)| u == "o"), "{t:?}");
    assert!(!t.contains(&("m".into(), moved)), "{t:?}");
    let back = now() + Duration::hours(25) + Duration::minutes(45);
    assert!(t.contains(&("m".into(), back)), "{t:?}");
    assert_eq!(t.len(), 3);
    let cal_id = store.calendars().expect("c")[0].id;
    assert_eq!(store.events_of(cal_id).expect("e").len(), 1);

    // The same file again changes nothing.
    let r = put(&mut store, SERIES, Mode::Replace);
    assert_eq!((r.changed, r.deleted, r.dropped, r.scheduled), (0, 0, 0, 0));
}

/// An edit of a series whose reminder is snoozed (the app's editor, a
/// CalDAV server's copy, Kairos sync) used to drop the pending snooze: the
/// reminder, `snoozed`, then never rang again.
#[test]
fn an_edit_of_a_snoozed_series_keeps_the_snooze() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut store = Store::open(dir.path().join("k.db")).expect("open");
    let h = Duration::hours(72);
    let put = |store: &mut Store, body: &str| {
        import_with(
            store,
            "w",
            &cal(body),
            Mode::Merge,
            now(),
            h,
            chrono_tz::UTC,
        )
        .expect("import")
    };
    put(&mut store, OTHER);
    let key = store.due(DateTime::<Utc>::MAX_UTC, 10).expect("due")[0]
        .key
        .clone();
    let (snoozed, until) =
        kairos_engine::actions::snooze(&mut store, &key, Duration::minutes(10), now())
            .expect("snooze");
    put(
        &mut store,
        &OTHER.replace("SUMMARY:Other", "SUMMARY:Other, renamed"),
    );
    let s = store
        .get(&snoozed)
        .expect("get")
        .expect("the snooze is kept");
    assert_eq!(
        (s.state, s.trigger_at),
        (kairos_store::State::Pending, until)
    );
    assert_eq!(
        store.get(&key).expect("get").map(|i| i.state),
        Some(kairos_store::State::Snoozed)
    );
    // A deleted series takes its snooze with it.
    kairos_engine::import::replace_series(&mut store, "w", "o", &[], now(), h, chrono_tz::UTC)
        .expect("delete");
    assert_eq!(
        store.get(&snoozed).expect("get"),
        None,
        "no snooze of a deleted event"
    );
}
