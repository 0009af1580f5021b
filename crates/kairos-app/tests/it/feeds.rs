//! ICS subscriptions as the desktop does them (`Feeds`), against a real
//! HTTP server the test owns on 127.0.0.1:0 and a real SQLite file.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use kairos_app::api::{ErrorKind, RangeQuery, SubscribeRequest};
use kairos_app::{App, Feeds};

use crate::{app, cal, create, draft, t};

/// What the server answers: status, `Content-Type`, body.
type Answer = Arc<Mutex<(u16, &'static str, String)>>;

/// A one-request-per-connection HTTP/1.1 server on its own thread,
/// answering every request with the current [`Answer`]. Ends with the
/// test process.
fn serve(answer: &Answer) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let answer = Arc::clone(answer);
    std::thread::spawn(move || {
        for sock in listener.incoming() {
            let Ok(mut sock) = sock else { return };
            let mut buf = Vec::new();
            let mut chunk = [0u8; 4096];
            while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                match sock.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                }
            }
            let (status, ctype, body) = answer.lock().expect("lock").clone();
            let head = format!(
                "HTTP/1.1 {status} X\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = sock.write_all(head.as_bytes());
            let _ = sock.write_all(body.as_bytes());
        }
    });
    base
}

fn feed(summaries: &[(&str, &str)]) -> String {
    let mut s =
        String::from("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\nX-WR-CALNAME:Team\r\n");
    for (uid, summary) in summaries {
        s.push_str(&format!(
            "BEGIN:VEVENT\r\nUID:{uid}\r\nSUMMARY:{summary}\r\nDTSTART:20260310T090000Z\r\nDTEND:20260310T100000Z\r\nEND:VEVENT\r\n"
        ));
    }
    s.push_str("END:VCALENDAR\r\n");
    s
}

const NOW: &str = "2026-03-09T08:00:00Z";

fn titles(app: &App) -> Vec<String> {
    let week = app
        .occurrences(&RangeQuery {
            from: "2026-03-09T00:00".into(),
            to: "2026-03-16T00:00".into(),
            per_day: None,
        })
        .expect("occurrences");
    week.items.into_iter().map(|o| o.title).collect()
}

/// A server answering a feed with one event ("Standup"), and `Feeds` on `path`.
fn standup_feed(path: &std::path::Path) -> (Answer, String, Feeds) {
    let answer: Answer = Arc::new(Mutex::new((
        200,
        "text/calendar",
        feed(&[("a", "Standup")]),
    )));
    let base = serve(&answer);
    (answer, base, Feeds::new(path, chrono_tz::UTC))
}

fn req(url: String, calendar: &str) -> SubscribeRequest {
    SubscribeRequest {
        url,
        calendar: calendar.into(),
        every_minutes: 60,
    }
}

#[test]
fn a_subscription_is_fetched_at_once_listed_and_its_events_shown() {
    let (app, _d, path) = app("UTC", NOW);
    let (answer, base, feeds) = standup_feed(&path);
    // The feed's own name when none is given; webcal:// is not needed for http.
    let sub = feeds
        .add(&req(format!("{base}/team.ics"), " "), t(NOW))
        .expect("subscribe");
    assert_eq!(sub.calendar, "Team");
    assert_eq!(sub.url, format!("{base}/team.ics"));
    assert_eq!(sub.every_minutes, 60);
    assert_eq!(sub.last_refresh.as_deref(), Some("2026-03-09T08:00:00Z"));
    assert!(sub.last_error.is_none());
    assert_eq!(feeds.list().expect("list"), vec![sub.clone()]);
    assert_eq!(titles(&app), ["Standup"]);
    assert!(
        app.list_calendars()
            .expect("cals")
            .iter()
            .any(|c| c.id == sub.calendar_id && c.name == "Team")
    );

    // Refresh now: the feed changed.
    *answer.lock().expect("lock") = (200, "text/calendar", feed(&[("b", "Review")]));
    let later = t("2026-03-09T08:10:00Z");
    let r = feeds.refresh(sub.calendar_id, later).expect("refresh");
    assert_eq!(r.last_refresh.as_deref(), Some("2026-03-09T08:10:00Z"));
    assert!(r.last_error.is_none());
    assert_eq!(titles(&app), ["Review"]);
}

#[test]
fn a_failed_refresh_shows_its_error_and_keeps_the_last_good_copy() {
    let (app, _d, path) = app("UTC", NOW);
    let (answer, base, feeds) = standup_feed(&path);
    let sub = feeds
        .add(&req(format!("{base}/f.ics"), "Work feed"), t(NOW))
        .expect("subscribe");
    assert_eq!(sub.calendar, "Work feed");

    *answer.lock().expect("lock") = (200, "text/html", "<html><body>Sign in</body></html>".into());
    let r = feeds
        .refresh(sub.calendar_id, t("2026-03-09T09:00:00Z"))
        .expect("refresh");
    let err = r.last_error.expect("an error");
    assert_eq!(err.kind, ErrorKind::FeedNotCalendar);
    assert!(err.message.contains("web page (HTML)"), "{}", err.message);
    assert_eq!(r.last_ok.as_deref(), Some("2026-03-09T08:00:00Z"));
    assert_eq!(titles(&app), ["Standup"], "the last good copy stays");

    *answer.lock().expect("lock") = (503, "text/plain", "down".into());
    let r = feeds
        .refresh(sub.calendar_id, t("2026-03-09T10:00:00Z"))
        .expect("refresh");
    assert_eq!(r.last_error.map(|e| e.kind), Some(ErrorKind::FeedHttp));
    // The listing reads the same kind back from the stored text.
    assert_eq!(
        feeds.list().expect("list")[0]
            .last_error
            .as_ref()
            .map(|e| e.kind),
        Some(ErrorKind::FeedHttp)
    );
    assert_eq!(titles(&app), ["Standup"]);
}

#[test]
fn a_first_fetch_that_fails_leaves_nothing_behind() {
    let (app, _d, path) = app("UTC", NOW);
    let before = app.list_calendars().expect("cals");
    let answer: Answer = Arc::new(Mutex::new((404, "text/plain", "no".into())));
    let base = serve(&answer);
    let feeds = Feeds::new(&path, chrono_tz::UTC);
    let e = feeds
        .add(&req(format!("{base}/gone.ics"), "Gone"), t(NOW))
        .expect_err("refused");
    assert_eq!(e.kind, ErrorKind::FeedHttp);
    assert!(e.message.contains("HTTP 404"), "{}", e.message);

    *answer.lock().expect("lock") = (200, "text/calendar", String::new());
    let e = feeds
        .add(&req(format!("{base}/empty.ics"), "Gone"), t(NOW))
        .expect_err("refused");
    assert_eq!(e.kind, ErrorKind::FeedNotCalendar);

    // Nothing listens on this port any more.
    let closed = TcpListener::bind("127.0.0.1:0").expect("bind");
    let dead = format!("http://{}/x.ics", closed.local_addr().expect("addr"));
    drop(closed);
    let e = feeds.add(&req(dead, "Gone"), t(NOW)).expect_err("refused");
    assert_eq!(e.kind, ErrorKind::FeedUnreachable, "{}", e.message);

    let e = feeds
        .add(&req("ftp://example.com/a.ics".into(), "Gone"), t(NOW))
        .expect_err("refused");
    assert_eq!(e.kind, ErrorKind::FeedUrl);
    let mut bad = req(format!("{base}/a.ics"), "Gone");
    bad.every_minutes = 1;
    assert_eq!(
        feeds.add(&bad, t(NOW)).expect_err("refused").kind,
        ErrorKind::Invalid
    );

    assert_eq!(
        app.list_calendars().expect("cals"),
        before,
        "no calendar made"
    );
    assert!(
        feeds.list().expect("list").is_empty(),
        "no subscription stored"
    );
}

#[test]
fn a_calendar_with_events_of_its_own_is_not_taken_over() {
    let (mut app, _d, path) = app("UTC", NOW);
    let c = cal(&app);
    let name = app.list_calendars().expect("cals")[0].name.clone();
    create(
        &mut app,
        draft(c, "Mine", "2026-03-10T12:00", "2026-03-10T13:00", "UTC"),
        NOW,
    );
    let (_answer, base, feeds) = standup_feed(&path);
    let e = feeds
        .add(&req(format!("{base}/f.ics"), &name), t(NOW))
        .expect_err("refused");
    assert_eq!(e.kind, ErrorKind::FeedCalendarInUse);
    assert_eq!(titles(&app), ["Mine"]);
}

#[test]
fn events_of_a_subscribed_calendar_are_read_only_until_unsubscribed() {
    let (mut app, _d, path) = app("UTC", NOW);
    let (_answer, base, feeds) = standup_feed(&path);
    let sub = feeds
        .add(&req(format!("{base}/f.ics"), "Team"), t(NOW))
        .expect("subscribe");
    let ev = kairos_app::api::EventRef {
        calendar_id: sub.calendar_id,
        uid: "a".into(),
        recurrence_id: None,
    };
    let mut detail = app.get_event(&ev).expect("open");
    detail.draft.title = "Edited".into();
    let save = |app: &mut App, d: &kairos_app::api::EventDraft| {
        app.save_event(
            kairos_app::api::SaveEvent {
                event: Some(ev.clone()),
                scope: kairos_app::api::Scope::All,
                draft: d.clone(),
            },
            t(NOW),
        )
    };
    let e = save(&mut app, &detail.draft).expect_err("read-only");
    assert_eq!(e.kind, ErrorKind::Invalid);
    assert!(e.message.contains("read-only"), "{}", e.message);
    let del = kairos_app::api::DeleteEvent {
        event: ev.clone(),
        scope: kairos_app::api::Scope::All,
    };
    assert!(app.delete_event(&del, t(NOW)).is_err());
    // A new event cannot go into it either.
    let d = draft(
        sub.calendar_id,
        "New",
        "2026-03-11T09:00",
        "2026-03-11T10:00",
        "UTC",
    );
    assert!(
        app.save_event(
            kairos_app::api::SaveEvent {
                event: None,
                scope: kairos_app::api::Scope::All,
                draft: d
            },
            t(NOW)
        )
        .is_err()
    );
    assert_eq!(titles(&app), ["Standup"]);

    feeds.remove(sub.calendar_id, t(NOW)).expect("unsubscribe");
    assert!(feeds.list().expect("list").is_empty());
    assert_eq!(titles(&app), ["Standup"], "the events stay");
    save(&mut app, &detail.draft).expect("editable again");
    assert_eq!(titles(&app), ["Edited"]);
    assert_eq!(
        feeds
            .remove(sub.calendar_id, t(NOW))
            .expect_err("gone")
            .kind,
        ErrorKind::NotFound
    );
}
