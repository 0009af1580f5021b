//! Kairos sync and CalDAV together (issue #19 §2): two devices of alice
//! linked to the same Radicale collection and a third without the link,
//! all paired through a real `kairos-server`. A change on the CalDAV
//! server is written once on each linked device (by its own CalDAV sync:
//! the other's series op for that calendar is left to it), reaches the
//! unlinked device over Kairos sync, and the reminder keys agree; an edit
//! made on the unlinked device reaches the server and each linked device
//! once, with no conflict.

use chrono::Duration;

use crate::kx::{Dev, Kx};
use crate::server::DavServer;
use crate::{event, t0};

pub(crate) const UID: &str = "standup-4711";
pub(crate) const PATH: &str = "/alice/work/standup-4711.ics";

/// Radicale with "Work" holding the stand-up at 10:00 (reminder 09:45),
/// the sync server, A and B both paired and linked (A first), C paired
/// only. Everyone has exchanged everything.
pub(crate) fn three_devices() -> (DavServer, Kx, Dev, Dev, Dev) {
    let rad = DavServer::radicale();
    rad.mkcalendar("work", "Work", "#3366ccff", &["VEVENT", "VTODO"]);
    rad.put(
        PATH,
        &event(UID, "20260301T100000Z", "Stand-up", "20260101T000000Z"),
    );
    let kx = Kx::start();
    let mut a = Dev::joined(&kx, &kx.invite(), "laptop");
    a.link(&rad.url());
    assert_eq!(a.caldav().changed_here, 1);
    a.exchange();

    let mut b = Dev::joined(&kx, &a.pair(), "desktop");
    b.link(&rad.url());
    let first = b.caldav();
    assert_eq!(
        (first.changed_here, first.conflicts, first.written_there),
        (0, 0, 0),
        "B already had what A fetched: {first:?}"
    );
    b.exchange();

    let c = Dev::joined(&kx, &a.pair(), "phone");
    a.exchange();
    for d in [&a, &b, &c] {
        assert_eq!(d.pending(UID).len(), 1);
        assert_eq!(d.writes(UID), 0, "written once, when first stored");
    }
    (rad, kx, a, b, c)
}

pub(crate) fn at(devices: &[&Dev], minutes: i64) {
    for d in devices {
        d.set_now(t0() + Duration::minutes(minutes));
    }
}

/// The same pending reminders, under the same keys, on every device.
pub(crate) fn agree(a: &Dev, b: &Dev, c: &Dev) -> Vec<(String, chrono::DateTime<chrono::Utc>)> {
    let on_a = a.pending(UID);
    assert_eq!(b.pending(UID), on_a, "B and A differ");
    assert_eq!(c.pending(UID), on_a, "C and A differ");
    on_a
}

#[test]
fn a_server_change_is_written_once_on_each_linked_device_and_reaches_the_unlinked_one() {
    let (rad, _kx, mut a, mut b, mut c) = three_devices();
    let before = a.pending(UID);

    // Another client moves the stand-up to 10:30.
    at(&[&a, &b, &c], 1);
    rad.put(
        PATH,
        &event(UID, "20260301T103000Z", "Stand-up", "20260301T080100Z"),
    );
    // A's CalDAV sync fetches it, and A tells the account.
    let ra = a.caldav();
    assert_eq!((ra.changed_here, ra.written_there), (1, 0), "{ra:?}");
    a.exchange();
    // B hears A's op first: its content is left to B's own CalDAV sync.
    at(&[&a, &b, &c], 2);
    b.exchange();
    assert_eq!(b.pending(UID), before, "B took the series from Kairos sync");
    assert_eq!(b.writes(UID), 0);
    let rb = b.caldav();
    assert_eq!(
        (rb.changed_here, rb.written_there, rb.conflicts),
        (1, 0, 0),
        "B's CalDAV sync brings the change, and writes nothing back: {rb:?}"
    );
    b.exchange();
    // A hears B's op; A's next CalDAV sync has nothing to do.
    a.exchange();
    let ra = a.caldav();
    assert_eq!((ra.changed_here, ra.written_there), (0, 0), "{ra:?}");
    c.exchange();

    for (name, d) in [("A", &a), ("B", &b), ("C", &c)] {
        assert_eq!(d.writes(UID), 1, "{name}: writes of the series");
        assert!(d.conflicts().is_empty(), "{name}: {:?}", d.conflicts());
    }
    let now = agree(&a, &b, &c);
    assert_eq!(now.len(), 1);
    assert_eq!(
        now[0].1,
        t0() + Duration::minutes(135),
        "the reminder moved to 10:15"
    );

    // The other order: B's CalDAV sync sees the next change before A's op
    // about it arrives.
    at(&[&a, &b, &c], 3);
    rad.put(
        PATH,
        &event(UID, "20260301T110000Z", "Stand-up", "20260301T080300Z"),
    );
    assert_eq!(a.caldav().changed_here, 1);
    a.exchange();
    assert_eq!(b.caldav().changed_here, 1);
    b.exchange();
    a.exchange();
    c.exchange();
    assert_eq!(a.caldav().changed_here, 0);
    assert_eq!(b.caldav().changed_here, 0);
    for (name, d) in [("A", &a), ("B", &b), ("C", &c)] {
        assert_eq!(d.writes(UID), 2, "{name}: writes of the series");
        assert!(d.conflicts().is_empty(), "{name}: {:?}", d.conflicts());
    }
    assert_eq!(agree(&a, &b, &c)[0].1, t0() + Duration::minutes(165));
}

#[test]
fn an_edit_on_the_unlinked_device_reaches_the_server_and_each_linked_device_once() {
    let (rad, _kx, mut a, mut b, mut c) = three_devices();
    at(&[&a, &b, &c], 1);
    // C (no CalDAV link) moves the stand-up to 09:30.
    c.edit(
        UID,
        &event(UID, "20260301T093000Z", "Stand-up", "20260301T080100Z"),
    );
    c.exchange();
    // Both linked devices apply it and would write it back; one does, the
    // other finds the server already holds it.
    a.exchange();
    b.exchange();
    let ra = a.caldav();
    assert_eq!((ra.written_there, ra.conflicts), (1, 0), "{ra:?}");
    let rb = b.caldav();
    assert_eq!(
        (rb.written_there, rb.changed_here, rb.conflicts),
        (0, 0, 0),
        "{rb:?}"
    );
    a.exchange();
    b.exchange();
    c.exchange();
    assert_eq!(a.caldav().written_there, 0);
    assert_eq!(b.caldav().written_there, 0);

    let there = rad.get(PATH).body;
    assert!(there.contains("DTSTART:20260301T093000Z"), "{there}");
    for (name, d) in [("A", &a), ("B", &b), ("C", &c)] {
        assert_eq!(d.writes(UID), 1, "{name}: writes of the series");
        assert!(d.conflicts().is_empty(), "{name}: {:?}", d.conflicts());
    }
    assert_eq!(agree(&a, &b, &c)[0].1, t0() + Duration::minutes(75));
}

#[test]
fn an_edit_on_a_linked_device_and_a_deletion_on_the_server_reach_every_device_once() {
    let (rad, _kx, mut a, mut b, mut c) = three_devices();
    // A (linked) moves the stand-up to 09:00 in Kairos: its CalDAV sync
    // writes it to the server; B and C take it from Kairos sync (an edit
    // made in Kairos is not marked), B finds the server holds it.
    at(&[&a, &b, &c], 1);
    a.edit(
        UID,
        &event(UID, "20260301T090000Z", "Stand-up", "20260301T080100Z"),
    );
    assert_eq!(a.caldav().written_there, 1);
    a.exchange();
    b.exchange();
    c.exchange();
    let rb = b.caldav();
    assert_eq!(
        (rb.changed_here, rb.written_there, rb.conflicts),
        (0, 0, 0),
        "B applied A's edit from Kairos sync and found it on the server: {rb:?}"
    );
    b.exchange();
    a.exchange();
    c.exchange();
    let ra = a.caldav();
    assert_eq!((ra.changed_here, ra.written_there), (0, 0), "{ra:?}");
    for (name, d) in [("A", &a), ("B", &b), ("C", &c)] {
        assert_eq!(d.writes(UID), 1, "{name}: writes of the series");
        assert!(d.conflicts().is_empty(), "{name}: {:?}", d.conflicts());
    }
    assert_eq!(agree(&a, &b, &c)[0].1, t0() + Duration::minutes(45));

    // Deleted on the server: gone everywhere, deleted once on each device.
    at(&[&a, &b, &c], 2);
    rad.delete(PATH);
    assert_eq!(a.caldav().deleted_here, 1);
    a.exchange();
    b.exchange();
    let rb = b.caldav();
    assert_eq!(
        (rb.deleted_there, rb.written_there, rb.conflicts),
        (0, 0, 0)
    );
    b.exchange();
    a.exchange();
    c.exchange();
    for (name, d) in [("A", &a), ("B", &b), ("C", &c)] {
        assert!(d.pending(UID).is_empty(), "{name}: {:?}", d.pending(UID));
        assert_eq!(d.writes(UID), 2, "{name}: writes of the series");
        assert!(d.conflicts().is_empty(), "{name}: {:?}", d.conflicts());
    }
    assert_eq!(rad.get(PATH).status, 404);
}
