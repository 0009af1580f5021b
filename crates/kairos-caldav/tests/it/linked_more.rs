//! Kairos sync and CalDAV together, the cases where a linked device's
//! CalDAV sync does not do its part (issue #19, "nothing applied twice,
//! nothing lost"): an edit made on a linked device that never reaches the
//! server, and a linked device whose CalDAV sync keeps failing. Same set-up
//! as `linked.rs`: real Radicale, real `kairos-server`, A and B linked, C
//! not.

use chrono::Duration;

use crate::event;
use crate::linked::{PATH, UID, agree, at, three_devices};
use crate::server::PASSWORD;
use crate::t0;

#[test]
fn an_edit_on_a_linked_device_that_never_reaches_the_server_reaches_every_device() {
    let (rad, _kx, mut a, mut b, mut c) = three_devices();
    at(&[&a, &b, &c], 1);
    // A (linked) moves the stand-up to 09:00 in Kairos, tells the account,
    // and closes before its next CalDAV sync.
    a.edit(
        UID,
        &event(UID, "20260301T090000Z", "Stand-up", "20260301T080100Z"),
    );
    a.exchange();
    b.exchange();
    c.exchange();
    assert_eq!(b.pending(UID), a.pending(UID), "B applied A's edit");
    assert_eq!(c.pending(UID), a.pending(UID), "C applied A's edit");
    // B (linked too) writes it to the server.
    let rb = b.caldav();
    assert_eq!((rb.written_there, rb.conflicts), (1, 0), "{rb:?}");
    let there = rad.get(PATH).body;
    assert!(there.contains("DTSTART:20260301T090000Z"), "{there}");
    b.exchange();
    a.exchange();
    c.exchange();
    // A comes back: the server already holds its edit.
    at(&[&a, &b, &c], 2);
    let ra = a.caldav();
    assert_eq!(
        (ra.written_there, ra.changed_here, ra.conflicts),
        (0, 0, 0),
        "{ra:?}"
    );
    for (name, d) in [("A", &a), ("B", &b), ("C", &c)] {
        assert_eq!(d.writes(UID), 1, "{name}: writes of the series");
        assert!(d.conflicts().is_empty(), "{name}: {:?}", d.conflicts());
    }
    assert_eq!(agree(&a, &b, &c)[0].1, t0() + Duration::minutes(45));
}

#[test]
fn a_linked_device_whose_caldav_sync_fails_takes_changes_from_kairos_sync_once() {
    let (rad, _kx, mut a, mut b, mut c) = three_devices();
    // B's password is wrong now: its CalDAV sync fails.
    b.set_password("not-the-password");
    assert!(b.try_caldav().is_err());

    // Another client moves the stand-up to 10:30; A fetches it.
    at(&[&a, &b, &c], 1);
    rad.put(
        PATH,
        &event(UID, "20260301T103000Z", "Stand-up", "20260301T080100Z"),
    );
    assert_eq!(a.caldav().changed_here, 1);
    a.exchange();
    // B cannot fetch it itself: it takes it from Kairos sync.
    at(&[&a, &b, &c], 2);
    b.exchange();
    assert_eq!(b.pending(UID), a.pending(UID), "B took A's copy");
    assert!(b.try_caldav().is_err());
    // B's CalDAV works again: the server holds what B has; nothing is
    // written on either side.
    b.set_password(PASSWORD);
    let rb = b.caldav();
    assert_eq!(
        (rb.changed_here, rb.written_there, rb.conflicts),
        (0, 0, 0),
        "{rb:?}"
    );
    assert_eq!(b.writes(UID), 1);

    // Again, and this time the server moves on before B recovers: another
    // client (its clock behind: LAST-MODIFIED before B applied A's copy)
    // edits while A is off. B's recovering sync takes the server's copy;
    // the one Kairos sync brought is not an edit made on B.
    b.set_password("not-the-password");
    assert!(b.try_caldav().is_err());
    at(&[&a, &b, &c], 3);
    rad.put(
        PATH,
        &event(UID, "20260301T110000Z", "Stand-up", "20260301T080300Z"),
    );
    assert_eq!(a.caldav().changed_here, 1);
    a.exchange();
    at(&[&a, &b, &c], 4);
    b.exchange();
    assert_eq!(b.pending(UID), a.pending(UID), "B took A's copy");
    rad.put(
        PATH,
        &event(UID, "20260301T113000Z", "Stand-up", "20260301T080330Z"),
    );
    at(&[&a, &b, &c], 5);
    b.set_password(PASSWORD);
    let rb = b.caldav();
    assert_eq!(
        (rb.changed_here, rb.written_there, rb.conflicts),
        (1, 0, 0),
        "{rb:?}"
    );
    let there = rad.get(PATH).body;
    assert!(there.contains("DTSTART:20260301T113000Z"), "{there}");
    b.exchange();
    a.exchange();
    c.exchange();
    assert_eq!(a.caldav().changed_here, 1);
    a.exchange();
    c.exchange();
    for (name, d) in [("A", &a), ("B", &b), ("C", &c)] {
        assert!(d.conflicts().is_empty(), "{name}: {:?}", d.conflicts());
    }
    assert_eq!(agree(&a, &b, &c)[0].1, t0() + Duration::minutes(195));
}

#[test]
fn a_late_deletion_from_a_skewed_clock_does_not_delete_what_the_server_holds_again() {
    let (rad, _kx, mut a, mut b, mut c) = three_devices();
    // A's clock runs an hour ahead. The stand-up is deleted on the server;
    // A fetches the deletion (stamped 09:01) but has not told the account.
    at(&[&b, &c], 1);
    a.set_now(t0() + Duration::minutes(61));
    rad.delete(PATH);
    assert_eq!(a.caldav().deleted_here, 1);
    // Another client puts it back, moved to 12:00; B fetches that (08:02).
    at(&[&b, &c], 2);
    rad.put(
        PATH,
        &event(UID, "20260301T120000Z", "Stand-up", "20260301T080200Z"),
    );
    assert_eq!(b.caldav().changed_here, 1);
    b.exchange();
    // A's deletion wins over B's copy in Kairos sync (the later stamp).
    a.exchange();
    b.exchange();
    // B leaves a deletion fetched from the server to its own CalDAV sync,
    // which finds the series there: B keeps it and deletes nothing.
    let rb = b.caldav();
    assert_eq!(
        (rb.deleted_there, rb.deleted_here, rb.written_there),
        (0, 0, 0),
        "{rb:?}"
    );
    assert_eq!(rad.get(PATH).status, 200, "the series is on the server");
    assert_eq!(b.pending(UID).len(), 1, "B keeps it");
    // A's CalDAV sync brings it back to A, and Kairos sync to C.
    a.set_now(t0() + Duration::minutes(63));
    assert_eq!(a.caldav().changed_here, 1);
    a.exchange();
    b.exchange();
    c.exchange();
    assert_eq!(agree(&a, &b, &c)[0].1, t0() + Duration::minutes(225));
    let there = rad.get(PATH).body;
    assert!(there.contains("DTSTART:20260301T120000Z"), "{there}");
}
