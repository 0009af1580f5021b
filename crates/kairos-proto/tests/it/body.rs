//! `Body` decoded by its `"k"` first (`src/body_de.rs`): every variant
//! comes back as it was encoded, whether `k` is the first key (read
//! straight) or not (buffered); an unknown or missing `k` is an error
//! naming it.

use kairos_proto::{Body, ClientMsg, decode_client, encode};
use proptest::prelude::*;

use crate::support::{A, at, body, hlc, op};

/// One body of every kind, with optional fields both set and left out.
fn every_kind() -> Vec<Body> {
    vec![
        Body::CalendarPut {
            calendar: "c1".into(),
            name: "Work".into(),
            color: Some("#00ff00".into()),
        },
        Body::CalendarPut {
            calendar: "c1".into(),
            name: "Work".into(),
            color: None,
        },
        Body::CalendarDelete {
            calendar: "c1".into(),
        },
        Body::SeriesPut {
            calendar: "c1".into(),
            uid: "u1".into(),
            ics: "BEGIN:VEVENT\r\nSUMMARY:a \"quoted\", k\r\nEND:VEVENT\r\n".into(),
        },
        Body::SeriesDelete {
            calendar: "c1".into(),
            uid: "u1".into(),
            caldav: false,
        },
        Body::SeriesDelete {
            calendar: "c1".into(),
            uid: "u1".into(),
            caldav: true,
        },
        Body::CalendarWork {
            calendar: "c1".into(),
            week: 31,
            holidays: true,
        },
        Body::CalendarFeed {
            calendar: "c1".into(),
            url: "https://example.org/a.ics?k=1,2".into(),
            every: 3600,
            removed: false,
        },
        Body::CalendarFeed {
            calendar: "c1".into(),
            url: "https://example.org/a.ics".into(),
            every: 3600,
            removed: true,
        },
        Body::ReminderDismiss { key: "k1".into() },
        Body::ReminderSnooze {
            key: "k1".into(),
            until: at(900),
        },
    ]
}

/// The encoding with `"k"` moved from first to last.
fn k_last(b: &Body) -> String {
    let json = serde_json::to_string(b).unwrap();
    let (k, rest) = json.split_once(',').unwrap();
    assert!(k.starts_with(r#"{"k":""#), "{json}");
    format!("{{{},{}}}", &rest[..rest.len() - 1], &k[1..])
}

fn decode(json: &str) -> Result<Body, String> {
    serde_json::from_str(json).map_err(|e| e.to_string())
}

#[test]
fn every_kind_round_trips_with_k_first_or_last() {
    let bodies = every_kind();
    let kinds: std::collections::BTreeSet<_> = bodies.iter().map(Body::kind).collect();
    assert_eq!(kinds.len(), 8, "{kinds:?}");
    for b in bodies {
        let json = serde_json::to_string(&b).unwrap();
        assert_eq!(decode(&json).as_ref(), Ok(&b), "{json}");
        let last = k_last(&b);
        assert_eq!(decode(&last).as_ref(), Ok(&b), "{last}");
        // The same inside a push, as a server reads it.
        let frame = encode(&ClientMsg::Push {
            ops: vec![op(1, hlc(1_764_864_000_000, 0, A), b.clone())],
        });
        let ClientMsg::Push { ops } = decode_client(&frame).unwrap() else {
            panic!("not a push: {frame}");
        };
        assert_eq!(ops[0].body, b, "{frame}");
    }
}

#[test]
fn fields_a_peer_does_not_know_are_ignored() {
    let b = decode(r#"{"k":"reminder.dismiss","key":"k1","extra":{"a":[1,2]}}"#);
    assert_eq!(b, Ok(Body::ReminderDismiss { key: "k1".into() }));
    let b = decode(r#"{"extra":[{}],"key":"k1","k":"reminder.dismiss"}"#);
    assert_eq!(b, Ok(Body::ReminderDismiss { key: "k1".into() }));
}

#[test]
fn an_unknown_or_missing_k_is_an_error_naming_it() {
    for json in [
        r#"{"k":"reminder.explode","key":"k1"}"#,
        r#"{"key":"k1","k":"reminder.explode"}"#,
    ] {
        let e = decode(json).unwrap_err();
        assert!(
            e.contains("unknown variant `reminder.explode`") && e.contains("`reminder.dismiss`"),
            "{json}: {e}"
        );
    }
    for json in [r#"{"key":"k1"}"#, "{}"] {
        let e = decode(json).unwrap_err();
        assert!(e.contains("missing field `k`"), "{json}: {e}");
    }
    let e = decode(r#"{"k":"reminder.snooze","key":"k1"}"#).unwrap_err();
    assert!(e.contains("missing field `until`"), "{e}");
    let e = decode(r#"{"k":7,"key":"k1"}"#).unwrap_err();
    assert!(e.contains("invalid type"), "{e}");
    let e = decode(r#""reminder.dismiss""#).unwrap_err();
    assert!(e.contains("an op body"), "{e}");
}

proptest! {
    #[test]
    fn bodies_round_trip(b in body()) {
        let json = serde_json::to_string(&b).unwrap();
        prop_assert_eq!(decode(&json), Ok(b.clone()));
        prop_assert_eq!(decode(&k_last(&b)), Ok(b));
    }
}
