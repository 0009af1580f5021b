//! Kairos sync and CalDAV together, the engine's side (no network; the
//! real servers are in kairos-caldav's `linked` and kairos-host's
//! `caldav_linked` tests): a series op whose content a device's CalDAV
//! sync fetched is marked, an edit made in Kairos is not; a device that links the calendar too leaves its
//! content to its own CalDAV sync (register moved, fetch due), a device
//! without the link applies it; an edit from a device without the link is
//! applied everywhere; the same content arriving twice writes once and is
//! no conflict.

use chrono::{DateTime, Duration, Utc};
use kairos_engine::import::replace_series;
use kairos_engine::sync::caldav::{FETCH_DUE, is_marked, replace_fetched, sync_attempted, taken};
use kairos_proto::{Body, Op};
use kairos_store::{CaldavAccount, CaldavCalendar, Store};

use crate::support::{cal, now};
use crate::sync::{device, drain};

const H: i64 = 48;

fn event(start: &str) -> String {
    format!(
        "BEGIN:VEVENT\nUID:m\nSUMMARY:Meeting\nDTSTART:{start}\n\
         BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT15M\nEND:VALARM\nEND:VEVENT"
    )
}

fn apply(to: &mut Store, ops: &[Op]) -> kairos_engine::sync::apply::Applied {
    kairos_engine::sync::apply::apply_remote(
        to,
        ops,
        None,
        now(),
        Duration::hours(H),
        chrono_tz::UTC,
    )
    .expect("apply")
}

fn edit(s: &mut Store, start: &str) {
    let c = cal(&event(start));
    replace_series(
        s,
        "work",
        "m",
        &c.events,
        now(),
        Duration::hours(H),
        chrono_tz::UTC,
    )
    .expect("edit");
}

/// What a CalDAV sync writes: the server's version of `m`, fetched.
fn fetched(s: &mut Store, start: &str) {
    let c = cal(&event(start));
    replace_fetched(
        s,
        "work",
        "m",
        &c.events,
        now(),
        Duration::hours(H),
        chrono_tz::UTC,
    )
    .expect("fetched");
}

/// What `kairos caldav add` stores: the account and "work" linked.
fn link(s: &mut Store) {
    let work = s
        .read(|r| r.calendars())
        .expect("calendars")
        .into_iter()
        .find(|c| c.name == "work")
        .expect("work");
    s.write(|tx| -> Result<(), kairos_store::StoreError> {
        let account = tx.caldav_account_put(
            &CaldavAccount {
                id: 0,
                url: "http://127.0.0.1:1/".into(),
                username: "alice".into(),
                principal: "/alice/".into(),
                home: "/alice/".into(),
                secret_ref: "ref".into(),
                ca_pem: None,
                created_at: now(),
            },
            now(),
        )?;
        let id = tx.caldav_calendar_put(&CaldavCalendar {
            id: 0,
            account_id: account,
            href: "/alice/work/".into(),
            name: "work".into(),
            color: None,
            components: "VEVENT".into(),
            calendar_id: None,
            sync_token: None,
            synced_at: None,
        })?;
        tx.caldav_calendar_link(id, work.id)
    })
    .expect("link");
}

fn triggers(s: &Store) -> Vec<DateTime<Utc>> {
    s.due(DateTime::<Utc>::MAX_UTC, 100)
        .expect("due")
        .into_iter()
        .map(|i| i.trigger_at)
        .collect()
}

/// Times series `m` was written: each write re-plans its reminder.
fn writes(s: &Store) -> usize {
    s.read(|r| r.audit_since(DateTime::<Utc>::UNIX_EPOCH, 10_000))
        .expect("audit")
        .iter()
        .filter(|a| a.reason.starts_with("event changed"))
        .count()
}

fn lost_edits(s: &Store) -> usize {
    s.read(|r| r.audit_since(DateTime::<Utc>::UNIX_EPOCH, 10_000))
        .expect("audit")
        .iter()
        .filter(|a| a.reason.contains(" lost to "))
        .count()
}

fn series_ics(ops: &[Op]) -> Vec<&str> {
    ops.iter()
        .filter_map(|o| match &o.body {
            Body::SeriesPut { ics, .. } => Some(ics.as_str()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_linked_devices_series_op_is_left_to_the_other_linked_devices_caldav_sync() {
    let dir = tempfile::tempdir().expect("tmp");
    let (mut a, mut b, mut c) = (
        device(dir.path(), "a"),
        device(dir.path(), "b"),
        device(dir.path(), "c"),
    );
    edit(&mut a, "20260601T100000Z");
    let first = drain(&mut a);
    assert!(
        series_ics(&first).iter().all(|i| !is_marked(i)),
        "not linked yet"
    );
    apply(&mut b, &first);
    apply(&mut c, &first);
    link(&mut a);
    link(&mut b);

    // A (linked) edits in Kairos: not marked (every device applies it).
    edit(&mut a, "20260601T103000Z");
    let local = drain(&mut a);
    assert!(
        series_ics(&local).iter().all(|i| !is_marked(i)),
        "{local:?}"
    );
    let r = apply(&mut b, &local);
    assert_eq!((r.applied, r.left_to_caldav), (1, 0));
    apply(&mut c, &local);
    let before = triggers(&b);
    // A (linked) writes what its CalDAV sync fetched: marked.
    fetched(&mut a, "20260601T110000Z");
    let fetched = drain(&mut a);
    assert!(
        series_ics(&fetched).iter().all(|i| is_marked(i)),
        "{fetched:?}"
    );
    // B links the calendar too: the register moves, the content waits for
    // B's own CalDAV sync, which is due at once.
    let r = apply(&mut b, &fetched);
    assert_eq!((r.applied, r.left_to_caldav), (1, 1));
    assert_eq!(triggers(&b), before);
    assert!(b.meta_get(FETCH_DUE).expect("meta").is_some());
    kairos_engine::sync::caldav::fetch_done(&mut b, &fetched[0].hlc.to_string()).expect("done");
    assert_eq!(b.meta_get(FETCH_DUE).expect("meta"), None);
    // C has no link: it applies the content.
    let r = apply(&mut c, &fetched);
    assert_eq!((r.applied, r.left_to_caldav), (1, 0));
    assert_eq!(triggers(&c), triggers(&a));

    // An edit on C (no link) is applied on B, which writes it to the server.
    edit(&mut c, "20260601T120000Z");
    let edited = drain(&mut c);
    assert!(series_ics(&edited).iter().all(|i| !is_marked(i)));
    let r = apply(&mut b, &edited);
    assert_eq!((r.applied, r.left_to_caldav), (1, 0));
    assert_eq!(triggers(&b), triggers(&c));
}

#[test]
fn the_same_version_from_two_devices_is_written_once_and_is_no_conflict() {
    let dir = tempfile::tempdir().expect("tmp");
    let (mut a, mut b) = (device(dir.path(), "a"), device(dir.path(), "b"));
    edit(&mut a, "20260601T100000Z");
    let first = drain(&mut a);
    apply(&mut b, &first);
    // A and B fetch the same server change, neither having seen the other's.
    edit(&mut a, "20260601T110000Z");
    edit(&mut b, "20260601T110000Z");
    let (from_a, from_b) = (drain(&mut a), drain(&mut b));
    // C sees both, in either order.
    for (n, order) in [[&from_a, &from_b], [&from_b, &from_a]].iter().enumerate() {
        let mut c = device(dir.path(), &format!("c{n}"));
        apply(&mut c, &first);
        let base = writes(&c);
        apply(&mut c, order[0]);
        apply(&mut c, order[1]);
        assert_eq!(writes(&c) - base, 1, "written once");
        assert_eq!(lost_edits(&c), 0, "no lost edit logged");
    }
    apply(&mut a, &from_b);
    apply(&mut b, &from_a);
    assert_eq!((lost_edits(&a), lost_edits(&b)), (0, 0));
    assert_eq!(triggers(&a), triggers(&b));
}

#[test]
fn while_caldav_fails_a_marked_op_is_applied_and_remembered_until_edited_here() {
    let dir = tempfile::tempdir().expect("tmp");
    let (mut a, mut b) = (device(dir.path(), "a"), device(dir.path(), "b"));
    edit(&mut a, "20260601T100000Z");
    apply(&mut b, &drain(&mut a));
    link(&mut a);
    link(&mut b);
    let work = b
        .calendars()
        .expect("calendars")
        .into_iter()
        .find(|c| c.name == "work")
        .expect("work");
    sync_attempted(&mut b, work.id, false, now()).expect("failed");

    fetched(&mut a, "20260601T110000Z");
    let ops = drain(&mut a);
    let r = apply(&mut b, &ops);
    assert_eq!((r.applied, r.left_to_caldav), (1, 0), "applied in full");
    assert_eq!(triggers(&b), triggers(&a));
    assert_eq!(b.meta_get(FETCH_DUE).expect("meta"), None);
    let t = taken(&b, &work.uid).expect("taken");
    assert_eq!(t.get("m"), Some(&ops[0].hlc.to_string()), "{t:?}");
    // Edited here since: an edit made here, no longer the server's copy.
    edit(&mut b, "20260601T120000Z");
    assert!(taken(&b, &work.uid).expect("taken").is_empty());

    // CalDAV works again: marked ops wait for it once more.
    sync_attempted(&mut b, work.id, true, now()).expect("ok");
    apply(&mut a, &drain(&mut b));
    fetched(&mut a, "20260601T130000Z");
    let r = apply(&mut b, &drain(&mut a));
    assert_eq!((r.applied, r.left_to_caldav), (1, 1));
}
