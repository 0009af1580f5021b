//! Server-side reminders under load and trouble: a backlog drains in
//! priority order without starving earlier rows; a dead instance's claims
//! go first once their lease ran out, whatever backlog is ahead of them; a destination that keeps
//! failing has its circuit opened (deliveries deferred, not burned as
//! attempts, not lost); an account over its rate waits. `now` is the
//! test's (the servers run no reminder task of their own here); the
//! metrics test runs the real task and reads `/metrics` over HTTP.

use std::time::Duration;

use kairos_proto::Body;
use kairos_server::remind::gate::Limits;
use kairos_server::remind::webhook::Poster;
use kairos_server::remind::{Channels, Options, Reminders};

use crate::receiver::{self, Receiver};
use crate::remind::{NO_TASK, at, database, webhook, with_webhook};
use crate::support::{Client, Maker, Server};

pub fn channels() -> Channels {
    Channels {
        poster: Poster::new().unwrap(),
        mailer: None,
    }
}

/// One send at a time, so the receiver sees the order they were started in.
pub fn serial(limits: Limits, batch: usize) -> Options {
    let mut o = Options::new("test".into());
    o.concurrency = 1;
    o.batch = batch;
    o.limits = limits;
    o
}

pub const NO_LIMITS: Limits = Limits {
    failures: 1_000,
    cooloff: Duration::from_secs(30),
    per_minute: 0,
};

/// A series in `calendar` with one 15-minute alarm before `start`
/// (`YYYYMMDDTHHMMSSZ`): a task with `priority`, or an event for `None`.
pub fn item(calendar: &str, uid: &str, start: &str, priority: Option<u8>) -> Body {
    let alarm = "BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT15M\r\nDESCRIPTION:x\r\nEND:VALARM";
    let ics = match priority {
        Some(p) => format!(
            "BEGIN:VTODO\r\nUID:{uid}\r\nSUMMARY:{uid}\r\nDUE:{start}\r\nPRIORITY:{p}\r\n{alarm}\r\nEND:VTODO"
        ),
        None => format!(
            "BEGIN:VEVENT\r\nUID:{uid}\r\nSUMMARY:{uid}\r\nDTSTART:{start}\r\n{alarm}\r\nEND:VEVENT"
        ),
    };
    Body::SeriesPut {
        calendar: calendar.into(),
        uid: uid.into(),
        ics,
    }
}

/// An account on `server` with calendars c1 and c2 holding `items`.
pub async fn account(server: &Server, name: &str, items: Vec<Body>) -> (Client, Maker) {
    let (id, token) = server.device(name, "laptop").await;
    let mut dev = server.connect(&token).await;
    dev.hello(0).await;
    let mut m = Maker::new(&id);
    let mut ops = vec![m.calendar("c1", "Work"), m.calendar("c2", "Home")];
    ops.extend(items.into_iter().map(|b| m.op(b)));
    dev.push(&ops).await;
    (dev, m)
}

/// The summaries of the next `n` POSTs, in the order received.
async fn summaries(hook: &mut Receiver, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    for _ in 0..n {
        let post = hook.next().await;
        let body: serde_json::Value = serde_json::from_slice(&post.body).unwrap();
        out.push(body["reminder"]["summary"].as_str().unwrap().to_owned());
    }
    out
}

/// The audit trail of the instance whose summary is `uid`.
pub async fn trail(rem: &Reminders, account: &str, uid: &str) -> Vec<String> {
    let key = rem
        .instances(account)
        .await
        .unwrap()
        .into_iter()
        .find(|r| {
            r.key.starts_with(&format!("c1/{uid}/")) || r.key.starts_with(&format!("c2/{uid}/"))
        })
        .unwrap()
        .key;
    rem.why(&key)
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.2)
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_backlog_drains_by_second_then_priority_then_calendar() {
    let mut hook = receiver::start(&[], Duration::ZERO).await;
    let server = Server::start(NO_TASK).await;
    let s = "20300107T100000Z";
    let items = vec![
        item("c1", "p5", s, Some(5)),
        item("c2", "none-c2", s, None),
        item("c1", "late-p1", "20300107T100001Z", Some(1)),
        item("c2", "p1", s, Some(1)),
        item("c2", "p2-c2", s, Some(2)),
        item("c1", "none-c1", s, None),
        item("c1", "early-p9", "20300107T095959Z", Some(9)),
        item("c1", "p2-c1", s, Some(2)),
        item("c1", "p9", s, Some(9)),
    ];
    let n = items.len();
    let _dev = account(&server, "alice", items).await;
    let rem = with_webhook(&server, "alice", &hook.url, Duration::ZERO).await;
    let round = rem.replicate(at("2030-01-07T08:00:00Z")).await.unwrap();
    assert_eq!(round.deliveries, n, "{round:?}");
    // The server was down: all of them wait at 09:50. Two rows a claim, so
    // the claims' order is tested too, not only the order inside one.
    let (ch, o) = (channels(), serial(NO_LIMITS, 2));
    let mut sent = 0;
    for _ in 0..n {
        let d = rem
            .drain(at("2030-01-07T09:50:00Z"), &o, &ch)
            .await
            .unwrap();
        sent += d.sent;
        if d.claimed == 0 {
            break;
        }
    }
    assert_eq!(sent, n);
    assert_eq!(
        summaries(&mut hook, n).await,
        [
            "early-p9", // its second came first: never starved
            "p1", "p2-c1", "p2-c2", "p5", "p9", "none-c1", "none-c2",
            "late-p1", // a second later, however high
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dead_instances_expired_claims_go_first_however_large_the_backlog() {
    // The dead instance's one POST is held unanswered; every later one is
    // answered at once.
    let mut hook = receiver::start(&[0], Duration::ZERO).await;
    let server = Server::start(NO_TASK).await;
    let s = "20300107T100000Z";
    let old = ["old-a", "old-b", "old-c"];
    let items = old.iter().map(|u| item("c1", u, s, None)).collect();
    let (mut dev, mut m) = account(&server, "alice", items).await;
    let db = database(&server);
    let rem = Reminders::open(&db).await.unwrap();
    rem.configure(webhook("alice", &hook.url, Duration::ZERO))
        .await
        .unwrap();
    rem.replicate(at("2030-01-07T08:00:00Z")).await.unwrap();
    let t0 = at("2030-01-07T09:45:00Z");

    // Instance "dead" claims the three (one batch), starts the first
    // POST and dies there: its claims stay, leased for 5 s.
    let dead = Reminders::open(&db).await.unwrap();
    let mut o = serial(NO_LIMITS, 3);
    o.owner = "dead".into();
    o.lease = Duration::from_secs(5);
    let task = tokio::spawn(async move { dead.drain(t0, &o, &channels()).await });
    assert_eq!(summaries(&mut hook, 1).await, ["old-a"]);
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());

    // Meanwhile a backlog of two batches and more, due in the same second and
    // ahead of them in priority order, is planned.
    let new = [
        "new-1", "new-2", "new-3", "new-4", "new-5", "new-6", "new-7", "new-8",
    ];
    let ops: Vec<_> = new
        .iter()
        .map(|u| m.op(item("c2", u, s, Some(1))))
        .collect();
    dev.push(&ops).await;
    let round = rem.replicate(at("2030-01-07T08:00:00Z")).await.unwrap();
    assert_eq!(round.deliveries, new.len(), "{round:?}");

    // Inside the lease the dead's rows are not claimable; once it ran out
    // the next claim takes them before the backlog ahead of them, in
    // their own order; the backlog follows in its order.
    let live = serial(NO_LIMITS, 3);
    let inside = t0 + chrono::Duration::seconds(4);
    let ch = channels();
    let d = rem.drain(inside, &live, &ch).await.unwrap();
    assert_eq!((d.claimed, d.sent), (3, 3), "{d:?}");
    assert_eq!(summaries(&mut hook, 3).await, ["new-1", "new-2", "new-3"]);
    let after = t0 + chrono::Duration::seconds(6);
    let d = rem.drain(after, &live, &ch).await.unwrap();
    assert_eq!((d.claimed, d.sent, d.duplicates), (3, 3, 0), "{d:?}");
    assert_eq!(summaries(&mut hook, 3).await, old);
    for next in [&new[3..6], &new[6..]] {
        let d = rem.drain(after, &live, &ch).await.unwrap();
        assert_eq!((d.claimed, d.sent), (next.len(), next.len()), "{d:?}");
        assert_eq!(summaries(&mut hook, next.len()).await, next);
    }
    assert_eq!(rem.drain(after, &live, &ch).await.unwrap().claimed, 0);
    let why = trail(&rem, "alice", "old-a").await;
    assert!(
        why.last()
            .unwrap()
            .starts_with("delivered by webhook (attempt 1, test)"),
        "{why:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_destination_opens_its_circuit_and_its_deliveries_wait_without_losing_attempts() {
    // Two 503s, then the destination is back.
    let mut hook = receiver::start(&[503, 503], Duration::ZERO).await;
    let mut other = receiver::start(&[], Duration::ZERO).await;
    let server = Server::start(NO_TASK).await;
    let s = "20300107T100000Z";
    let uids = ["a", "b", "c", "d"];
    let items = uids.iter().map(|u| item("c1", u, s, None)).collect();
    let _alice = account(&server, "alice", items).await;
    let _bob = account(&server, "bob", vec![item("c1", "e", s, None)]).await;
    let rem = Reminders::open(&database(&server)).await.unwrap();
    for (account, url) in [("alice", &hook.url), ("bob", &other.url)] {
        rem.configure(webhook(account, url, Duration::ZERO))
            .await
            .unwrap();
    }
    rem.replicate(at("2030-01-07T08:00:00Z")).await.unwrap();
    let limits = Limits {
        failures: 2,
        ..NO_LIMITS
    };
    let (ch, o) = (channels(), serial(limits, 10));
    let t0 = at("2030-01-07T09:45:00Z");
    let secs = |s: i64| t0 + chrono::Duration::seconds(s);

    let d = rem.drain(t0, &o, &ch).await.unwrap();
    assert_eq!(
        (d.retried, d.deferred, d.sent),
        (2, 2, 1),
        "two failures open alice's destination; bob's is another: {d:?}"
    );
    assert_eq!(summaries(&mut hook, 2).await, ["a", "b"]);
    assert_eq!(summaries(&mut other, 1).await, ["e"]);
    let dest = hook
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/hook")
        .to_owned();
    assert_eq!(rem.open_circuits(), [dest.as_str()]);
    let why = trail(&rem, "alice", "c").await;
    let last = why.last().unwrap();
    assert!(
        last.starts_with(&format!(
            "webhook deferred: destination {dest} circuit open until 2030-01-07T09:45:30"
        )),
        "{why:?}"
    );

    // The retries fall due at 10 s, still inside the cool-off: deferred
    // again, and nothing is sent.
    let d = rem.drain(secs(11), &o, &ch).await.unwrap();
    assert_eq!((d.claimed, d.deferred), (2, 2), "{d:?}");
    assert!(hook.try_next().is_none());

    // After it: one probe, which gets through and closes the circuit; the
    // rest follow at once, each at its own attempt count.
    let d = rem.drain(secs(31), &o, &ch).await.unwrap();
    assert_eq!((d.claimed, d.sent), (4, 4), "{d:?}");
    assert_eq!(summaries(&mut hook, 4).await, ["a", "b", "c", "d"]);
    assert!(rem.open_circuits().is_empty());
    let why = trail(&rem, "alice", "c").await;
    assert!(
        why.last()
            .unwrap()
            .starts_with("delivered by webhook (attempt 1,"),
        "{why:?}"
    );
    let why = trail(&rem, "alice", "a").await;
    assert!(
        why.last()
            .unwrap()
            .starts_with("delivered by webhook (attempt 2,"),
        "{why:?}"
    );
    let m = rem.metrics().reminders.count("webhook", "deferred_circuit");
    assert_eq!(m, 4);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_account_over_its_rate_is_deferred_not_dropped_and_others_are_not_held_up() {
    let mut hook = receiver::start(&[], Duration::ZERO).await;
    let server = Server::start(NO_TASK).await;
    let s = "20300107T100000Z";
    let items = ["a", "b", "c", "d"]
        .iter()
        .map(|u| item("c1", u, s, None))
        .collect();
    let _alice = account(&server, "alice", items).await;
    let _bob = account(&server, "bob", vec![item("c1", "e", s, None)]).await;
    let rem = Reminders::open(&database(&server)).await.unwrap();
    for account in ["alice", "bob"] {
        rem.configure(webhook(account, &hook.url, Duration::ZERO))
            .await
            .unwrap();
    }
    rem.replicate(at("2030-01-07T08:00:00Z")).await.unwrap();
    let limits = Limits {
        per_minute: 2,
        ..NO_LIMITS
    };
    let (ch, o) = (channels(), serial(limits, 10));
    let t0 = at("2030-01-07T09:45:00Z");
    let secs = |s: i64| t0 + chrono::Duration::seconds(s);

    let d = rem.drain(t0, &o, &ch).await.unwrap();
    assert_eq!((d.sent, d.deferred), (3, 2), "{d:?}");
    let mut got = summaries(&mut hook, 3).await;
    got.sort();
    assert_eq!(got, ["a", "b", "e"], "alice's first two, and bob's");
    let why = trail(&rem, "alice", "c").await;
    assert!(
        why.last().unwrap().starts_with(
            "webhook deferred: rate limit: account over 2 deliveries a minute, until 2030-01-07T09:45:30"
        ),
        "{why:?}"
    );
    // A token every 30 s: d waits for the second one, each once.
    let why = trail(&rem, "alice", "d").await;
    assert!(
        why.last().unwrap().contains("until 2030-01-07T09:46:00"),
        "{why:?}"
    );
    assert_eq!(rem.drain(secs(29), &o, &ch).await.unwrap().claimed, 0);
    let d = rem.drain(secs(31), &o, &ch).await.unwrap();
    assert_eq!((d.claimed, d.sent), (1, 1), "{d:?}");
    let d = rem.drain(secs(61), &o, &ch).await.unwrap();
    assert_eq!((d.claimed, d.sent), (1, 1), "{d:?}");
    assert_eq!(summaries(&mut hook, 2).await, ["c", "d"]);
    let why = trail(&rem, "alice", "d").await;
    assert!(
        why.last()
            .unwrap()
            .starts_with("delivered by webhook (attempt 1,"),
        "{why:?}"
    );
}
