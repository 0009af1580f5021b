//! An account changed after it was added (real Radicale): a private CA
//! trusted with `--ca` and kept with the account, calendars made on the
//! server since listed by a refresh, chosen and unchosen (the events
//! stay), a new password checked with the server before it is kept.

use kairos_caldav::secret::{FileStore, SecretStore};
use kairos_caldav::{CaldavError, account, manage, status};
use kairos_store::Store;

use crate::server::{DavServer, PASSWORD, USER};
use crate::{Fx, event, t0, when};

fn login<'a>(url: &'a str, ca_pem: Option<&'a str>) -> account::Login<'a> {
    account::Login {
        url,
        user: USER,
        password: PASSWORD,
        ca_pem,
    }
}

#[test]
fn a_private_ca_is_trusted_only_when_given_and_kept_with_the_account() {
    let ics = event(
        "tls1",
        "20260301T100000Z",
        "Behind a private CA",
        "20260101T000000Z",
    );
    let (rad, ca) = DavServer::radicale_tls(&[("tls1.ics", &ics)]);
    let url = rad.https_url();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    let secrets = FileStore::beside(&db);
    let mut store = Store::open(&db).unwrap();

    // Without the CA: refused, says what to do, nothing stored.
    let e = account::add(&mut store, &secrets, &login(&url, None), &[], when(t0())).unwrap_err();
    assert!(matches!(e, CaldavError::Certificate { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains("--ca FILE.pem"), "{msg}");
    assert!(
        msg.contains("authority this computer does not know"),
        "{msg}"
    );
    assert!(store.read(|r| r.caldav_accounts()).unwrap().is_empty());

    // Text that is no certificate: named, nothing stored.
    let e = account::add(
        &mut store,
        &secrets,
        &login(&url, Some("not a certificate")),
        &[],
        when(t0()),
    )
    .unwrap_err();
    assert!(matches!(e, CaldavError::BadCa(_)), "{e:?}");
    assert!(e.to_string().contains("BEGIN CERTIFICATE"), "{e}");
    assert!(store.read(|r| r.caldav_accounts()).unwrap().is_empty());

    // With it: added, the CA kept with the account, synced.
    let (a, cals) = account::add(
        &mut store,
        &secrets,
        &login(&url, Some(&ca)),
        &[],
        when(t0()),
    )
    .unwrap();
    assert_eq!(a.ca_pem.as_deref(), Some(ca.as_str()));
    assert_eq!(cals.len(), 1, "{cals:?}");
    let r = account::sync(&mut store, &secrets, None, when(t0())).unwrap();
    assert_eq!(r[0].fetched, 1, "{r:?}");
    drop(store);

    // A new process (the background sync's path): the stored CA is used.
    let mut store = Store::open(&db).unwrap();
    let a = store.read(|r| r.caldav_accounts()).unwrap().remove(0);
    assert_eq!(a.ca_pem.as_deref(), Some(ca.as_str()));
    let ics2 = event("tls2", "20260301T120000Z", "Second", "20260101T000000Z");
    std::fs::write(rad.storage("work").join("tls2.ics"), ics2).unwrap();
    let r = account::sync_account(&mut store, &secrets, &a, when(t0())).unwrap();
    assert_eq!(r[0].fetched, 1, "the new object only: {r:?}");
    let refreshed = manage::refresh(&mut store, &secrets, &a).unwrap();
    assert_eq!(refreshed, manage::Refreshed::default());
}

#[test]
fn calendars_made_on_the_server_since_are_listed_unchosen_and_can_be_chosen() {
    let mut fx = Fx::new();
    fx.rad.put(
        "/alice/work/w1.ics",
        &event("w1", "20260301T100000Z", "W", "20260101T000000Z"),
    );
    fx.add();
    let a = manage::pick(&fx.store, None, "edit").unwrap();
    fx.rad.mkcalendar("home", "Home", "#33aa33ff", &["VEVENT"]);
    fx.rad.put(
        "/alice/home/h1.ics",
        &event("h1", "20260301T110000Z", "H", "20260101T000000Z"),
    );
    let r = manage::refresh(&mut fx.store, &fx.secrets, &a).unwrap();
    assert_eq!(r.new, vec!["Home".to_owned()]);
    let cals = fx.store.read(|r| r.caldav_calendars(a.id)).unwrap();
    let home = cals.iter().find(|c| c.name == "Home").unwrap();
    assert!(home.calendar_id.is_none(), "a new calendar is not chosen");
    let work = cals.iter().find(|c| c.name == "Work").unwrap();
    assert!(work.calendar_id.is_some(), "the chosen one stays chosen");
    // A second refresh finds nothing new.
    let again = manage::refresh(&mut fx.store, &fx.secrets, &a).unwrap();
    assert_eq!(again, manage::Refreshed::default());
    assert_eq!(fx.sync(t0()).calendar, "Work", "only the chosen one syncs");

    let e = manage::choose(&mut fx.store, &a, "Nope", when(t0())).unwrap_err();
    assert!(e.to_string().contains("it has: Home, Work"), "{e}");
    let home = manage::choose(&mut fx.store, &a, "Home", when(t0())).unwrap();
    assert!(home.calendar_id.is_some());
    let reports = account::sync(&mut fx.store, &fx.secrets, None, when(t0())).unwrap();
    let names: Vec<&str> = reports.iter().map(|r| r.calendar.as_str()).collect();
    assert_eq!(names, ["Home", "Work"]);
    assert!(fx.local("Home").contains_key("h1"));

    // Deleted on the server: an unchosen one leaves the list, a chosen
    // one is reported and kept.
    fx.rad.mkcalendar("gone", "Gone", "#000000ff", &["VEVENT"]);
    manage::refresh(&mut fx.store, &fx.secrets, &a).unwrap();
    fx.rad.delete("/alice/gone/");
    fx.rad.delete("/alice/home/");
    let r = manage::refresh(&mut fx.store, &fx.secrets, &a).unwrap();
    assert_eq!(r.dropped, vec!["Gone".to_owned()]);
    assert_eq!(r.missing, vec!["Home".to_owned()]);
    assert!(fx.local("Home").contains_key("h1"), "nothing local is lost");
}

#[test]
fn an_unchosen_calendar_stops_syncing_keeps_its_events_and_comes_back_without_copies() {
    let mut fx = Fx::new();
    for (uid, h) in [("u1", "10"), ("u2", "11")] {
        let ics = event(uid, &format!("20260301T{h}0000Z"), uid, "20260101T000000Z");
        fx.rad.put(&format!("/alice/work/{uid}.ics"), &ics);
    }
    fx.add();
    fx.sync(t0());
    let a = manage::pick(&fx.store, None, "edit").unwrap();
    let before = fx.local("Work");
    let pending = fx.pending("u1");
    let linked = fx.store.read(|r| r.caldav_calendars(a.id)).unwrap()[0].calendar_id;
    assert!(linked.is_some());
    let cc = manage::unchoose(&mut fx.store, &a, "Work").unwrap();
    assert!(cc.calendar_id.is_none());
    let kept = fx.store.read(|r| r.caldav_objects(cc.id)).unwrap();
    assert_eq!(kept.len(), 2, "its sync state is kept to resume from");
    assert!(
        account::sync(&mut fx.store, &fx.secrets, None, when(t0()))
            .unwrap()
            .is_empty()
    );
    // The events stay, with their reminders; the server's copy is untouched.
    assert_eq!(
        fx.local("Work").keys().collect::<Vec<_>>(),
        before.keys().collect::<Vec<_>>()
    );
    assert_eq!(fx.pending("u1"), pending);
    assert_eq!(fx.rad.get("/alice/work/u2.ics").status, 200);
    // Unchoosing again changes nothing.
    manage::unchoose(&mut fx.store, &a, "Work").unwrap();

    // Meanwhile a server edit; choosing it again syncs into the same
    // calendar: the edit arrives, nothing is copied twice or written back.
    let moved = event("u2", "20260301T150000Z", "u2 moved", "20260201T000000Z");
    fx.rad.put("/alice/work/u2.ics", &moved);
    let cc = manage::choose(&mut fx.store, &a, "Work", when(t0())).unwrap();
    assert_eq!(cc.calendar_id, linked, "the same Kairos calendar");
    let r = fx.sync(t0());
    assert_eq!(
        (r.written_there, r.deleted_there, r.conflicts),
        (0, 0, 0),
        "{r:?}"
    );
    let after = fx.local("Work");
    assert_eq!(after.len(), 2, "{after:?}");
    assert!(after["u2"].text.contains("u2 moved"), "{after:?}");
    assert_eq!(fx.pending("u1"), pending);

    // Unchosen, its Kairos calendar deleted, chosen again: a fresh copy of
    // the server's, nothing deleted there.
    manage::unchoose(&mut fx.store, &a, "Work").unwrap();
    let id = linked.unwrap();
    fx.store.write(|tx| tx.delete_calendar(id)).unwrap();
    manage::choose(&mut fx.store, &a, "Work", when(t0())).unwrap();
    let r = fx.sync(t0());
    assert_eq!((r.written_there, r.deleted_there), (0, 0), "{r:?}");
    assert_eq!(fx.local("Work").len(), 2);
    assert_eq!(fx.rad.get("/alice/work/u1.ics").status, 200);
}

#[test]
fn a_new_password_is_checked_with_the_server_before_it_is_kept() {
    let mut fx = Fx::new();
    fx.add();
    let a = manage::pick(&fx.store, None, "edit").unwrap();
    let e = manage::set_password(&fx.secrets, &a, "wrong").unwrap_err();
    assert!(matches!(e, CaldavError::Unauthorized { .. }), "{e:?}");
    assert_eq!(
        fx.secrets.get(&a.secret_ref).unwrap().as_deref(),
        Some(PASSWORD)
    );

    // The password changes on the server: syncs fail until it is given.
    fx.rad.change_password("n3w-pw");
    let e = account::sync(&mut fx.store, &fx.secrets, None, when(t0())).unwrap_err();
    assert!(matches!(e, CaldavError::Unauthorized { .. }), "{e:?}");
    manage::set_password(&fx.secrets, &a, "n3w-pw").unwrap();
    assert_eq!(
        fx.secrets.get(&a.secret_ref).unwrap().as_deref(),
        Some("n3w-pw")
    );
    fx.sync(t0());

    // The interval.
    status::set_every(&mut fx.store, a.id, chrono::Duration::minutes(15)).unwrap();
    assert_eq!(
        status::every(&fx.store, a.id).unwrap(),
        chrono::Duration::minutes(15)
    );
    let e = status::set_every(&mut fx.store, a.id, chrono::Duration::days(3)).unwrap_err();
    assert!(e.to_string().contains("outside"), "{e}");
}
