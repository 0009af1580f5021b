//! Gaps left by earlier versions (issue #19): a device that joins a Kairos
//! sync account with an edit to a linked calendar its CalDAV sync never
//! wrote, and the fallback's marks left behind by `caldav remove`. Real
//! Radicale, real `kairos-server`, devices on SQLite files.

use chrono::Duration;

use crate::event;
use crate::kx::{Dev, Kx};
use crate::linked::{PATH, UID, at, three_devices};
use crate::server::{DavServer, PASSWORD};
use crate::t0;

#[test]
fn an_edit_not_yet_on_the_server_of_a_device_joining_kairos_sync_reaches_the_linked_devices() {
    let rad = DavServer::radicale();
    rad.mkcalendar("work", "Work", "#3366ccff", &["VEVENT", "VTODO"]);
    rad.put(
        PATH,
        &event(UID, "20260301T100000Z", "Stand-up", "20260101T000000Z"),
    );
    let kx = Kx::start();
    // B is in the Kairos sync account and linked.
    let mut b = Dev::joined(&kx, &kx.invite(), "desktop");
    b.link(&rad.url());
    assert_eq!(b.caldav().changed_here, 1);
    b.exchange();
    // A links the account on its own, then moves the stand-up to 09:00 in
    // Kairos; its CalDAV writes are refused from then on (a changed
    // password), so the edit never reaches the server from A.
    let mut a = Dev::new();
    a.link(&rad.url());
    assert_eq!(a.caldav().changed_here, 1);
    at(&[&a, &b], 1);
    a.edit(
        UID,
        &event(UID, "20260301T090000Z", "Stand-up", "20260301T080100Z"),
    );
    a.set_password("not-the-password");
    assert!(a.try_caldav().is_err());
    // A joins the account: its edit travels as an edit, not as a copy of
    // the server's that B would leave to its own CalDAV sync.
    at(&[&a, &b], 2);
    let code = b.pair();
    a.join(&kx, &code, "laptop");
    a.exchange();
    b.exchange();
    let moved = t0() + Duration::minutes(45);
    assert_eq!(
        b.pending(UID).iter().map(|p| p.1).collect::<Vec<_>>(),
        vec![moved],
        "B applied A's edit from Kairos sync"
    );
    assert_eq!(b.pending(UID), a.pending(UID), "the same keys on A and B");
    // B writes it to the server, once, with no conflict.
    let rb = b.caldav();
    assert_eq!((rb.written_there, rb.conflicts), (1, 0), "{rb:?}");
    let there = rad.get(PATH).body;
    assert!(there.contains("DTSTART:20260301T090000Z"), "{there}");
    // (Kairos sync logs B's older registers as lost to A's join: that is
    // last-writer-wins doing its job; no CalDAV conflict.)
    let caldav: Vec<_> = b
        .conflicts()
        .into_iter()
        .filter(|c| c.starts_with("caldav/"))
        .collect();
    assert!(caldav.is_empty(), "{caldav:?}");
    // A's CalDAV works again: the server holds its edit, nothing to do.
    a.set_password(PASSWORD);
    b.exchange();
    a.exchange();
    let ra = a.caldav();
    assert_eq!((ra.written_there, ra.conflicts), (0, 0), "{ra:?}");
    assert_eq!(a.pending(UID), b.pending(UID));
}

#[test]
fn removing_an_account_forgets_its_calendars_failing_and_taken_marks() {
    let (rad, _kx, mut a, mut b, c) = three_devices();
    // B's CalDAV sync fails, and B takes a server change from Kairos sync.
    b.set_password("not-the-password");
    assert!(b.try_caldav().is_err());
    at(&[&a, &b, &c], 1);
    rad.put(
        PATH,
        &event(UID, "20260301T103000Z", "Stand-up", "20260301T080100Z"),
    );
    assert_eq!(a.caldav().changed_here, 1);
    a.exchange();
    b.exchange();
    let uid = b.work().uid;
    let keys = [
        format!("caldav.failing.{uid}"),
        format!("caldav.taken.{uid}"),
    ];
    for k in &keys {
        assert!(b.store.meta_get(k).unwrap().is_some(), "{k} is set");
    }
    b.remove();
    for k in &keys {
        assert_eq!(b.store.meta_get(k).unwrap(), None, "{k} is gone");
    }
    assert_eq!(b.work().uid, uid, "the calendar stays");
}
