//! Discovery and sync both ways against Radicale.

use chrono::Duration;
use kairos_caldav::discover::discover;

use crate::server::{PASSWORD, USER};
use crate::{Fx, delete_here, edit_here, event, log, t0, todo};

const W: &str = "/alice/work/";

#[test]
fn discovery_lists_calendars_with_names_colours_and_components() {
    let fx = Fx::new();
    fx.rad
        .mkcalendar("chores", "Chores", "#00aa00ff", &["VTODO"]);
    let (_, d) = discover(&fx.rad.url(), USER, PASSWORD, None).unwrap();
    assert!(d.principal.ends_with("/alice/"), "{}", d.principal);
    assert!(d.home.ends_with("/alice/"), "{}", d.home);
    let mut cals = d.calendars;
    cals.sort_by(|a, b| a.name.cmp(&b.name));
    assert_eq!(cals.len(), 2, "{cals:?}");
    assert_eq!(cals[0].name, "Chores");
    assert_eq!(cals[0].href, "/alice/chores/");
    assert_eq!(cals[0].color.as_deref(), Some("#00aa00ff"));
    assert_eq!(cals[0].components, ["VTODO"]);
    assert_eq!(cals[1].name, "Work");
    let mut comps = cals[1].components.clone();
    comps.sort();
    assert_eq!(comps, ["VEVENT", "VTODO"]);
    // The principal's own URL works as a starting point too.
    let (_, d2) = discover(&format!("{}alice/", fx.rad.url()), USER, PASSWORD, None).unwrap();
    assert_eq!(d2.home, d.home);
}

#[test]
fn first_sync_of_500_events_and_tasks_then_a_no_change_resync_is_one_report() {
    let mut fx = Fx::new();
    for i in 0..250 {
        let day = 2 + i % 27;
        fx.rad.put(
            &format!("{W}e{i}.ics"),
            &event(
                &format!("e{i}"),
                &format!("202603{day:02}T100000Z"),
                &format!("Event {i}"),
                "20260101T000000Z",
            ),
        );
        fx.rad.put(
            &format!("{W}t{i}.ics"),
            &todo(
                &format!("t{i}"),
                &format!("202603{day:02}T170000Z"),
                &format!("Task {i}"),
            ),
        );
    }
    let cals = fx.add();
    assert_eq!(cals.len(), 1);
    assert!(cals[0].calendar_id.is_some(), "chosen by default");
    let r = fx.sync(t0());
    assert_eq!(r.method, "propfind", "a first sync lists by PROPFIND");
    assert_eq!(
        (r.fetched, r.changed_here, r.written_there),
        (500, 500, 0),
        "{r:?}"
    );
    let local = fx.local("Work");
    assert_eq!(local.len(), 500);
    assert!(local["t7"].text.contains("BEGIN:VTODO"));
    assert!(local["e7"].text.contains("SUMMARY:Event 7"));
    let again = fx.sync(t0() + Duration::minutes(1));
    assert_eq!(
        (
            again.requests,
            again.fetched,
            again.changed_here,
            again.written_there,
            again.deleted_here
        ),
        (1, 0, 0, 0, 0),
        "a quiet re-sync is one sync-collection REPORT: {again:?}"
    );
}

#[test]
fn a_server_edit_reaches_kairos_and_moves_its_reminder() {
    let mut fx = Fx::new();
    fx.rad.put(
        &format!("{W}e1.ics"),
        &event("e1", "20260301T100000Z", "Stand-up", "20260101T000000Z"),
    );
    fx.add();
    fx.sync(t0());
    let at = |h, m| chrono::TimeZone::with_ymd_and_hms(&chrono::Utc, 2026, 3, 1, h, m, 0).unwrap();
    assert_eq!(fx.pending("e1"), [at(9, 45)]);
    // Another client moves it by an hour with a plain PUT.
    fx.rad.put(
        &format!("{W}e1.ics"),
        &event(
            "e1",
            "20260301T110000Z",
            "Stand-up moved",
            "20260301T080000Z",
        ),
    );
    let r = fx.sync(t0() + Duration::minutes(1));
    assert_eq!((r.fetched, r.changed_here, r.conflicts), (1, 1, 0), "{r:?}");
    assert_eq!(fx.pending("e1"), [at(10, 45)]);
    assert!(fx.local("Work")["e1"].text.contains("Stand-up moved"));
}

#[test]
fn edits_and_new_series_made_in_kairos_reach_the_server() {
    let mut fx = Fx::new();
    fx.rad.put(
        &format!("{W}e1.ics"),
        &event("e1", "20260301T100000Z", "Plan", "20260101T000000Z"),
    );
    fx.add();
    fx.sync(t0());
    let before = fx.rad.get(&format!("{W}e1.ics"));
    edit_here(
        &mut fx,
        &event(
            "e1",
            "20260301T100000Z",
            "Plan edited here",
            "20260101T000000Z",
        ),
        t0() + Duration::minutes(1),
    );
    edit_here(
        &mut fx,
        &todo("n1", "20260302T170000Z", "New task here"),
        t0() + Duration::minutes(1),
    );
    let r = fx.sync(t0() + Duration::minutes(2));
    assert_eq!((r.written_there, r.conflicts), (2, 0), "{r:?}");
    let after = fx.rad.get(&format!("{W}e1.ics"));
    assert!(after.body.contains("Plan edited here"), "{}", after.body);
    assert_ne!(before.header("etag"), after.header("etag"));
    let created = fx.rad.get(&format!("{W}n1.ics"));
    assert_eq!(created.status, 200);
    assert!(created.body.contains("BEGIN:VTODO") && created.body.contains("New task here"));
    // Our own writes come back from sync-collection with the ETags we
    // recorded: nothing is fetched or changed.
    let again = fx.sync(t0() + Duration::minutes(3));
    assert_eq!(
        (again.fetched, again.changed_here, again.written_there),
        (0, 0, 0),
        "{again:?}"
    );
}

#[test]
fn conflicting_edits_keep_the_later_version_and_log_the_loser_in_full() {
    let mut fx = Fx::new();
    fx.rad.put(
        &format!("{W}a.ics"),
        &event("a", "20260301T100000Z", "A", "20260101T000000Z"),
    );
    fx.rad.put(
        &format!("{W}b.ics"),
        &event("b", "20260301T120000Z", "B", "20260101T000000Z"),
    );
    fx.add();
    fx.sync(t0());
    // Kairos edits both at 08:01.
    let here = t0() + Duration::minutes(1);
    edit_here(
        &mut fx,
        &event("a", "20260301T100000Z", "A edited here", "20260101T000000Z"),
        here,
    );
    edit_here(
        &mut fx,
        &event("b", "20260301T120000Z", "B edited here", "20260101T000000Z"),
        here,
    );
    // The server's copy of `a` was changed at 09:00 (later), of `b` at 07:00 (earlier).
    fx.rad.put(
        &format!("{W}a.ics"),
        &event(
            "a",
            "20260301T100000Z",
            "A edited there",
            "20260301T090000Z",
        ),
    );
    fx.rad.put(
        &format!("{W}b.ics"),
        &event(
            "b",
            "20260301T120000Z",
            "B edited there",
            "20260301T070000Z",
        ),
    );
    let r = fx.sync(t0() + Duration::minutes(2));
    assert_eq!(r.conflicts, 2, "{r:?}");
    let local = fx.local("Work");
    assert!(local["a"].text.contains("A edited there"));
    assert!(local["b"].text.contains("B edited here"));
    assert!(
        fx.rad
            .get(&format!("{W}b.ics"))
            .body
            .contains("B edited here")
    );
    assert!(
        fx.rad
            .get(&format!("{W}a.ics"))
            .body
            .contains("A edited there")
    );
    let log = log(&fx);
    assert!(
        log.contains("caldav/Work/a edit here lost to the server's"),
        "{log}"
    );
    assert!(
        log.contains("SUMMARY:A edited here"),
        "the losing version is kept: {log}"
    );
    assert!(
        log.contains("caldav/Work/b the server's edit lost to the edit here"),
        "{log}"
    );
    assert!(log.contains("SUMMARY:B edited there"), "{log}");
    // Settled: the next sync has nothing to do.
    let again = fx.sync(t0() + Duration::minutes(3));
    assert_eq!(
        (again.conflicts, again.written_there, again.changed_here),
        (0, 0, 0),
        "{again:?}"
    );
}

#[test]
fn deletions_travel_both_ways_and_an_edit_beats_a_deletion() {
    let mut fx = Fx::new();
    for uid in ["d1", "d2", "d3"] {
        fx.rad.put(
            &format!("{W}{uid}.ics"),
            &event(uid, "20260301T100000Z", uid, "20260101T000000Z"),
        );
    }
    fx.add();
    fx.sync(t0());
    fx.rad.delete(&format!("{W}d1.ics"));
    delete_here(&mut fx, "d2", t0() + Duration::minutes(1));
    // d3: deleted on the server, edited here: the edit is kept.
    fx.rad.delete(&format!("{W}d3.ics"));
    edit_here(
        &mut fx,
        &event("d3", "20260301T100000Z", "d3 kept", "20260101T000000Z"),
        t0() + Duration::minutes(1),
    );
    let r = fx.sync(t0() + Duration::minutes(2));
    assert_eq!(
        (r.deleted_here, r.deleted_there, r.conflicts),
        (1, 1, 1),
        "{r:?}"
    );
    let local = fx.local("Work");
    assert!(!local.contains_key("d1"));
    assert!(fx.pending("d1").is_empty(), "its reminder went with it");
    assert_eq!(fx.rad.get(&format!("{W}d2.ics")).status, 404);
    assert!(local["d3"].text.contains("d3 kept"));
    assert!(fx.rad.get(&format!("{W}d3.ics")).body.contains("d3 kept"));
    let again = fx.sync(t0() + Duration::minutes(3));
    assert_eq!(
        (again.deleted_here, again.deleted_there, again.written_there),
        (0, 0, 0),
        "{again:?}"
    );
}

#[test]
fn a_sync_token_the_server_no_longer_knows_starts_afresh_without_losing_changes() {
    let mut fx = Fx::new();
    fx.rad.put(
        &format!("{W}e1.ics"),
        &event("e1", "20260301T100000Z", "One", "20260101T000000Z"),
    );
    fx.rad.put(
        &format!("{W}e2.ics"),
        &event("e2", "20260301T110000Z", "Two", "20260101T000000Z"),
    );
    let cals = fx.add();
    fx.sync(t0());
    // The server forgot our token (a reset, a restored backup).
    let id = cals[0].id;
    fx.store
        .write(|tx| tx.caldav_calendar_synced(id, Some("http://radicale.org/ns/sync/bogus"), t0()))
        .unwrap();
    fx.rad.put(
        &format!("{W}e1.ics"),
        &event("e1", "20260301T100000Z", "One changed", "20260301T080000Z"),
    );
    fx.rad.delete(&format!("{W}e2.ics"));
    let r = fx.sync(t0() + Duration::minutes(1));
    assert_eq!(
        (r.fetched, r.changed_here, r.deleted_here),
        (1, 1, 1),
        "{r:?}"
    );
    let local = fx.local("Work");
    assert!(local["e1"].text.contains("One changed"));
    assert!(!local.contains_key("e2"));
    // Radicale says `valid-sync-token` (RFC 6578 §3.2): a full listing follows.
    assert_eq!(r.method, "sync-collection");
    let again = fx.sync(t0() + Duration::minutes(2));
    assert_eq!((again.requests, again.fetched), (1, 0), "{again:?}");
}
