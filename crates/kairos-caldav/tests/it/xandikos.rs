//! The same sync against a second server, Xandikos, to catch quirks: its
//! own ETags and sync tokens, hrefs and principal layout.

use chrono::Duration;

use crate::{Fx, delete_here, edit_here, event, t0, todo};

#[test]
fn xandikos_first_sync_edits_both_ways_deletions_and_a_quiet_resync() {
    let mut fx = Fx::xandikos();
    let p = fx.path;
    fx.rad.put(
        &format!("{p}e1.ics"),
        &event("e1", "20260301T100000Z", "One", "20260101T000000Z"),
    );
    fx.rad.put(
        &format!("{p}e2.ics"),
        &event("e2", "20260301T120000Z", "Two", "20260101T000000Z"),
    );
    fx.rad.put(
        &format!("{p}t1.ics"),
        &todo("t1", "20260301T170000Z", "Task"),
    );
    let cals = fx.add();
    assert!(
        cals.iter().any(|c| c.href == p && c.calendar_id.is_some()),
        "{cals:?}"
    );
    let r = fx.sync(t0());
    assert_eq!((r.method, r.changed_here), ("sync-collection", 3), "{r:?}");
    let at = |h, m| chrono::TimeZone::with_ymd_and_hms(&chrono::Utc, 2026, 3, 1, h, m, 0).unwrap();
    assert_eq!(fx.pending("e1"), [at(9, 45)]);

    fx.rad.put(
        &format!("{p}e1.ics"),
        &event("e1", "20260301T110000Z", "One moved", "20260301T080000Z"),
    );
    fx.rad.delete(&format!("{p}e2.ics"));
    let later = t0() + Duration::minutes(1);
    edit_here(
        &mut fx,
        &todo("t1", "20260301T180000Z", "Task edited here"),
        later,
    );
    edit_here(
        &mut fx,
        &event("n1", "20260301T150000Z", "New here", "20260101T000000Z"),
        later,
    );
    let r = fx.sync(t0() + Duration::minutes(2));
    assert_eq!(
        (r.changed_here, r.deleted_here, r.written_there, r.conflicts),
        (1, 1, 2, 0),
        "{r:?}"
    );
    assert_eq!(fx.pending("e1"), [at(10, 45)]);
    assert!(
        fx.rad
            .get(&format!("{p}t1.ics"))
            .body
            .contains("Task edited here")
    );
    assert!(fx.rad.get(&format!("{p}n1.ics")).body.contains("New here"));

    delete_here(&mut fx, "n1", t0() + Duration::minutes(3));
    let r = fx.sync(t0() + Duration::minutes(4));
    assert_eq!(r.deleted_there, 1, "{r:?}");
    assert_eq!(fx.rad.get(&format!("{p}n1.ics")).status, 404);
    let quiet = fx.sync(t0() + Duration::minutes(5));
    assert_eq!(
        (
            quiet.fetched,
            quiet.changed_here,
            quiet.written_there,
            quiet.deleted_there
        ),
        (0, 0, 0, 0),
        "{quiet:?}"
    );
}
