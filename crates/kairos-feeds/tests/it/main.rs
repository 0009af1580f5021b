//! Subscriptions against a local HTTP server the test controls (see
//! `server.rs`) and a real SQLite file.

mod failures;
mod refresh;
mod runner;
mod server;
mod tls;

use std::sync::Arc;

use chrono::{DateTime, Duration, TimeZone, Utc};
use kairos_feeds::{Fetcher, Limits, Refresher};
use kairos_store::{State, Store};

use server::{Handler, Reply, Request};

/// The tests' "now": 2026-12-01 08:00 UTC.
pub fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 1, 8, 0, 0)
        .single()
        .expect("time")
}

/// One event with a 15-minute reminder.
pub fn event(uid: &str, summary: &str, start: &str) -> String {
    format!(
        "BEGIN:VEVENT\r\nUID:{uid}\r\nSUMMARY:{summary}\r\nDTSTART:{start}\r\n\
         BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT15M\r\nEND:VALARM\r\nEND:VEVENT\r\n"
    )
}

/// A feed (`X-WR-CALNAME:Team`) of `events`.
pub fn feed(events: &[String]) -> Vec<u8> {
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nX-WR-CALNAME:Team\r\n{}END:VCALENDAR\r\n",
        events.concat()
    )
    .into_bytes()
}

/// 200 with `body` and ETag `etag`; 304 when the request carries it.
pub fn with_etag(body: Vec<u8>, etag: &'static str) -> Handler {
    Arc::new(move |r: &Request| {
        if r.headers.get("if-none-match").map(String::as_str) == Some(etag) {
            return Reply::Full(304, vec![("ETag".into(), etag.into())], Vec::new());
        }
        Reply::Full(
            200,
            vec![
                ("Content-Type".into(), "text/calendar".into()),
                ("ETag".into(), etag.into()),
            ],
            body.clone(),
        )
    })
}

/// A refresher with `limits`, a 48 h horizon, UTC for floating times.
pub fn refresher(limits: Limits) -> Refresher {
    Refresher {
        fetcher: Fetcher::new(limits).expect("client"),
        horizon: Duration::hours(48),
        floating: chrono_tz::UTC,
    }
}

/// A fresh database in a temp dir.
pub fn db() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path().join("kairos.db")).expect("open");
    (dir, store)
}

/// Pending reminders: (key, trigger).
pub fn pending(s: &Store) -> Vec<(String, DateTime<Utc>)> {
    s.due(DateTime::<Utc>::MAX_UTC, 1000)
        .expect("due")
        .into_iter()
        .filter(|i| i.state == State::Pending)
        .map(|i| (i.key, i.trigger_at))
        .collect()
}

/// The stored events of calendar `name`: (uid, text).
pub fn stored(s: &Store, name: &str) -> Vec<(String, String)> {
    let cal = s
        .calendars()
        .expect("calendars")
        .into_iter()
        .find(|c| c.name == name)
        .expect("calendar");
    s.events_of(cal.id)
        .expect("events")
        .into_iter()
        .map(|e| {
            let text = kairos_engine::series::component_text(&e, name).expect("text");
            (e.uid, text)
        })
        .collect()
}

/// The subscription of calendar `name`.
pub fn subscription(s: &Store, name: &str) -> kairos_store::Subscription {
    s.read(|r| r.subscriptions())
        .expect("subscriptions")
        .into_iter()
        .find(|x| x.name == name)
        .expect("subscription")
}
