//! A feed that breaks never wipes the calendar: each failure is a clear
//! error, recorded as the subscription's last error, with a backoff; the
//! last good copy stays.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration as StdDuration, Instant};

use chrono::Duration;
use kairos_feeds::{Limits, Outcome};

use crate::server::{Handler, Reply, Request, Server};
use crate::{db, event, feed, now, pending, refresher, stored, subscription, with_etag};

/// Subscribes to a good feed, then makes the server answer with `bad` and
/// refreshes: returns the error's text after checking nothing was lost.
async fn kept_after(bad: Handler, limits: Limits) -> (String, Server) {
    let good = feed(&[event("a@t", "Stand-up", "20261201T120000Z")]);
    let server = Server::start(with_etag(good, "\"v1\"")).await;
    let (_dir, mut store) = db();
    let r = refresher(limits);
    r.subscribe(
        &mut store,
        &server.url("/cal"),
        Some("Team"),
        Duration::hours(1),
        now(),
    )
    .await
    .expect("subscribe");
    let before = (stored(&store, "Team"), pending(&store));
    server.set(bad);
    // The next fetch has no validators to match: start from a clean row.
    let cal = subscription(&store, "Team").calendar;
    store
        .write(|tx| {
            tx.subscription_record(
                cal,
                kairos_store::RefreshResult::Applied {
                    etag: None,
                    last_modified: None,
                },
                now(),
                now(),
            )
        })
        .expect("reset");
    let sub = subscription(&store, "Team");
    let at = now() + Duration::minutes(10);
    let done = r.refresh(&mut store, &sub, at, 0.5).await.expect("refresh");
    let Outcome::Failed(e) = done.outcome else {
        panic!("expected a failure, got {:?}", done.outcome);
    };
    assert_eq!(
        (stored(&store, "Team"), pending(&store)),
        before,
        "last good copy kept"
    );
    let sub = subscription(&store, "Team");
    assert_eq!(sub.last_error.as_deref(), Some(e.to_string().as_str()));
    assert_eq!(sub.failures, 1);
    assert_eq!(sub.last_refresh, Some(at));
    assert_eq!(
        sub.next_at,
        at + Duration::minutes(1),
        "first retry after a minute"
    );
    (e.to_string(), server)
}

fn fixed(status: u16, ctype: &'static str, body: &'static [u8]) -> Handler {
    Arc::new(move |_: &Request| {
        Reply::Full(
            status,
            vec![("Content-Type".into(), ctype.into())],
            body.to_vec(),
        )
    })
}

#[tokio::test]
async fn a_500_is_named_and_the_calendar_kept() {
    let (e, _) = kept_after(fixed(500, "text/plain", b"oops"), Limits::default()).await;
    assert_eq!(e, "the server answered HTTP 500 Internal Server Error");
}

#[tokio::test]
async fn an_html_page_is_not_a_calendar() {
    let page = b"<!DOCTYPE html><html><body>Sign in</body></html>";
    let (e, _) = kept_after(
        fixed(200, "text/html; charset=utf-8", page),
        Limits::default(),
    )
    .await;
    assert!(
        e.starts_with("the server sent a web page (HTML), not a calendar"),
        "{e}"
    );
    assert!(e.contains("text/html"), "{e}");
}

#[tokio::test]
async fn an_empty_body_is_not_an_empty_calendar() {
    let (e, _) = kept_after(fixed(200, "text/calendar", b""), Limits::default()).await;
    assert_eq!(e, "the server sent an empty body, not a calendar");
}

#[tokio::test]
async fn garbage_is_not_a_calendar() {
    let (e, _) = kept_after(
        fixed(200, "text/calendar", b"\x00\x01 certainly not iCalendar"),
        Limits::default(),
    )
    .await;
    assert!(e.starts_with("not a calendar: "), "{e}");
}

#[tokio::test]
async fn a_redirect_loop_stops_at_the_limit() {
    let looping: Handler = Arc::new(|r: &Request| {
        let to = if r.path == "/a" { "/b" } else { "/a" };
        Reply::Full(302, vec![("Location".into(), to.into())], Vec::new())
    });
    let (e, server) = kept_after(looping, Limits::default()).await;
    assert_eq!(e, "too many redirects (more than 5; a redirect loop?)");
    // The subscribe, then the request and 5 redirects followed.
    assert_eq!(server.hits.load(Ordering::SeqCst), 1 + 6);
}

#[tokio::test]
async fn a_200_mb_body_is_stopped_at_the_limit() {
    let huge: Handler = Arc::new(|_: &Request| Reply::Endless { max: 200 << 20 });
    let limits = Limits {
        max_bytes: 32 << 20,
        ..Limits::default()
    };
    let (e, server) = kept_after(huge, limits).await;
    assert_eq!(
        e,
        "the feed is larger than the 32 MiB limit (reading stopped there)"
    );
    // The client stopped reading: the server could not send much more
    // than the limit (socket buffers), far from 200 MB.
    let sent = server.sent.load(Ordering::SeqCst);
    assert!(sent < 48 << 20, "server sent {sent} bytes");
}

#[tokio::test]
async fn a_slow_server_times_out() {
    let limits = Limits {
        timeout: StdDuration::from_secs(1),
        ..Limits::default()
    };
    let started = Instant::now();
    let (e, _) = kept_after(Arc::new(|_: &Request| Reply::Stall), limits).await;
    assert_eq!(e, "no complete answer within 1 s (timed out)");
    assert!(started.elapsed() < StdDuration::from_secs(10));
}

#[tokio::test]
async fn retry_after_is_honoured() {
    let good = feed(&[event("a@t", "Stand-up", "20261201T120000Z")]);
    let server = Server::start(with_etag(good, "\"v1\"")).await;
    let (_dir, mut store) = db();
    let r = refresher(Limits::default());
    r.subscribe(
        &mut store,
        &server.url("/cal"),
        Some("Team"),
        Duration::hours(1),
        now(),
    )
    .await
    .expect("subscribe");
    server.set(Arc::new(|_: &Request| {
        Reply::Full(
            503,
            vec![("Retry-After".into(), "600".into())],
            b"busy".to_vec(),
        )
    }));
    let sub = subscription(&store, "Team");
    let done = r
        .refresh(&mut store, &sub, now(), 0.5)
        .await
        .expect("refresh");
    assert!(matches!(done.outcome, Outcome::Failed(_)));
    assert_eq!(done.next_at, now() + Duration::seconds(600));
    assert_eq!(
        subscription(&store, "Team").next_at,
        now() + Duration::seconds(600)
    );
    // Backoff without Retry-After doubles: a second failure waits 2 min.
    server.set(fixed(500, "text/plain", b"x"));
    let sub = subscription(&store, "Team");
    let done = r
        .refresh(&mut store, &sub, now(), 0.5)
        .await
        .expect("refresh");
    assert_eq!(done.next_at, now() + Duration::minutes(2));
}

#[tokio::test]
async fn a_failed_first_fetch_stores_nothing() {
    let server = Server::start(fixed(404, "text/plain", b"no")).await;
    let (_dir, mut store) = db();
    let e = refresher(Limits::default())
        .subscribe(
            &mut store,
            &server.url("/x"),
            Some("X"),
            Duration::hours(1),
            now(),
        )
        .await
        .map(|_| ())
        .expect_err("404");
    assert_eq!(e.to_string(), "the server answered HTTP 404 Not Found");
    assert!(store.calendars().expect("calendars").is_empty());
    assert!(store.read(|r| r.subscriptions()).expect("subs").is_empty());
}
