//! The first sync lists by `PROPFIND` and fetches by `calendar-multiget`
//! without asking for a sync token (on Radicale the first token of a
//! collection writes a history entry per object); the second gets the
//! token by an initial `sync-collection` compared by ETag; from then on
//! the token. A change made on the server between the syncs, or during the
//! first one after Kairos fetched the object, is fetched by the next sync.

use chrono::Duration;
use kairos_caldav::dav::MULTIGET_BATCH;
use kairos_store::CaldavCalendar;

use crate::relay::relay_between_multigets;
use crate::{Fx, event, t0};

const STAMP: &str = "20260101T000000Z";

fn token(fx: &Fx, cc: &CaldavCalendar) -> Option<String> {
    let all = fx
        .store
        .read(|r| r.caldav_calendars(cc.account_id))
        .unwrap();
    all.into_iter().find(|c| c.id == cc.id).unwrap().sync_token
}

fn ours(cals: &[CaldavCalendar], path: &str) -> CaldavCalendar {
    let cc = cals.iter().find(|c| c.href == path);
    cc.unwrap_or_else(|| panic!("{path} in {cals:?}")).clone()
}

/// Puts `ics` on the server as object `name`: on Radicale straight into
/// its storage, as an import or a copied folder would (its `PUT` writes the
/// object's sync history itself; this keeps the first sync's own effect in
/// view, and is fast).
fn seed(fx: &Fx, name: &str, ics: &str) {
    if fx.rad.kind == "radicale" {
        std::fs::write(fx.rad.storage("work").join(name), ics).unwrap();
    } else {
        fx.rad.put(&format!("{}{name}", fx.path), ics);
    }
}

fn first_by_propfind_then_server_changes_by_token(mut fx: Fx) {
    let p = fx.path;
    for i in 1..=3 {
        let ics = event(
            &format!("e{i}"),
            "20260301T100000Z",
            &format!("E{i}"),
            STAMP,
        );
        seed(&fx, &format!("e{i}.ics"), &ics);
    }
    let cc = ours(&fx.add(), p);
    let r = fx.sync(t0());
    assert_eq!(
        (r.method, r.requests, r.fetched, r.changed_here),
        ("propfind", 2, 3, 3),
        "one PROPFIND, one multiget: {r:?}"
    );
    assert_eq!(token(&fx, &cc), None, "a first sync asks for no token");
    if fx.rad.kind == "radicale" {
        let history = fx.rad.storage("work").join(".Radicale.cache/history");
        assert!(
            !history.exists(),
            "Radicale wrote sync history for a first sync: {}",
            history.display()
        );
    }

    // Another client, between the first and the second sync.
    fx.rad.put(
        &format!("{p}e1.ics"),
        &event("e1", "20260301T110000Z", "E1 moved", "20260301T080000Z"),
    );
    fx.rad.delete(&format!("{p}e2.ics"));
    fx.rad.put(
        &format!("{p}e4.ics"),
        &event("e4", "20260302T100000Z", "E4 new", STAMP),
    );
    let r = fx.sync(t0() + Duration::minutes(1));
    assert_eq!(
        (
            r.method,
            r.fetched,
            r.changed_here,
            r.deleted_here,
            r.conflicts
        ),
        ("sync-collection", 2, 2, 1, 0),
        "{r:?}"
    );
    assert_eq!(r.requests, 2, "initial sync-collection, one multiget");
    let local = fx.local(fx.name);
    assert!(local["e1"].text.contains("E1 moved"));
    assert!(!local.contains_key("e2"));
    assert!(local["e4"].text.contains("E4 new"));
    assert!(token(&fx, &cc).is_some(), "the second sync keeps a token");

    // From now on the token: quiet is one request; a change, only itself.
    let quiet = fx.sync(t0() + Duration::minutes(2));
    assert_eq!((quiet.requests, quiet.fetched), (1, 0), "{quiet:?}");
    fx.rad.put(
        &format!("{p}e3.ics"),
        &event("e3", "20260301T100000Z", "E3 edited", "20260301T090000Z"),
    );
    let r = fx.sync(t0() + Duration::minutes(3));
    assert_eq!(
        (r.method, r.requests, r.fetched, r.changed_here),
        ("sync-collection", 2, 1, 1),
        "{r:?}"
    );
    assert!(fx.local(fx.name)["e3"].text.contains("E3 edited"));
}

#[test]
fn radicale_first_sync_lists_by_propfind_writes_no_history_and_the_next_picks_up_changes() {
    first_by_propfind_then_server_changes_by_token(Fx::new());
}

#[test]
fn xandikos_first_sync_lists_by_propfind_and_the_next_picks_up_changes() {
    first_by_propfind_then_server_changes_by_token(Fx::xandikos());
}

/// More objects than one multiget takes; just before the second multiget
/// the relay edits the first object the first multiget fetched.
fn edited_during_the_first_sync_is_fetched_by_the_next(mut fx: Fx) {
    let n = MULTIGET_BATCH + 1;
    for i in 0..n {
        let ics = event(
            &format!("e{i}"),
            "20260301T100000Z",
            &format!("E{i}"),
            STAMP,
        );
        seed(&fx, &format!("e{i}.ics"), &ics);
    }
    let relay = relay_between_multigets(fx.rad.port, |href| {
        let uid = href.rsplit('/').next().unwrap().trim_end_matches(".ics");
        event(
            uid,
            "20260301T120000Z",
            "edited during the sync",
            "20260301T075959Z",
        )
    });
    fx.add_at(&relay.url);
    let r = fx.sync(t0());
    let fired = relay.fired.lock().unwrap().clone();
    assert_eq!(fired.len(), 1, "the edit was made: {fired:?}");
    let uid = fired[0]
        .rsplit('/')
        .next()
        .unwrap()
        .trim_end_matches(".ics");
    assert_eq!(
        (r.method, r.fetched, r.changed_here),
        ("propfind", n, n),
        "{r:?}"
    );
    let local = fx.local(fx.name);
    assert!(
        !local[uid].text.contains("edited during"),
        "{uid} was fetched before the edit"
    );

    let r = fx.sync(t0() + Duration::minutes(1));
    assert_eq!(
        (r.fetched, r.changed_here, r.conflicts),
        (1, 1, 0),
        "the edit made during the first sync is fetched, and only it: {r:?}"
    );
    assert!(
        fx.local(fx.name)[uid]
            .text
            .contains("edited during the sync")
    );
    let quiet = fx.sync(t0() + Duration::minutes(2));
    assert_eq!((quiet.requests, quiet.fetched), (1, 0), "{quiet:?}");
}

#[test]
fn radicale_an_object_edited_during_the_first_sync_is_not_lost() {
    edited_during_the_first_sync_is_fetched_by_the_next(Fx::new());
}

#[test]
fn xandikos_an_object_edited_during_the_first_sync_is_not_lost() {
    edited_during_the_first_sync_is_fetched_by_the_next(Fx::xandikos());
}
