//! kairos-caldav against a real Radicale on 127.0.0.1 (tests/caldav/setup.sh
//! installs it): discovery, first sync, changes both ways, conflicts,
//! deletions, and the errors a person meets.

#![allow(clippy::unwrap_used)] // tests: a panic is the failure report

mod acks;
mod conflict412;
mod devices;
mod errors;
mod first_sync;
mod kx;
mod legacy;
mod linked;
mod linked_more;
mod manage;
mod rekey;
mod relay;
mod server;
mod snooze;
mod snooze_early;
mod snooze_more;
mod sync;
mod tls;
mod xandikos;

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, TimeZone, Utc};
use kairos_caldav::local::{LocalSeries, local_series};
use kairos_caldav::secret::FileStore;
use kairos_caldav::sync::SyncReport;
use kairos_caldav::{When, account};
use kairos_store::{CaldavCalendar, Store};
use tempfile::TempDir;

use server::{DavServer, PASSWORD, USER};

/// A Kairos database, a file secret store and a CalDAV server with one
/// calendar: Radicale's "Work" (`/alice/work/`, events and tasks), or
/// Xandikos's default "calendar".
pub(crate) struct Fx {
    pub(crate) rad: DavServer,
    pub(crate) dir: TempDir,
    pub(crate) store: Store,
    pub(crate) secrets: FileStore,
    /// The calendar's collection path on the server.
    pub(crate) path: &'static str,
    /// Its name, here and there.
    pub(crate) name: &'static str,
}

/// The clock of the tests: 2026-03-01 08:00 UTC.
pub(crate) fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 8, 0, 0).unwrap()
}

pub(crate) fn when(now: DateTime<Utc>) -> When {
    When {
        now,
        horizon: Duration::hours(48),
        floating: chrono_tz::UTC,
    }
}

impl Fx {
    pub(crate) fn new() -> Self {
        let rad = DavServer::radicale();
        rad.mkcalendar("work", "Work", "#3366ccff", &["VEVENT", "VTODO"]);
        Self::with(rad, "/alice/work/", "Work")
    }

    pub(crate) fn xandikos() -> Self {
        Self::with(
            DavServer::xandikos(),
            "/user/calendars/calendar/",
            "calendar",
        )
    }

    fn with(rad: DavServer, path: &'static str, name: &'static str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("k.db");
        let store = Store::open(&db).unwrap();
        let secrets = FileStore::beside(&db);
        Self {
            rad,
            dir,
            store,
            secrets,
            path,
            name,
        }
    }

    pub(crate) fn add(&mut self) -> Vec<CaldavCalendar> {
        let url = self.rad.url();
        self.add_at(&url)
    }

    /// Adds the account at `url` (the server itself, or a relay to it).
    pub(crate) fn add_at(&mut self, url: &str) -> Vec<CaldavCalendar> {
        account::add(
            &mut self.store,
            &self.secrets,
            &account::Login {
                url,
                user: USER,
                password: PASSWORD,
                ca_pem: None,
            },
            &[],
            when(t0()),
        )
        .unwrap()
        .1
    }

    pub(crate) fn sync(&mut self, now: DateTime<Utc>) -> SyncReport {
        let mut r = account::sync(&mut self.store, &self.secrets, None, when(now)).unwrap();
        assert_eq!(r.len(), 1);
        r.remove(0)
    }

    pub(crate) fn local(&self, calendar: &str) -> BTreeMap<String, LocalSeries> {
        let cal = self
            .store
            .read(|r| r.calendars())
            .unwrap()
            .into_iter()
            .find(|c| c.name == calendar)
            .expect("calendar");
        local_series(&self.store, cal.id).unwrap()
    }

    /// Every reminder of series `uid` in the calendar, by key.
    pub(crate) fn instances(&self, uid: &str) -> Vec<kairos_store::Instance> {
        let cal = self
            .store
            .read(|r| r.calendars())
            .unwrap()
            .into_iter()
            .find(|c| c.name == self.name)
            .unwrap();
        let mut v = self
            .store
            .read(|r| r.instances_of_event(cal.id, uid))
            .unwrap();
        v.sort_by(|a, b| a.key.cmp(&b.key));
        v
    }

    /// Pending reminder triggers of series `uid` in the calendar.
    pub(crate) fn pending(&self, uid: &str) -> Vec<DateTime<Utc>> {
        let mut v: Vec<_> = self
            .instances(uid)
            .into_iter()
            .filter(|i| i.state == kairos_store::State::Pending)
            .map(|i| i.trigger_at)
            .collect();
        v.sort();
        v
    }
}

/// An event object at `start` (UTC basic form) with a 15-minute reminder.
pub(crate) fn event(uid: &str, start: &str, summary: &str, modified: &str) -> String {
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:{uid}\r\n\
         DTSTAMP:{modified}\r\nLAST-MODIFIED:{modified}\r\nDTSTART:{start}\r\nDURATION:PT1H\r\n\
         SUMMARY:{summary}\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:r\r\n\
         TRIGGER:-PT15M\r\nEND:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )
}

/// A task object due at `due`.
pub(crate) fn todo(uid: &str, due: &str, summary: &str) -> String {
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VTODO\r\nUID:{uid}\r\n\
         DTSTAMP:20260101T000000Z\r\nDUE:{due}\r\nSUMMARY:{summary}\r\nBEGIN:VALARM\r\n\
         ACTION:DISPLAY\r\nDESCRIPTION:r\r\nTRIGGER:-PT10M\r\nEND:VALARM\r\nEND:VTODO\r\n\
         END:VCALENDAR\r\n"
    )
}

/// The engine's edit path, as the app or `kairos import` would use it.
pub(crate) fn edit_here(fx: &mut Fx, ics: &str, now: DateTime<Utc>) {
    let (cal, _) =
        kairos_core::ics::parse_calendar_lenient(ics.as_bytes(), &kairos_core::Limits::default())
            .unwrap();
    let uid = cal.events[0].uid.clone();
    kairos_engine::import::replace_series(
        &mut fx.store,
        fx.name,
        &uid,
        &cal.events,
        now,
        Duration::hours(48),
        chrono_tz::UTC,
    )
    .unwrap();
}

pub(crate) fn delete_here(fx: &mut Fx, uid: &str, now: DateTime<Utc>) {
    kairos_engine::import::replace_series(
        &mut fx.store,
        fx.name,
        uid,
        &[],
        now,
        Duration::hours(48),
        chrono_tz::UTC,
    )
    .unwrap();
}

/// Everything `kairos log` shows, as one text.
pub(crate) fn log(fx: &Fx) -> String {
    fx.store
        .read(|r| r.audit_since(DateTime::<Utc>::UNIX_EPOCH, 100_000))
        .unwrap()
        .into_iter()
        .map(|a| format!("{} {}\n", a.key, a.reason))
        .collect()
}
