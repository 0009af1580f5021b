//! Servers that are not the Kairos server this client speaks to: a plain
//! HTTP endpoint, something that is not HTTP, one that never answers, and
//! a Kairos server of another protocol version. Each gives a clear error
//! within a bound, never a hang.

use std::time::Instant;

use futures_util::{SinkExt, StreamExt};
use kairos_engine::sync::Identity;
use kairos_sync::{SyncError, Tls};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio::time::timeout;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;

use crate::support::{Device, WAIT, now};

/// A listener on `127.0.0.1` that hands its first connection to `serve`.
async fn endpoint<F, T>(
    serve: impl FnOnce(TcpStream) -> F + Send + 'static,
) -> (String, JoinHandle<T>)
where
    F: Future<Output = T> + Send,
    T: Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.unwrap();
        serve(tcp).await
    });
    (url, task)
}

/// Reads the upgrade request, answers `reply` raw, and closes.
async fn answer_raw(mut tcp: TcpStream, reply: &'static str) {
    let mut buf = [0u8; 4096];
    let _ = tcp.read(&mut buf).await;
    let _ = tcp.write_all(reply.as_bytes()).await;
    let _ = tcp.shutdown().await;
}

/// A device paired (as far as its database knows) with `url`.
fn paired_with(url: &str) -> Device {
    let mut d = Device::new();
    let id = Identity {
        server: url.to_owned(),
        account: "alice".into(),
        device: "d_00000000000000aa".into(),
        token: "ab".repeat(32),
    };
    kairos_engine::sync::join(&mut d.store, &id, now()).unwrap();
    d
}

/// What nginx answers for a path it does not have.
const NGINX_404: &str = "HTTP/1.1 404 Not Found\r\nServer: nginx/1.24.0\r\nContent-Type: text/html\r\n\
    Content-Length: 162\r\nConnection: close\r\n\r\n<html>\r\n<head><title>404 Not Found</title></head>\r\n\
    <body>\r\n<center><h1>404 Not Found</h1></center>\r\n<hr><center>nginx/1.24.0</center>\r\n</body>\r\n</html>\r\n";

#[tokio::test]
async fn a_web_server_that_is_not_kairos_gives_a_one_line_error_with_its_status() {
    let (url, _task) = endpoint(|tcp| answer_raw(tcp, NGINX_404)).await;
    let mut d = Device::new();
    let e = timeout(WAIT, d.join(&url, "0000-0000-0000", "x"))
        .await
        .expect("hung")
        .unwrap_err();
    let SyncError::Refused { status, .. } = &e else {
        panic!("{e:?}")
    };
    assert_eq!(*status, 404);
    let text = e.to_string();
    assert!(text.contains("HTTP 404"), "{text}");
    assert!(text.contains(&url), "names the server: {text}");
    // One line for `kairos sync status` and the CLI, not the page.
    assert!(!text.contains('\n') && text.len() < 200, "{text:?}");
    assert!(!e.is_retryable());
    assert_eq!(d.identity(), None);
}

#[tokio::test]
async fn something_that_is_not_http_gives_a_connection_error() {
    let (url, _task) = endpoint(|tcp| answer_raw(tcp, "SSH-2.0-OpenSSH_9.6\r\n")).await;
    let mut d = Device::new();
    let e = timeout(WAIT, d.join(&url, "0000-0000-0000", "x"))
        .await
        .expect("hung")
        .unwrap_err();
    assert!(matches!(e, SyncError::Connection { .. }), "{e:?}");
    assert!(e.to_string().contains(&url), "names the server: {e}");
    assert_eq!(d.identity(), None);
}

#[tokio::test]
async fn a_server_that_never_answers_the_upgrade_times_out_within_its_bound() {
    // Takes the connection and holds it, silent.
    let (url, _task) = endpoint(|tcp| async move {
        let _held = tcp;
        std::future::pending::<()>().await;
    })
    .await;
    let mut d = Device::new();
    let started = Instant::now();
    let e = timeout(WAIT, d.join(&url, "0000-0000-0000", "x"))
        .await
        .expect("hung past the client's own timeout")
        .unwrap_err();
    assert!(matches!(e, SyncError::Timeout(10)), "{e:?}");
    assert!(e.is_retryable());
    assert!(started.elapsed() < WAIT);
}

/// A WebSocket server that reads `hello` and answers `reply` (a text
/// frame, or a close); then returns the next thing the device sent.
async fn kairos_like(tcp: TcpStream, reply: Message) -> Option<Message> {
    let mut ws = tokio_tungstenite::accept_async(tcp).await.unwrap();
    let hello = timeout(WAIT, ws.next()).await.unwrap().unwrap().unwrap();
    assert!(hello.to_text().unwrap().contains("\"hello\""), "{hello:?}");
    ws.send(reply).await.unwrap();
    match timeout(WAIT, ws.next())
        .await
        .expect("the device neither closed nor went away")
    {
        Some(Ok(m)) => Some(m),
        _ => None,
    }
}

#[tokio::test]
async fn a_server_of_a_later_protocol_version_is_named_and_closed_with_4409() {
    let welcome = r#"{"v":2,"t":"welcome","account":"alice","device":"d_00000000000000aa","head":0,"snapshot":false}"#;
    let (url, task) = endpoint(move |tcp| kairos_like(tcp, Message::text(welcome))).await;
    let d = paired_with(&url);
    let e = timeout(WAIT, kairos_sync::pair(&d.store, &Tls::default()))
        .await
        .expect("hung")
        .unwrap_err();
    assert!(matches!(e, SyncError::Protocol(_)), "{e:?}");
    assert!(
        e.to_string()
            .contains("device speaks sync v1, server sent v2"),
        "{e}"
    );
    assert!(!e.is_retryable());
    // The protocol: a device that receives an unknown `v` closes with 4409.
    let sent = task.await.unwrap();
    let Some(Message::Close(Some(frame))) = &sent else {
        panic!("expected a close frame from the device, got {sent:?}")
    };
    assert_eq!(u16::from(frame.code), 4409);
    assert!(frame.reason.contains("server sent v2"), "{frame:?}");
}

#[tokio::test]
async fn a_server_that_refuses_this_protocol_version_gives_a_final_error_with_its_reason() {
    let close = Message::Close(Some(CloseFrame {
        code: 4409.into(),
        reason: "server speaks sync v2, device sent v1".into(),
    }));
    let (url, _task) = endpoint(move |tcp| kairos_like(tcp, close)).await;
    let d = paired_with(&url);
    let e = timeout(WAIT, kairos_sync::pair(&d.store, &Tls::default()))
        .await
        .expect("hung")
        .unwrap_err();
    let SyncError::Closed { code, reason } = &e else {
        panic!("{e:?}")
    };
    assert_eq!(
        (*code, reason.as_str()),
        (4409, "server speaks sync v2, device sent v1")
    );
    assert!(!e.is_retryable(), "retrying will not change the version");
}
