//! Two devices of one person that both add the same CalDAV account: the
//! second uses the calendar Kairos sync brought (same uid, same reminder
//! keys), never a second copy whose reminders would ring again.

use kairos_caldav::account;
use kairos_caldav::secret::FileStore;
use kairos_store::{State, Store};

use crate::server::{PASSWORD, USER};
use crate::{Fx, event, t0, when};

/// The pending reminder keys of every calendar of `store`, by calendar name.
fn pending(store: &Store) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for c in store.read(|r| r.calendars()).unwrap() {
        for uid in ["m", "n"] {
            for i in store.read(|r| r.instances_of_event(c.id, uid)).unwrap() {
                if i.state == State::Pending {
                    out.push((c.name.clone(), i.key));
                }
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_second_device_adding_the_same_account_uses_the_calendar_sync_brought() {
    let mut a = Fx::new();
    for (uid, start) in [("m", "20260301T100000Z"), ("n", "20260302T090000Z")] {
        a.rad.put(
            &format!("/alice/work/{uid}.ics"),
            &event(uid, start, "Stand-up", "20260101T000000Z"),
        );
    }
    a.add();
    a.sync(t0());
    let on_a = pending(&a.store);
    assert_eq!(on_a.len(), 2, "{on_a:?}");
    let work_a = a
        .store
        .read(|r| r.calendars())
        .unwrap()
        .into_iter()
        .find(|c| c.name == "Work")
        .unwrap();

    // Device B has the calendar as Kairos sync brings it (A's
    // `calendar.put`: its uid and name) before it adds the account itself.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("b.db");
    let mut b = Store::open(&db).unwrap();
    kairos_engine::import::calendar_with_uid(&mut b, &work_a.uid, "Work", t0()).unwrap();
    // … and, for the first series, the series op too (applied as sync
    // applies one: the same components into the same calendar).
    let m = kairos_engine::series::read_calendar(
        &a.store.read(|r| r.series_events(work_a.id, "m")).unwrap(),
        "Work",
    )
    .unwrap();
    kairos_engine::import::import(
        &mut b,
        "Work",
        &m,
        t0(),
        chrono::Duration::hours(48),
        chrono_tz::UTC,
    )
    .unwrap();
    let secrets = FileStore::beside(&db);
    account::add(
        &mut b,
        &secrets,
        &account::Login {
            url: &a.rad.url(),
            user: USER,
            password: PASSWORD,
            ca_pem: None,
        },
        &[],
        when(t0()),
    )
    .unwrap();
    let reports = account::sync(&mut b, &secrets, None, when(t0())).unwrap();
    assert_eq!(reports.len(), 1);
    // What B already had over Kairos sync is no conflict and no change.
    assert_eq!(reports[0].conflicts, 0, "{:?}", reports[0]);
    assert_eq!(
        reports[0].changed_here, 1,
        "only the series not here yet: {:?}",
        reports[0]
    );

    let names: Vec<String> = b
        .read(|r| r.calendars())
        .unwrap()
        .into_iter()
        .map(|c| c.name)
        .collect();
    assert!(
        !names.iter().any(|n| n.starts_with("Work (")),
        "a second copy of the calendar: {names:?}"
    );
    // The same reminders, under the same keys: a dismissal on one device
    // is the other's too, and nothing rings twice.
    assert_eq!(pending(&b), on_a);
}
