//! The account's zone (the `account.zone` its devices send, else
//! `kairos-server fallback … --zone`): an event with no zone ("the pill at
//! 08:00") goes off at 08:00 where the person is, and its key is the one
//! their devices compute there, so a dismissal on a device cancels the
//! server's fallback.

use std::time::Duration;

use chrono::{DateTime, Utc};
use kairos_proto::Body;
use kairos_server::remind::Reminders;

use crate::remind::{NO_TASK, at, database, on_device};
use crate::remind_ops::account;
use crate::remind_send::fallback;
use crate::support::{Client, Maker, Server};

/// A floating event (no `Z`, no `TZID`) with a 15-minute alarm.
fn floating(uid: &str, start: &str) -> Body {
    Body::SeriesPut {
        calendar: "c1".into(),
        uid: uid.into(),
        ics: format!(
            "BEGIN:VEVENT\r\nUID:{uid}\r\nSUMMARY:Pill\r\nDTSTART:{start}\r\n\
             BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT15M\r\nDESCRIPTION:x\r\nEND:VALARM\r\nEND:VEVENT"
        ),
    }
}

/// Alice's webhook fallback, with `--zone zone`.
async fn webhook_in(server: &Server, zone: &str) {
    let args = ["alice", "--webhook", "http://127.0.0.1:9/", "--secret", "s"];
    fallback(server, &[&args[..], &["--zone", zone]].concat()).await;
}

/// After alice's zone changed, at `now`: the instance planned in the old
/// zone withdrawn, the one the devices compute in the new zone (`key` at
/// `due`) pending, and the device's dismissal of that key cancels the
/// server's fallback.
async fn moved_then_dismissed(
    rem: &Reminders,
    now: DateTime<Utc>,
    dev: &mut Client,
    m: &mut Maker,
    key: &str,
    due: DateTime<Utc>,
) {
    let round = rem.replicate(now).await.unwrap();
    assert_eq!((round.withdrawn, round.planned), (1, 1), "{round:?}");
    let rows = rem.instances("alice").await.unwrap();
    let pending: Vec<_> = rows.iter().filter(|r| r.state == "pending").collect();
    assert_eq!(pending.len(), 1, "{rows:?}");
    assert_eq!((pending[0].key.as_str(), pending[0].due), (key, due));

    dev.push(&[m.dismiss(key)]).await;
    let round = rem
        .replicate(now + chrono::Duration::from_std(Duration::from_secs(60)).unwrap())
        .await
        .unwrap();
    assert_eq!(round.acked, 1, "{round:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn floating_times_are_read_in_the_accounts_zone_so_keys_and_times_are_the_devices() {
    let server = Server::start(NO_TASK).await;
    let pill = floating("pill", "20261206T080000");
    let (mut dev, mut m) = account(&server, "alice", vec![pill.clone()]).await;
    let (berlin_key, berlin_due) = on_device(&pill, chrono_tz::Europe::Berlin);
    let (utc_key, _) = on_device(&pill, chrono_tz::UTC);
    assert_eq!(berlin_due, at("2026-12-06T06:45:00Z"), "07:45 in Berlin");
    assert_ne!(
        berlin_key, utc_key,
        "a floating event's key depends on the zone"
    );

    let rem = Reminders::open(&database(&server)).await.unwrap();
    let now = at("2026-12-06T05:00:00Z");
    fallback(
        &server,
        &["alice", "--webhook", "http://127.0.0.1:9/", "--secret", "s"],
    )
    .await;
    rem.replicate(now).await.unwrap();
    let rows = rem.instances("alice").await.unwrap();
    assert_eq!(
        (rows[0].key.as_str(), rows[0].due),
        (utc_key.as_str(), at("2026-12-06T07:45:00Z")),
        "no zone set: UTC"
    );

    webhook_in(&server, "Europe/Berlin").await;
    moved_then_dismissed(&rem, now, &mut dev, &mut m, &berlin_key, berlin_due).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_zone_a_device_tells_wins_over_the_operators() {
    let server = Server::start(NO_TASK).await;
    let pill = floating("pill", "20261206T080000");
    let (mut dev, mut m) = account(&server, "alice", vec![pill.clone()]).await;
    let (york_key, york_due) = on_device(&pill, chrono_tz::America::New_York);
    let (berlin_key, berlin_due) = on_device(&pill, chrono_tz::Europe::Berlin);
    let rem = Reminders::open(&database(&server)).await.unwrap();
    let now = at("2026-12-06T05:00:00Z");
    webhook_in(&server, "America/New_York").await;
    rem.replicate(now).await.unwrap();
    let rows = rem.instances("alice").await.unwrap();
    assert_eq!((&rows[0].key, rows[0].due), (&york_key, york_due));

    // The laptop tells the account it reads floating times in Berlin.
    dev.push(&[m.op(Body::AccountZone {
        zone: "Europe/Berlin".into(),
    })])
    .await;
    moved_then_dismissed(&rem, now, &mut dev, &mut m, &berlin_key, berlin_due).await;
}
