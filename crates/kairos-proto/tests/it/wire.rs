//! Frames: the documented examples decode, everything round-trips, and each
//! broken frame gets the documented close code.

use chrono::{DateTime, Utc};
use kairos_proto::{
    Body, ClientMsg, DeviceInfo, Op, ProtoError, PushResult, SeqOp, ServerMsg, close_reason,
    decode_client, decode_server, encode, ids,
};
use proptest::prelude::*;

use crate::support::{A, B, at, dismiss, history, hlc, op};

const OP: &str = r#"{"id":"d_aaaa000000000001:5","hlc":"0001764864000123.00000.d_aaaa000000000001","device":"d_aaaa000000000001","body":{"k":"reminder.dismiss","key":"9c1e/standup@x/2026-12-04T16:00:00Z/#0@745c1657"}}"#;

#[test]
fn the_documented_examples_decode() {
    for text in [
        r#"{"v":1,"t":"hello","cursor":0,"client":"kairos/0.1.0"}"#.to_owned(),
        format!(r#"{{"v":1,"t":"push","ops":[{OP}]}}"#),
        r#"{"v":1,"t":"pair"}"#.to_owned(),
        r#"{"v":1,"t":"devices"}"#.to_owned(),
        r#"{"v":1,"t":"revoke","device":"d_4f1c2a9b0e7d3c5a"}"#.to_owned(),
    ] {
        let msg = decode_client(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(encode(&msg), text, "we write what the doc shows");
    }
    for text in [
        r#"{"v":1,"t":"welcome","account":"alice","device":"d_4f1c2a9b0e7d3c5a","head":42,"snapshot":false}"#.to_owned(),
        format!(r#"{{"v":1,"t":"ops","ops":[{{"seq":88,"op":{OP}}}],"head":88}}"#),
        r#"{"v":1,"t":"caught_up","head":42}"#.to_owned(),
        r#"{"v":1,"t":"pushed","results":[{"id":"d_aaaa000000000001:17","seq":43}]}"#.to_owned(),
        r#"{"v":1,"t":"code","code":"7KQ2-M9XA-P4RT","expires_at":"2026-12-04T16:15:00Z"}"#.to_owned(),
        r#"{"v":1,"t":"device_list","devices":[{"device":"d_4f1c2a9b0e7d3c5a","name":"laptop","created_at":"2026-12-04T16:00:00Z","last_seen":null,"revoked":false,"connected":true}]}"#.to_owned(),
        r#"{"v":1,"t":"revoked","device":"d_4f1c2a9b0e7d3c5a"}"#.to_owned(),
        format!(r#"{{"v":1,"t":"joined","account":"alice","device":"d_4f1c2a9b0e7d3c5a","token":"{}"}}"#, "ab".repeat(32)),
        r#"{"v":1,"t":"error","code":"bad_message","message":"push: op 3: key is empty"}"#.to_owned(),
    ] {
        let msg = decode_server(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(encode(&msg), text, "we write what the doc shows");
    }
}

fn code_of(text: &str) -> u16 {
    decode_client(text).unwrap_err().close_code()
}

#[test]
fn an_unknown_version_is_4409_naming_both_and_is_checked_first() {
    let err = decode_client(r#"{"t":"nonsense","v":2,"cursor":"x"}"#).unwrap_err();
    assert_eq!(err.close_code(), 4409);
    assert_eq!(err.to_string(), "server speaks sync v1, device sent v2");
    let err = decode_server(r#"{"v":7,"t":"welcome"}"#).unwrap_err();
    assert_eq!(err.to_string(), "device speaks sync v1, server sent v7");
}

#[test]
fn malformed_frames_are_4400() {
    for text in [
        "",
        "garbage",
        "[1,\"pair\"]",
        r#"{"t":"pair"}"#,
        r#"{"v":"1","t":"pair"}"#,
        r#"{"v":1}"#,
        r#"{"v":1,"t":"dance"}"#,
        r#"{"v":1,"t":"welcome","account":"a","device":"d_4f1c2a9b0e7d3c5a","head":1,"snapshot":false}"#,
        r#"{"v":1,"t":"hello","cursor":-1,"client":"x"}"#,
        r#"{"v":1,"t":"hello","client":"x"}"#,
        r#"{"v":1,"t":"revoke","device":"laptop"}"#,
        r#"{"v":1,"t":"hello","cursor":0,"client":"a\u0007b"}"#,
    ] {
        assert_eq!(code_of(text), 4400, "{text}");
    }
}

fn push_of(op_json: &str) -> String {
    format!(r#"{{"v":1,"t":"push","ops":[{op_json}]}}"#)
}

#[test]
fn op_bounds_are_checked_and_named() {
    let ok = serde_json::from_str::<serde_json::Value>(OP).unwrap();
    let with = |path: &[&str], v: serde_json::Value| {
        let mut o = ok.clone();
        let mut at = &mut o;
        for p in &path[..path.len() - 1] {
            at = &mut at[*p];
        }
        at[path[path.len() - 1]] = v;
        push_of(&o.to_string())
    };
    let cases = [
        (with(&["body", "key"], "".into()), "key is empty"),
        (
            with(&["body", "key"], "x".repeat(513).into()),
            "key is 513 bytes",
        ),
        (with(&["body", "key"], "a\nb".into()), "control character"),
        (
            with(&["id"], "d_aaaa000000000001:0".into()),
            "is not d_aaaa000000000001:N",
        ),
        (
            with(&["id"], "d_bbbb000000000002:5".into()),
            "is not d_aaaa000000000001:N",
        ),
        (
            with(&["hlc"], "0001764864000123.00000.d_bbbb000000000002".into()),
            "not issued by",
        ),
        (
            with(&["device"], "d_bbbb000000000002".into()),
            "is not d_bbbb000000000002:N",
        ),
        (with(&["hlc"], "17.0.d_aaaa000000000001".into()), "hlc"),
        (
            with(
                &["body"],
                serde_json::json!({"k":"reminder.snooze","key":"k","until":"2026-12-04T17:00:00+01:00"}),
            ),
            "UTC",
        ),
        (
            with(
                &["body"],
                serde_json::json!({"k":"reminder.explode","key":"k"}),
            ),
            "unknown variant",
        ),
        (
            with(
                &["body"],
                serde_json::json!({"k":"series.put","calendar":"c","uid":"u","ics":"x".repeat(256 * 1024 + 1)}),
            ),
            "ics is",
        ),
        (
            with(
                &["body"],
                serde_json::json!({"k":"calendar.put","calendar":"c","name":"n".repeat(257)}),
            ),
            "name is 257",
        ),
        (
            with(
                &["body"],
                serde_json::json!({"k":"calendar.feed","calendar":"c","url":"ftp://x/a.ics","every":3600}),
            ),
            "is not http:// or https://",
        ),
        (
            with(
                &["body"],
                serde_json::json!({"k":"calendar.feed","calendar":"c","url":format!("https://x/{}", "a".repeat(2048)),"every":3600}),
            ),
            "url is 2058 bytes, over 2048",
        ),
        (
            with(
                &["body"],
                serde_json::json!({"k":"calendar.feed","calendar":"c","url":"https://x/a b","every":3600}),
            ),
            "whitespace",
        ),
        (
            with(
                &["body"],
                serde_json::json!({"k":"calendar.feed","calendar":"c","url":"https://x/a","every":60}),
            ),
            "every 60 s is outside 300–604800 s",
        ),
    ];
    for (text, want) in cases {
        let err = decode_client(&text).unwrap_err();
        assert_eq!(err.close_code(), 4400, "{err}");
        assert!(err.to_string().contains(want), "{err} should say {want:?}");
    }
    let twice = format!(r#"{{"v":1,"t":"push","ops":[{OP},{OP}]}}"#);
    assert!(
        decode_client(&twice)
            .unwrap_err()
            .to_string()
            .contains("appears twice")
    );
    let many: Vec<Op> = (1..=501)
        .map(|n| op(n, hlc(n, 0, A), dismiss("k")))
        .collect();
    let err = decode_client(&encode(&ClientMsg::Push { ops: many })).unwrap_err();
    assert!(err.to_string().contains("501 ops, over 500"), "{err}");
}

#[test]
fn a_calendar_feed_op_reads_with_removed_defaulting_to_false() {
    let body = serde_json::json!({"k":"calendar.feed","calendar":"c","url":"https://x.test/private-abc.ics","every":3600});
    let mut o = serde_json::from_str::<serde_json::Value>(OP).unwrap();
    o["body"] = body;
    let ClientMsg::Push { ops } = decode_client(&push_of(&o.to_string())).unwrap() else {
        panic!("a push");
    };
    assert_eq!(
        ops[0].body,
        Body::CalendarFeed {
            calendar: "c".into(),
            url: "https://x.test/private-abc.ics".into(),
            every: 3600,
            removed: false,
        }
    );
    assert_eq!(ops[0].entity(), "feed/c");
    assert_eq!(ops[0].body.feature(), Some("calendar.feed"));
    assert!(!ops[0].body.carried_by(&["calendar.work"]));
    assert!(ops[0].body.carried_by(&["calendar.work", "calendar.feed"]));
    assert!(dismiss("k").carried_by::<&str>(&[]));
}

#[test]
fn a_frame_over_one_mib_is_1009() {
    let text = format!(
        r#"{{"v":1,"t":"hello","cursor":0,"client":"{}"}}"#,
        "x".repeat(1 << 20)
    );
    let err = decode_client(&text).unwrap_err();
    assert!(matches!(err, ProtoError::TooBig { .. }));
    assert_eq!(err.close_code(), 1009);
}

#[test]
fn unknown_fields_are_ignored_within_a_major_version() {
    let msg = decode_client(r#"{"v":1,"t":"hello","cursor":3,"client":"x","later":true}"#).unwrap();
    assert_eq!(
        msg,
        ClientMsg::Hello {
            cursor: 3,
            client: "x".into(),
            features: Vec::new(),
        }
    );
}

/// A push is read straight into its ops (not through the tagged enum):
/// the same frames decode, in any field order, and the same ones fail.
#[test]
fn a_push_decodes_in_any_field_order_and_without_ops_is_4400() {
    let ops_first = format!(r#"{{"ops":[{OP}],"later":1,"t":"push","v":1}}"#);
    let ClientMsg::Push { ops } = decode_client(&ops_first).unwrap() else {
        panic!("a push");
    };
    assert_eq!(ops.len(), 1);
    assert_eq!(ops[0].id, "d_aaaa000000000001:5");
    let err = decode_client(r#"{"v":1,"t":"push"}"#).unwrap_err();
    assert_eq!(err.close_code(), 4400);
    assert!(err.to_string().contains("missing field `ops`"), "{err}");
    let err = decode_client(r#"{"v":1,"t":"push","ops":[{"id":"x"}]}"#).unwrap_err();
    assert_eq!(err.close_code(), 4400);
}

#[test]
fn close_reasons_fit_in_a_close_frame() {
    assert_eq!(close_reason("short"), "short");
    let long = "é".repeat(100);
    let cut = close_reason(&long);
    assert!(cut.len() <= 123 && long.starts_with(cut));
}

#[test]
fn pairing_codes_are_grouped_crockford_and_forgive_typing() {
    let code = ids::pairing_code(0x0FFF_FFFF_FFFF_FFFF);
    assert_eq!(code, "ZZZZ-ZZZZ-ZZZZ");
    assert_eq!(ids::pairing_code(0), "0000-0000-0000");
    let c = ids::pairing_code(0x0123_4567_89AB_CDEF);
    assert_eq!(ids::normalize_pairing_code(&c).unwrap(), c.replace('-', ""));
    assert_eq!(
        ids::normalize_pairing_code("7kq2 m9xa p4rt").unwrap(),
        "7KQ2M9XAP4RT"
    );
    assert_eq!(
        ids::normalize_pairing_code("IL0O-0000-0000").unwrap(),
        "110000000000"
    );
    assert_eq!(ids::normalize_pairing_code("7KQ2-M9XA-P4R"), None);
    assert_eq!(ids::normalize_pairing_code("7KQ2-M9XA-P4RTX"), None);
    assert_eq!(ids::normalize_pairing_code("UUUU-0000-0000"), None);
}

fn instant() -> impl Strategy<Value = DateTime<Utc>> {
    (0i64..4_000_000_000, 0u32..1_000_000_000)
        .prop_map(|(s, n)| DateTime::from_timestamp(s, n).unwrap())
}

fn client_msg() -> impl Strategy<Value = ClientMsg> {
    prop_oneof![
        (any::<u64>(), "[ -~]{0,30}").prop_map(|(cursor, client)| ClientMsg::Hello {
            cursor,
            client,
            features: vec!["calendar.work".into()],
        }),
        history().prop_map(|mut ops| {
            ops.dedup_by(|a, b| a.id == b.id);
            ClientMsg::Push { ops }
        }),
        Just(ClientMsg::Pair),
        Just(ClientMsg::Devices),
        Just(ClientMsg::Revoke { device: B.into() }),
    ]
}

fn server_msg() -> impl Strategy<Value = ServerMsg> {
    prop_oneof![
        (any::<u64>(), any::<bool>()).prop_map(|(head, snapshot)| ServerMsg::Welcome {
            account: "alice".into(),
            device: A.into(),
            head,
            snapshot,
            features: Vec::new(),
        }),
        history().prop_map(|ops| {
            let ops: Vec<SeqOp> = ops
                .into_iter()
                .enumerate()
                .map(|(i, op)| SeqOp {
                    seq: i as u64 + 1,
                    op,
                })
                .collect();
            ServerMsg::Ops {
                head: ops.len() as u64,
                ops,
            }
        }),
        any::<u64>().prop_map(|head| ServerMsg::CaughtUp { head }),
        any::<u64>().prop_map(|seq| ServerMsg::Pushed {
            results: vec![PushResult {
                id: format!("{A}:1"),
                seq
            }]
        }),
        (any::<u64>(), instant()).prop_map(|(bits, expires_at)| ServerMsg::Code {
            code: ids::pairing_code(bits),
            expires_at
        }),
        (instant(), proptest::option::of(instant()), any::<bool>()).prop_map(
            |(created_at, last_seen, revoked)| ServerMsg::DeviceList {
                devices: vec![DeviceInfo {
                    device: B.into(),
                    name: "laptop".into(),
                    created_at,
                    last_seen,
                    revoked,
                    connected: !revoked
                }]
            }
        ),
        Just(ServerMsg::Revoked { device: B.into() }),
        "[0-9a-f]{64}".prop_map(|token| ServerMsg::Joined {
            account: "a.b-c_d".into(),
            device: A.into(),
            token
        }),
        ("[a-z_]{1,20}", "\\PC{0,40}")
            .prop_map(|(code, message)| ServerMsg::Error { code, message }),
    ]
}

proptest! {
    #[test]
    fn client_messages_round_trip(msg in client_msg()) {
        prop_assert_eq!(decode_client(&encode(&msg)).unwrap(), msg);
    }

    #[test]
    fn server_messages_round_trip(msg in server_msg()) {
        prop_assert_eq!(decode_server(&encode(&msg)).unwrap(), msg);
    }

    #[test]
    fn snooze_instants_round_trip_through_the_wire(until in instant()) {
        let msg = ClientMsg::Push {
            ops: vec![op(1, hlc(1, 0, A), Body::ReminderSnooze { key: "k".into(), until })],
        };
        prop_assert_eq!(decode_client(&encode(&msg)).unwrap(), msg);
    }
}

#[test]
fn instants_are_written_in_utc_with_z() {
    let msg = ClientMsg::Push {
        ops: vec![op(1, hlc(1, 0, A), crate::support::snooze("k", 900))],
    };
    assert!(
        encode(&msg).contains(r#""until":"2025-12-04T16:15:00Z""#),
        "{}",
        encode(&msg)
    );
    let _ = at(0);
}
