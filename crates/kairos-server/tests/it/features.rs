//! Op kinds added to v1 after its first release (`calendar.work`,
//! `calendar.feed`): the server says it takes them, and sends them only to
//! clients that named them in `hello` (an older client could not decode
//! one and would close).

use kairos_proto::{Body, FEATURE_FEED, FEATURE_WORK, FEATURES, ServerMsg};

use crate::support::{Maker, Server};

fn kinds(ops: &[kairos_proto::SeqOp]) -> Vec<&'static str> {
    ops.iter().map(|s| s.op.body.kind()).collect()
}

#[tokio::test]
async fn calendar_work_ops_reach_only_clients_that_name_the_feature() {
    let server = Server::start(&[]).await;
    let (a_id, a_token) = server.device("alice", "laptop").await;
    let (_, new_token) = server.device("alice", "desktop").await;
    let (_, old_token) = server.device("alice", "old phone").await;
    let features = vec![FEATURE_WORK.to_owned()];
    let mut a = server.connect(&a_token).await;
    let welcome = a.hello_with(0, features.clone()).await;
    assert_eq!(welcome.features, FEATURES, "the server names what it takes");
    let mut new = server.connect(&new_token).await;
    new.hello_with(0, features.clone()).await;
    let mut old = server.connect(&old_token).await;
    old.hello(0).await;

    let mut ma = Maker::new(&a_id);
    let ops = vec![
        ma.calendar("c1", "Work"),
        ma.op(Body::CalendarWork {
            calendar: "c1".into(),
            week: 0b0011_1101,
            holidays: false,
        }),
        ma.dismiss("k1"),
    ];
    assert_eq!(a.push(&ops).await, [1, 2, 3], "stored like any op");

    // Live.
    let ServerMsg::Ops { ops: got, .. } = new.recv().await else {
        panic!()
    };
    assert_eq!(
        kinds(&got),
        ["calendar.put", FEATURE_WORK, "reminder.dismiss"]
    );
    let ServerMsg::Ops { ops: got, head } = old.recv().await else {
        panic!()
    };
    assert_eq!(kinds(&got), ["calendar.put", "reminder.dismiss"]);
    assert_eq!(head, 3);

    // Catch-up from the start.
    let mut old = server.connect(&old_token).await;
    let h = old.hello(0).await;
    assert_eq!(kinds(&h.ops), ["calendar.put", "reminder.dismiss"]);
    assert_eq!(h.caught_up, 3, "past the op it was not sent");
    let mut new = server.connect(&new_token).await;
    let h = new.hello_with(0, features).await;
    assert_eq!(
        kinds(&h.ops),
        ["calendar.put", FEATURE_WORK, "reminder.dismiss"]
    );
}

#[tokio::test]
async fn calendar_feed_ops_skip_clients_of_older_builds() {
    let server = Server::start(&[]).await;
    let (a_id, a_token) = server.device("alice", "laptop").await;
    let (_, new_token) = server.device("alice", "desktop").await;
    let (_, work_token) = server.device("alice", "issue 18 build").await;
    let all: Vec<String> = FEATURES.iter().map(|f| (*f).to_owned()).collect();
    let mut a = server.connect(&a_token).await;
    a.hello_with(0, all.clone()).await;
    let mut new = server.connect(&new_token).await;
    new.hello_with(0, all.clone()).await;
    let mut older = server.connect(&work_token).await;
    older.hello_with(0, vec![FEATURE_WORK.to_owned()]).await;

    let mut ma = Maker::new(&a_id);
    let ops = vec![
        ma.calendar("c1", "Team"),
        ma.op(Body::CalendarFeed {
            calendar: "c1".into(),
            url: "https://feeds.test/private-abc.ics".into(),
            every: 3600,
            removed: false,
        }),
        ma.dismiss("k1"),
    ];
    assert_eq!(a.push(&ops).await, [1, 2, 3], "stored like any op");
    let ServerMsg::Ops { ops: got, .. } = new.recv().await else {
        panic!()
    };
    assert_eq!(
        kinds(&got),
        ["calendar.put", FEATURE_FEED, "reminder.dismiss"]
    );
    let ServerMsg::Ops { ops: got, head } = older.recv().await else {
        panic!()
    };
    assert_eq!(kinds(&got), ["calendar.put", "reminder.dismiss"]);
    assert_eq!(head, 3);
    let mut older = server.connect(&work_token).await;
    let h = older.hello_with(0, vec![FEATURE_WORK.to_owned()]).await;
    assert_eq!(kinds(&h.ops), ["calendar.put", "reminder.dismiss"]);
    assert_eq!(h.caught_up, 3, "past the op it was not sent");
}

#[tokio::test]
async fn a_calendar_work_op_with_an_empty_week_is_refused() {
    let server = Server::start(&[]).await;
    let (a_id, a_token) = server.device("alice", "laptop").await;
    let mut a = server.connect(&a_token).await;
    a.hello(0).await;
    let mut ma = Maker::new(&a_id);
    let bad = ma.op(Body::CalendarWork {
        calendar: "c1".into(),
        week: 0,
        holidays: false,
    });
    a.send(&kairos_proto::ClientMsg::Push { ops: vec![bad] })
        .await;
    let (code, reason, _) = a.closed().await;
    assert_eq!(code, 4400, "{reason}");
    assert!(reason.contains("week 0"), "names the field: {reason}");
}
