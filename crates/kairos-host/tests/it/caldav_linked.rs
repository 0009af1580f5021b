//! A host whose database links a CalDAV collection that another paired
//! device links too: the other device's series op (a change it fetched
//! from the server) is left to this host's CalDAV sync, which runs at once
//! (not at its 5-minute interval, when the old reminder may have rung).
//! Real Radicale (the venv of `tests/caldav/setup.sh`), the real sync
//! server, real SQLite files.

use std::path::Path;
use std::time::Instant;

use chrono::{DateTime, Duration, DurationRound, Utc};
use kairos_caldav::account;
use kairos_caldav::secret::FileStore;
use kairos_host::{Phase, Waker};
use kairos_store::{State, Store};
use kairos_sync::{Applier, Tls};

use super::pairing::Server;
use super::{WAIT, start};

#[allow(dead_code)]
#[path = "../../../kairos-caldav/tests/it/server.rs"]
mod dav;

use dav::{DavServer, PASSWORD, USER};

const PATH: &str = "/alice/work/call.ics";

fn call(start: DateTime<Utc>, stamp: DateTime<Utc>) -> String {
    let f = |t: DateTime<Utc>| t.format("%Y%m%dT%H%M%SZ").to_string();
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:call\r\n\
         DTSTAMP:{s}\r\nLAST-MODIFIED:{s}\r\nDTSTART:{}\r\nDURATION:PT30M\r\nSUMMARY:Call\r\n\
         BEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:r\r\nTRIGGER:-PT15M\r\nEND:VALARM\r\n\
         END:VEVENT\r\nEND:VCALENDAR\r\n",
        f(start),
        s = f(stamp)
    )
}

fn when() -> kairos_caldav::When {
    kairos_caldav::When {
        now: Utc::now(),
        horizon: Duration::hours(48),
        floating: chrono_tz::UTC,
    }
}

fn applier() -> Applier {
    Applier {
        clock: std::sync::Arc::new(kairos_engine::clock::SystemClock::shifted(Duration::zero())),
        floating: chrono_tz::UTC,
        horizon: Duration::hours(48),
    }
}

/// A device's `kairos caldav add` and first sync.
fn link(store: &mut Store, db: &Path, rad: &DavServer) {
    let secrets = FileStore::beside(db);
    let url = rad.url();
    let login = account::Login {
        url: &url,
        user: USER,
        password: PASSWORD,
        ca_pem: None,
    };
    account::add(store, &secrets, &login, &[], when()).expect("add");
    account::sync(store, &secrets, None, when()).expect("sync");
}

/// The pending reminder triggers of the call in `db`.
fn pending(db: &Path) -> Vec<DateTime<Utc>> {
    let store = Store::open(db).expect("open");
    let Some(cal) = store
        .read(|r| r.calendars())
        .expect("calendars")
        .into_iter()
        .find(|c| c.name == "Work")
    else {
        return Vec::new();
    };
    store
        .read(|r| r.instances_of_event(cal.id, "call"))
        .expect("instances")
        .into_iter()
        .filter(|i| i.state == State::Pending)
        .map(|i| i.trigger_at)
        .collect()
}

#[test]
fn another_linked_devices_fetch_makes_the_host_sync_caldav_at_once() {
    let rad = DavServer::radicale();
    rad.mkcalendar("work", "Work", "#3366ccff", &["VEVENT", "VTODO"]);
    let t = Utc::now()
        .duration_trunc(Duration::minutes(1))
        .expect("trunc");
    rad.put(PATH, &call(t + Duration::hours(3), t));
    let server = Server::start();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let tls = Tls::default();

    // A: paired, linked, synced, pushed.
    let a_dir = tempfile::tempdir().expect("tmp");
    let a_db = a_dir.path().join("a.db");
    let mut a = Store::open(&a_db).expect("open");
    rt.block_on(kairos_sync::join(
        &mut a,
        &server.url,
        &server.invite(),
        "a",
        &tls,
        Utc::now(),
    ))
    .expect("join a");
    link(&mut a, &a_db, &rad);
    rt.block_on(kairos_sync::now(&mut a, &applier(), &tls))
        .expect("push a");

    // B: paired (gets A's calendar), linked, then run by a host.
    let b_dir = tempfile::tempdir().expect("tmp");
    let b_db = b_dir.path().join("b.db");
    {
        let mut b = Store::open(&b_db).expect("open");
        let code = rt.block_on(kairos_sync::pair(&a, &tls)).expect("pair").0;
        rt.block_on(kairos_sync::join(
            &mut b,
            &server.url,
            &code,
            "b",
            &tls,
            Utc::now(),
        ))
        .expect("join b");
        rt.block_on(kairos_sync::now(&mut b, &applier(), &tls))
            .expect("catch up b");
        link(&mut b, &b_db, &rad);
    }
    let first = t + Duration::hours(3) - Duration::minutes(15);
    assert_eq!(pending(&b_db), [first]);
    let (host, _rx) = start(&b_db, &Waker::default());
    let host = host.expect("host");
    let mut events = host.subscribe();
    let mut state = host.sync_state();
    rt.block_on(async {
        tokio::time::timeout(WAIT, state.wait_for(|s| s.phase == Phase::Connected)).await
    })
    .expect("connected in time")
    .expect("state");

    // Twice: the first change may meet the host's start-up sync; the
    // second can reach B only through the early sync (the interval is
    // 5 minutes).
    for (n, hours) in [(1, 4), (2, 5)] {
        rad.put(
            PATH,
            &call(t + Duration::hours(hours), t + Duration::minutes(n)),
        );
        let r = account::sync(&mut a, &FileStore::beside(&a_db), None, when()).expect("sync a");
        assert_eq!(r[0].changed_here, 1, "{r:?}");
        rt.block_on(kairos_sync::now(&mut a, &applier(), &tls))
            .expect("push a");
        let want = t + Duration::hours(hours) - Duration::minutes(15);
        let deadline = Instant::now() + WAIT;
        while pending(&b_db) != [want] {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "change {n} did not reach B within {WAIT:?}: {:?}",
                pending(&b_db)
            );
            // Each sync announces what it changed: look again then.
            let _ = rt.block_on(async { tokio::time::timeout(left, events.recv()).await });
        }
    }
    host.stop().expect("stop");
}
