//! A snooze after the fallback went out (`src/remind/ack_store.rs`): the
//! person read the e-mail, snoozed the reminder on a laptop and shut it.
//! The return is a reminder too: N minutes after the snooze's end, with no
//! device acknowledging it, the fallback goes out again, once, under its
//! own delivery id; a later snooze after that return brings another; a
//! dismissal before one is due cancels it.

use std::time::Duration;

use kairos_server::remind::Options;

use crate::receiver;
use crate::remind::{NO_TASK, at, device_key, series, with_webhook};
use crate::remind_ops::{account, channels, trail};
use crate::support::Server;

#[tokio::test(flavor = "multi_thread")]
async fn a_snooze_after_the_fallback_went_out_sends_it_again_for_the_return() {
    let mut hook = receiver::start(&[], Duration::ZERO).await;
    let server = Server::start(NO_TASK).await;
    // The alarm goes off at 09:45; the fallback 5 minutes later.
    let e1 = series("e1", "20261206T100000Z");
    let k1 = device_key(&e1);
    let (mut dev, mut m) = account(&server, "alice", vec![e1]).await;
    let rem = with_webhook(&server, "alice", &hook.url, Duration::from_secs(300)).await;
    assert_eq!(
        rem.replicate(at("2026-12-06T08:00:00Z"))
            .await
            .unwrap()
            .deliveries,
        1
    );
    let (ch, o) = (channels(), Options::new("test".into()));
    let drained = |t: &'static str| {
        let (rem, o, ch) = (&rem, &o, &ch);
        async move {
            let d = rem.drain(at(t), o, ch).await.unwrap();
            (d.claimed, d.sent)
        }
    };
    assert_eq!(drained("2026-12-06T09:50:00Z").await, (1, 1), "the first");
    let first = hook.next().await;
    let body: serde_json::Value = serde_json::from_slice(&first.body).unwrap();
    assert_eq!(first.delivery, format!("alice/{k1}/webhook"));
    assert!(body.get("after_snooze").is_none(), "{body}");

    // Snoozed on the laptop after the e-mail, until 10:30.
    dev.push(&[m.snooze(&k1, at("2026-12-06T10:30:00Z"))]).await;
    let round = rem.replicate(at("2026-12-06T09:55:00Z")).await.unwrap();
    assert_eq!(round.snoozed, 1, "{round:?}");
    assert_eq!(drained("2026-12-06T10:34:59Z").await, (0, 0), "not before");
    assert_eq!(drained("2026-12-06T10:35:00Z").await, (1, 1), "the return");
    let back = hook.next().await;
    let body: serde_json::Value = serde_json::from_slice(&back.body).unwrap();
    assert_eq!(
        back.delivery,
        format!("alice/{k1}/webhook/after-snooze/2026-12-06T10:30:00Z"),
        "its own idempotency key"
    );
    assert_eq!(body["after_snooze"], "2026-12-06T10:30:00Z");
    let said = body["text"].as_str().unwrap();
    assert!(
        said.starts_with("Reminder: ")
            && said.ends_with(
                "Snoozed on a device until 2026-12-06T10:30:00Z; no device acknowledged its return."
            ),
        "{said}"
    );
    assert_eq!(body["key"], k1.as_str());

    // The same snooze seen again (another round, the op replayed) queues
    // nothing: that return went out.
    dev.push(&[m.snooze(&k1, at("2026-12-06T10:30:00Z"))]).await;
    rem.replicate(at("2026-12-06T10:36:00Z")).await.unwrap();
    assert_eq!(drained("2026-12-06T10:50:00Z").await, (0, 0), "once");

    // Snoozed again after the return went out: another return, at 11:05.
    dev.push(&[m.snooze(&k1, at("2026-12-06T11:00:00Z"))]).await;
    rem.replicate(at("2026-12-06T10:40:00Z")).await.unwrap();
    assert_eq!(drained("2026-12-06T11:05:00Z").await, (1, 1));
    let again = hook.next().await;
    assert!(
        again
            .delivery
            .ends_with("/after-snooze/2026-12-06T11:00:00Z"),
        "{}",
        again.delivery
    );

    // A third snooze, whose return is dismissed before it is due.
    dev.push(&[m.snooze(&k1, at("2026-12-06T11:30:00Z"))]).await;
    rem.replicate(at("2026-12-06T11:10:00Z")).await.unwrap();
    dev.push(&[m.dismiss(&k1)]).await;
    let round = rem.replicate(at("2026-12-06T11:31:00Z")).await.unwrap();
    assert_eq!(round.acked, 1, "{round:?}");
    assert_eq!(drained("2026-12-06T12:00:00Z").await, (0, 0), "dismissed");
    assert!(hook.try_next().is_none());

    let t = trail(&rem, "alice", "e1").await;
    assert!(
        t.iter().any(|l| l
            == "webhook fallback sent before the snooze: queued again for its return, due 2026-12-06T10:35:00+00:00"),
        "{t:?}"
    );
    assert_eq!(
        t.iter()
            .filter(|l| l.starts_with("delivered by webhook"))
            .count(),
        3,
        "{t:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_snooze_while_the_fallback_is_in_flight_queues_the_return_beside_it() {
    // e1's POST in flight succeeds, e2's fails (503): either way the
    // return goes out at the snooze's end + 5 min, and e2's failed attempt
    // is not retried (the person saw the reminder and asked for it later).
    let (mut hook, gate) = receiver::start_held(&[200, 503]).await;
    let server = Server::start(NO_TASK).await;
    let (e1, e2) = (
        series("e1", "20261206T100000Z"),
        series("e2", "20261206T110000Z"),
    );
    let (k1, k2) = (device_key(&e1), device_key(&e2));
    let (mut dev, mut m) = account(&server, "carol", vec![e1, e2]).await;
    let rem = with_webhook(&server, "carol", &hook.url, Duration::from_secs(300)).await;
    rem.replicate(at("2026-12-06T08:00:00Z")).await.unwrap();
    let (ch, o) = (channels(), Options::new("test".into()));

    for (key, fires, snoozed_at, until) in [
        (
            &k1,
            "2026-12-06T09:50:00Z",
            "2026-12-06T09:50:30Z",
            "2026-12-06T11:30:00Z",
        ),
        (
            &k2,
            "2026-12-06T10:50:00Z",
            "2026-12-06T10:50:30Z",
            "2026-12-06T11:40:00Z",
        ),
    ] {
        // The snooze is pushed and replicated while the POST is held.
        let side = async {
            let post = hook.next().await;
            dev.push(&[m.snooze(key, at(until))]).await;
            let round = rem.replicate(at(snoozed_at)).await.unwrap();
            gate.add_permits(1);
            (post, round)
        };
        let (drained, (post, round)) = tokio::join!(rem.drain(at(fires), &o, &ch), side);
        drained.unwrap();
        assert_eq!(post.delivery, format!("carol/{key}/webhook"));
        assert_eq!(round.snoozed, 1, "{round:?}");
    }
    // Where e2's retry would have been (10 s after its failure): nothing.
    assert_eq!(
        rem.drain(at("2026-12-06T11:00:00Z"), &o, &ch)
            .await
            .unwrap()
            .claimed,
        0,
        "e2 not retried"
    );
    gate.add_permits(2);
    for (key, until, back) in [
        (&k1, "2026-12-06T11:30:00Z", "2026-12-06T11:35:00Z"),
        (&k2, "2026-12-06T11:40:00Z", "2026-12-06T11:45:00Z"),
    ] {
        let d = rem.drain(at(back), &o, &ch).await.unwrap();
        assert_eq!((d.claimed, d.sent), (1, 1), "{key}'s return");
        let post = hook.next().await;
        assert_eq!(
            post.delivery,
            format!("carol/{key}/webhook/after-snooze/{until}")
        );
    }
    assert!(hook.try_next().is_none());
    let t = trail(&rem, "carol", "e2").await;
    assert!(
        t.iter().any(|l| l.ends_with(
            "not tried again: snoozed on a device while it was under way, its return is queued"
        )),
        "{t:?}"
    );
}
