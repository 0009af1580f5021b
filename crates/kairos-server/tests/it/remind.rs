//! Server-side reminders: the server replicates an opted-in account's
//! calendars from its synced ops and keeps the reminder instances, keyed as
//! on the devices, in its delay queue (`src/remind/`). `now` is the test's.

use std::time::Duration;

use chrono::{DateTime, Utc};
use kairos_proto::Body;
use kairos_server::remind::{Channel, Fallback, Reminders};
use kairos_server::store::Database;

use crate::support::{Maker, Server};

/// For the tests that drive the queue with their own `now`: the server
/// runs no reminder task on the real clock, which would race them (its
/// rounds move the cursor first) and send what falls due today.
pub const NO_TASK: &[&str] = &["--no-reminders"];

pub fn at(s: &str) -> DateTime<Utc> {
    s.parse().unwrap()
}

/// A series with one 15-minute alarm, starting at `start` (`YYYYMMDDTHHMMSSZ`).
pub fn series(uid: &str, start: &str) -> Body {
    Body::SeriesPut {
        calendar: "c1".into(),
        uid: uid.into(),
        ics: format!(
            "BEGIN:VEVENT\r\nUID:{uid}\r\nSUMMARY:Talk {uid}\r\nDTSTART:{start}\r\n\
             BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT15M\r\nDESCRIPTION:x\r\nEND:VALARM\r\nEND:VEVENT"
        ),
    }
}

/// The key a device computes for `body`'s first alarm (the engine's planner).
pub fn device_key(body: &Body) -> String {
    on_device(body, chrono_tz::UTC).0
}

/// The key and trigger a device in `zone` computes for `body`'s first alarm.
pub fn on_device(body: &Body, zone: chrono_tz::Tz) -> (String, DateTime<Utc>) {
    let Body::SeriesPut { calendar, ics, .. } = body else {
        unreachable!()
    };
    let text = format!("BEGIN:VCALENDAR\r\n{ics}\r\nEND:VCALENDAR\r\n");
    let limits = kairos_core::Limits::default();
    let cal = kairos_core::ics::parse_calendar(text.as_bytes(), &limits).unwrap();
    let label = kairos_engine::materialise::CalendarLabel {
        uid: calendar,
        name: "Work",
    };
    let planned = kairos_engine::materialise::plan(
        label,
        &cal,
        at("2000-01-01T00:00:00Z"),
        at("2100-01-01T00:00:00Z"),
        zone,
        &limits,
    )
    .unwrap();
    (planned[0].key.clone(), planned[0].trigger)
}

pub fn database(server: &Server) -> Database {
    match &server.database {
        Some(url) => Database::Postgres(url.clone()),
        None => Database::Sqlite(server.data.clone()),
    }
}

/// The server's reminders, opened as a test drives them, with one webhook
/// fallback ([`webhook`]) configured for `account`.
pub async fn with_webhook(server: &Server, account: &str, url: &str, after: Duration) -> Reminders {
    let rem = Reminders::open(&database(server)).await.unwrap();
    rem.configure(webhook(account, url, after)).await.unwrap();
    rem
}

pub fn webhook(account: &str, url: &str, after: Duration) -> Fallback {
    Fallback {
        account: account.into(),
        calendar: "*".into(),
        channel: Channel::Webhook,
        target: url.into(),
        secret: Some("s3cret".into()),
        after,
        always: false,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_server_plans_the_devices_keys_and_a_dismissal_acknowledges_them() {
    let server = Server::start(NO_TASK).await;
    let (id, token) = server.device("alice", "laptop").await;
    let mut dev = server.connect(&token).await;
    dev.hello(0).await;
    let mut m = Maker::new(&id);
    let soon = series("e1", "20261206T100000Z");
    let gone = series("e2", "20261206T110000Z");
    let later = series("e3", "20261209T100000Z");
    dev.push(&[
        m.calendar("c1", "Work"),
        m.op(soon.clone()),
        m.op(gone.clone()),
        m.op(later.clone()),
    ])
    .await;

    let rem = Reminders::open(&database(&server)).await.unwrap();
    let now = at("2026-12-06T08:00:00Z");
    let round = rem.replicate(now).await.unwrap();
    assert_eq!(round.accounts, 0, "not opted in: nothing planned");
    rem.configure(webhook(
        "alice",
        "http://127.0.0.1:9/",
        Duration::from_secs(300),
    ))
    .await
    .unwrap();
    let round = rem.replicate(now).await.unwrap();
    assert_eq!((round.accounts, round.planned, round.deliveries), (1, 2, 2));
    let rows = rem.instances("alice").await.unwrap();
    let keys: Vec<_> = rows.iter().map(|r| r.key.clone()).collect();
    assert_eq!(
        keys,
        [device_key(&soon), device_key(&gone)],
        "the devices' keys"
    );
    assert_eq!(rows[0].due, at("2026-12-06T09:45:00Z"));
    assert_eq!(
        rem.replicate(now).await.unwrap().accounts,
        0,
        "nothing new: no round"
    );

    // A dismissal from a device acknowledges; a deleted series withdraws.
    dev.push(&[
        m.dismiss(&device_key(&soon)),
        m.op(Body::SeriesDelete {
            calendar: "c1".into(),
            uid: "e2".into(),
            caldav: false,
        }),
    ])
    .await;
    let round = rem.replicate(now).await.unwrap();
    assert_eq!((round.acked, round.withdrawn, round.planned), (1, 1, 0));
    let states: Vec<_> = rem
        .instances("alice")
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.state)
        .collect();
    assert_eq!(states, ["acked", "withdrawn"]);

    // Time passes: the window moves on and finds e3, once.
    let later_now = at("2026-12-08T00:00:00Z");
    let round = rem.replicate(later_now).await.unwrap();
    assert_eq!((round.accounts, round.planned), (1, 1));
    let rows = rem.instances("alice").await.unwrap();
    assert_eq!(rows[2].key, device_key(&later));
    assert_eq!(rem.replicate(later_now).await.unwrap().accounts, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_acknowledgement_that_arrives_before_the_plan_still_counts() {
    let server = Server::start(NO_TASK).await;
    let (id, token) = server.device("bob", "laptop").await;
    let mut dev = server.connect(&token).await;
    dev.hello(0).await;
    let mut m = Maker::new(&id);
    let ev = series("e1", "20261206T100000Z");
    dev.push(&[
        m.calendar("c1", "Home"),
        m.op(ev.clone()),
        m.dismiss(&device_key(&ev)),
    ])
    .await;
    let rem = with_webhook(&server, "bob", "http://127.0.0.1:9/", Duration::ZERO).await;
    let round = rem.replicate(at("2026-12-06T08:00:00Z")).await.unwrap();
    assert_eq!((round.planned, round.deliveries), (1, 0), "{round:?}");
    assert_eq!(rem.instances("bob").await.unwrap()[0].state, "acked");
}
