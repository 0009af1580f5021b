//! What one device sends cannot hurt the others: each broken or abusive
//! input closes only its own connection, with the documented code.

use std::time::{Duration, Instant};

use futures_util::SinkExt;
use kairos_proto::{ClientMsg, ServerMsg};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::timeout;
use tokio_tungstenite::tungstenite::Message;

use crate::support::{Maker, Server};

/// A server with one device of alice already in session (to check it keeps
/// working) and a second device's token.
async fn setup(args: &[&str]) -> (Server, crate::support::Client, Maker, String) {
    let server = Server::start(args).await;
    let (a_id, a_token) = server.device("alice", "laptop").await;
    let (_, b_token) = server.device("alice", "desktop").await;
    let mut a = server.connect(&a_token).await;
    a.hello(0).await;
    (server, a, Maker::new(&a_id), b_token)
}

async fn still_works(a: &mut crate::support::Client, m: &mut Maker) {
    let seqs = a.push(&[m.dismiss("still-here")]).await;
    assert_eq!(seqs.len(), 1);
}

#[tokio::test]
async fn a_frame_over_one_mib_is_closed_with_1009() {
    let (server, mut a, mut m, b_token) = setup(&[]).await;
    let mut b = server.connect(&b_token).await;
    b.hello(0).await;
    let big = format!(
        r#"{{"v":1,"t":"hello","cursor":0,"client":"{}"}}"#,
        "x".repeat(1 << 20)
    );
    b.send_raw(big).await;
    assert_eq!(b.closed().await.0, 1009);
    still_works(&mut a, &mut m).await;
}

/// The server closes on an oversized frame's header, while the device is
/// still sending the frame. It must keep reading (and dropping) the rest:
/// a socket closed over unread data is reset by the kernel, and a reset
/// device may lose the close frame that says why.
#[tokio::test]
async fn the_rest_of_an_oversized_frame_is_read_not_reset() {
    let (server, mut a, mut m, b_token) = setup(&[]).await;
    let mut b = server.connect(&b_token).await;
    b.hello(0).await;
    // A masked text frame announcing 2 MiB, written by hand in two parts.
    let len: u64 = 2 << 20;
    let mut head = vec![0x81, 0x80 | 127];
    head.extend_from_slice(&len.to_be_bytes());
    head.extend_from_slice(&[1, 2, 3, 4]);
    head.extend(std::iter::repeat_n(b'x', 1024));
    b.ws.get_mut().write_all(&head).await.unwrap();
    assert_eq!(b.closed().await.0, 1009);
    let rest = vec![b'x'; len as usize - 1024];
    let raw = b.ws.get_mut();
    raw.write_all(&rest)
        .await
        .expect("the rest of the frame is read");
    raw.shutdown().await.unwrap();
    let mut sink = Vec::new();
    let read = timeout(crate::support::WAIT, raw.read_to_end(&mut sink))
        .await
        .expect("the server closes in time");
    assert!(read.is_ok(), "a clean close, not a reset: {read:?}");
    still_works(&mut a, &mut m).await;
}

#[tokio::test]
async fn garbage_is_4400_after_an_error_message() {
    let (server, mut a, mut m, b_token) = setup(&[]).await;
    let mut b = server.connect(&b_token).await;
    b.hello(0).await;
    b.send_raw("this is not json".into()).await;
    let (code, _, before) = b.closed().await;
    assert_eq!(code, 4400);
    assert!(
        matches!(&before[..], [ServerMsg::Error { code, .. }] if code == "bad_message"),
        "{before:?}"
    );
    // Binary frames, a second hello, an unknown type: 4400 too.
    for bad in [
        Message::binary(vec![1, 2, 3]),
        Message::text(r#"{"v":1,"t":"hello","cursor":0,"client":"x"}"#),
        Message::text(r#"{"v":1,"t":"dance"}"#),
    ] {
        let mut b = server.connect(&b_token).await;
        b.hello(0).await;
        b.ws.send(bad.clone()).await.unwrap();
        assert_eq!(b.closed().await.0, 4400, "{bad:?}");
    }
    still_works(&mut a, &mut m).await;
}

#[tokio::test]
async fn an_unknown_version_is_4409_naming_both() {
    let (server, mut a, mut m, b_token) = setup(&[]).await;
    let mut b = server.connect(&b_token).await;
    b.send_raw(r#"{"v":2,"t":"hello","cursor":0,"client":"future"}"#.into())
        .await;
    let (code, reason, _) = b.closed().await;
    assert_eq!(
        (code, reason.as_str()),
        (4409, "server speaks sync v1, device sent v2")
    );
    still_works(&mut a, &mut m).await;
}

#[tokio::test]
async fn an_op_of_another_device_is_4400_and_not_stored() {
    let (server, mut a, mut m, b_token) = setup(&[]).await;
    let mut b = server.connect(&b_token).await;
    b.hello(0).await;
    // B sends an op claiming to be A's.
    b.send(&ClientMsg::Push {
        ops: vec![m.dismiss("forged")],
    })
    .await;
    let (code, reason, _) = b.closed().await;
    assert_eq!(code, 4400);
    assert!(reason.contains("another device"), "{reason}");
    // A's log holds nothing forged: the next seq is 1.
    assert_eq!(a.push(&[m.dismiss("real")]).await, [1]);
    let mut c = server.connect(&b_token).await;
    assert_eq!(c.hello(0).await.ops.len(), 1);
}

#[tokio::test]
async fn a_flood_is_4429_while_another_device_keeps_working() {
    let (server, mut a, mut m, b_token) = setup(&[]).await;
    let mut b = server.connect(&b_token).await;
    b.hello(0).await;
    let flood = tokio::spawn(async move {
        for _ in 0..1000 {
            // The server may close mid-flood: stop sending then.
            if b.ws
                .feed(Message::text(r#"{"v":1,"t":"push","ops":[]}"#))
                .await
                .is_err()
            {
                break;
            }
        }
        let _ = b.ws.flush().await;
        b.closed().await
    });
    still_works(&mut a, &mut m).await;
    let (code, reason, _) = flood.await.unwrap();
    assert_eq!(code, 4429, "{reason}");
    still_works(&mut a, &mut m).await;
}

#[tokio::test]
async fn no_hello_in_time_is_4408() {
    let (server, mut a, mut m, b_token) = setup(&["--handshake-timeout-ms", "300"]).await;
    let started = Instant::now();
    let mut b = server.connect(&b_token).await;
    let (code, reason, _) = b.closed().await;
    assert_eq!(code, 4408, "{reason}");
    assert!(started.elapsed() >= Duration::from_millis(300));
    still_works(&mut a, &mut m).await;
}

#[tokio::test]
async fn a_connection_that_answers_no_pings_is_closed_and_shown_disconnected() {
    let server = Server::start(&["--ping-ms", "100"]).await;
    let (b_id, b_token) = server.device("alice", "laptop").await;
    let mut b = server.connect(&b_token).await;
    b.hello(0).await;
    // From now on B's socket is never read, so tungstenite never answers a
    // ping: like a laptop that went to sleep. The server gives up on it and
    // closes; reading the raw socket to its end shows that.
    let mut raw = Vec::new();
    tokio::time::timeout(
        crate::support::WAIT,
        tokio::io::AsyncReadExt::read_to_end(b.ws.get_mut(), &mut raw),
    )
    .await
    .expect("the server kept a silent connection")
    .unwrap();
    // Another device, just connected, sees B as not connected.
    let (_, c_token) = server.device("alice", "desktop").await;
    let mut c = server.connect(&c_token).await;
    c.hello(0).await;
    c.send(&ClientMsg::Devices).await;
    let ServerMsg::DeviceList { devices } = c.recv().await else {
        panic!()
    };
    let b = devices.iter().find(|d| d.device == b_id).unwrap();
    assert!(!b.connected, "{devices:?}");
}
