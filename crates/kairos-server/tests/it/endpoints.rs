//! The plain HTTP endpoints on the sync port: `/healthz`, `/readyz`,
//! `/metrics` (whose counters move as devices sync), and what any other
//! request gets: a 404 or 405, an oversized head a 431, a head that never
//! ends the handshake timeout — never a hang.

use futures_util::StreamExt;
use kairos_proto::{ClientMsg, ServerMsg};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

use crate::support::{Maker, Server, WAIT};

/// Sends `request` raw and reads the answer to its end: (status, body).
pub async fn raw(addr: &str, request: &str) -> (u16, String) {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    timeout(WAIT, tcp.read_to_end(&mut out))
        .await
        .expect("the server answers and closes in time")
        .unwrap();
    let out = String::from_utf8(out).unwrap();
    let status = out.split(' ').nth(1).unwrap().parse().unwrap();
    let body = out.split_once("\r\n\r\n").unwrap().1.to_owned();
    (status, body)
}

/// `GET path`: (status, body).
pub async fn get(addr: &str, path: &str) -> (u16, String) {
    raw(
        addr,
        &format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n"),
    )
    .await
}

/// The value of one sample line (`name` with its labels, as printed).
pub fn sample(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no sample {name} in\n{text}"))
        .parse()
        .unwrap()
}

async fn metrics(server: &Server) -> String {
    let (status, text) = get(server.addr(), "/metrics").await;
    assert_eq!(status, 200, "{text}");
    // Every line is a comment or `name{labels} value`.
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (_, value) = line.rsplit_once(' ').unwrap();
        assert!(value.parse::<f64>().is_ok(), "{line}");
    }
    text
}

/// Ends a client's session from its side and waits for the server's answer.
async fn leave(c: &mut crate::support::Client) {
    c.ws.close(None).await.unwrap();
    while let Some(Ok(_)) = timeout(WAIT, c.ws.next()).await.unwrap() {}
}

#[tokio::test]
async fn health_readiness_and_metrics_that_move_when_devices_sync() {
    let server = Server::start(&[]).await;
    assert_eq!(get(server.addr(), "/healthz").await, (200, "ok\n".into()));
    assert_eq!(get(server.addr(), "/readyz").await, (200, "ready\n".into()));
    let before = metrics(&server).await;
    assert_eq!(sample(&before, "kairos_ops_accepted_total"), 0.0);
    assert_eq!(sample(&before, "kairos_connected_devices"), 0.0);

    let (a_id, a_token) = server.device("alice", "laptop").await;
    let (_, b_token) = server.device("alice", "desktop").await;
    let (mut a, mut b) = (
        server.connect(&a_token).await,
        server.connect(&b_token).await,
    );
    a.hello(0).await;
    b.hello(0).await;
    let mut m = Maker::new(&a_id);
    let ops = [m.dismiss("k1"), m.dismiss("k2"), m.dismiss("k3")];
    assert_eq!(a.push(&ops).await, [1, 2, 3]);
    // A replay is not a new op.
    assert_eq!(a.push(&ops[..1]).await, [1]);
    let ServerMsg::Ops { ops: live, .. } = b.recv().await else {
        panic!()
    };
    assert_eq!(live.len(), 3);
    // B's session answers in order: after this, its fan-out was counted.
    b.send(&ClientMsg::Devices).await;
    assert!(matches!(b.recv().await, ServerMsg::DeviceList { .. }));
    // A third session catches up the three ops.
    let mut c = server.connect(&b_token).await;
    assert_eq!(c.hello(0).await.ops.len(), 3);
    leave(&mut c).await;
    // A bad token.
    let (status, _) = server
        .refused("/v1/sync", Some("Bearer kt_not-a-real-token"))
        .await;
    assert_eq!(status, 401);

    let text = metrics(&server).await;
    assert_eq!(sample(&text, "kairos_ops_accepted_total"), 3.0);
    assert_eq!(sample(&text, "kairos_connected_devices"), 2.0);
    assert_eq!(sample(&text, "kairos_sessions_opened_total"), 3.0);
    assert_eq!(sample(&text, "kairos_sessions_closed_total"), 1.0);
    assert_eq!(sample(&text, "kairos_catch_up_ops_total"), 3.0);
    assert_eq!(sample(&text, "kairos_fan_out_seconds_count"), 1.0);
    assert_eq!(
        sample(&text, r#"kairos_fan_out_seconds_bucket{le="+Inf"}"#),
        1.0
    );
    assert_eq!(sample(&text, "kairos_store_write_seconds_count"), 2.0);
    assert!(sample(&text, "kairos_store_write_seconds_sum") > 0.0);
    assert_eq!(
        sample(&text, r#"kairos_auth_failures_total{path="sync"}"#),
        1.0
    );

    // A push carrying another device's op is refused and counted.
    let mut other = Maker::new(&a_id);
    b.send(&ClientMsg::Push {
        ops: vec![other.dismiss("x"), other.dismiss("y")],
    })
    .await;
    assert_eq!(b.closed().await.0, kairos_proto::Close::BadMessage.code());
    let text = metrics(&server).await;
    assert_eq!(
        sample(
            &text,
            r#"kairos_ops_rejected_total{reason="foreign_device"}"#
        ),
        2.0
    );
    assert_eq!(sample(&text, "kairos_ops_accepted_total"), 3.0);
}

#[tokio::test]
async fn other_requests_get_an_answer_not_a_hang() {
    let server = Server::start(&["--handshake-timeout-ms", "500"]).await;
    let addr = server.addr();
    let (status, body) = get(addr, "/nope").await;
    assert_eq!(status, 404);
    assert!(body.contains("/healthz"), "{body}");
    let (status, _) = raw(
        addr,
        &format!("POST /metrics HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\n\r\n"),
    )
    .await;
    assert_eq!(status, 405);
    let (status, _) = raw(
        addr,
        &format!("GET /healthz HTTP/1.1\r\nX: {}\r\n\r\n", "y".repeat(9000)),
    )
    .await;
    assert_eq!(status, 431);
    // A head that never ends is dropped at the handshake timeout.
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let mut out = Vec::new();
    let n = timeout(WAIT, tcp.read_to_end(&mut out))
        .await
        .expect("closed at the handshake timeout");
    assert!(n.is_err() || out.is_empty(), "{out:?}");
    // The sync path still works, on the same port.
    let (_, token) = server.device("alice", "laptop").await;
    let mut a = server.connect(&token).await;
    assert_eq!(a.hello(0).await.caught_up, 0);
}

/// `/readyz` asks the store: a PostgreSQL database that went away is a 503
/// with the reason, while `/healthz` still answers (in either run of the
/// suite: this test makes its own database).
#[tokio::test]
async fn readyz_is_503_with_the_reason_when_the_database_is_gone() {
    let url = crate::pg::database().await;
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_pg(&dir.path().join("data"), &url, &[]).await;
    assert_eq!(get(server.addr(), "/readyz").await.0, 200);
    crate::pg::drop_database(&url).await;
    let (status, body) = get(server.addr(), "/readyz").await;
    assert_eq!(status, 503, "{body}");
    assert!(body.starts_with("store: "), "{body}");
    assert_eq!(get(server.addr(), "/healthz").await.0, 200);
}
