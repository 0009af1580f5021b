//! One WebSocket connection to the server: the upgrade with its credential,
//! TLS (rustls, the web's roots plus an optional extra CA), and typed
//! send/receive with a deadline.

use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use kairos_proto::{ClientMsg, MAX_FRAME, ServerMsg, close_reason, decode_server, encode};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::{Connector, MaybeTlsStream, WebSocketStream};

use crate::SyncError;

pub(crate) type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// How `wss://` servers are trusted: the web's roots, plus a CA of the
/// person's own (PEM), e.g. for a server with a self-made certificate.
#[derive(Debug, Clone, Default)]
pub struct Tls {
    /// Extra trusted CA certificates, PEM.
    pub ca_pem: Option<String>,
}

/// `meta` key: the extra CA (PEM) trusted for `wss://`, set by `join`.
pub const CA_META: &str = "sync.ca_pem";

impl Tls {
    /// The trust stored in the database (`kairos sync join --ca`).
    ///
    /// # Errors
    /// The store cannot be read.
    pub fn stored(store: &kairos_store::Store) -> Result<Self, kairos_store::StoreError> {
        Ok(Self {
            ca_pem: store.meta_get(CA_META)?,
        })
    }

    fn client_config(&self) -> Result<rustls::ClientConfig, String> {
        kairos_tls::client_config(self.ca_pem.as_deref())
    }
}

/// `base` + `path`, checked.
pub(crate) fn url(base: &str, path: &str) -> Result<String, SyncError> {
    let b = base.trim_end_matches('/');
    if !(b.starts_with("ws://") || b.starts_with("wss://")) || b.len() < 7 {
        return Err(SyncError::BadUrl(base.to_owned()));
    }
    Ok(format!("{b}{path}"))
}

/// Opens `url` with `Authorization: auth`.
pub(crate) async fn connect(url: &str, auth: &str, tls: &Tls) -> Result<Ws, SyncError> {
    let bad = |m: String| SyncError::Connection {
        url: url.to_owned(),
        message: m,
    };
    let mut req = url
        .into_client_request()
        .map_err(|_| SyncError::BadUrl(url.to_owned()))?;
    let value = HeaderValue::from_str(auth).map_err(|e| bad(e.to_string()))?;
    req.headers_mut().insert("authorization", value);
    let config = WebSocketConfig::default()
        .read_buffer_size(8 * 1024)
        .write_buffer_size(8 * 1024)
        .max_message_size(Some(MAX_FRAME))
        .max_frame_size(Some(MAX_FRAME));
    let connector = if url.starts_with("wss://") {
        Some(Connector::Rustls(Arc::new(
            tls.client_config().map_err(bad)?,
        )))
    } else {
        Some(Connector::Plain)
    };
    let attempt =
        tokio_tungstenite::connect_async_tls_with_config(req, Some(config), true, connector);
    match tokio::time::timeout(Duration::from_secs(10), attempt).await {
        Err(_) => Err(SyncError::Timeout(10)),
        Ok(Ok((ws, _))) => Ok(ws),
        Ok(Err(tungstenite::Error::Http(resp))) => {
            let body = resp
                .body()
                .as_ref()
                .map(|b| String::from_utf8_lossy(b).trim().to_owned())
                .unwrap_or_default();
            Err(SyncError::Refused {
                url: url.to_owned(),
                status: resp.status().as_u16(),
                message: refusal_message(&resp.status().to_string(), body),
            })
        }
        Ok(Err(e)) => Err(bad(match kairos_tls::refused_certificate(&e) {
            Some(problem) => format!("TLS error: the server's certificate was refused: {problem}"),
            None => e.to_string(),
        })),
    }
}

/// The reason of a refused upgrade: the Kairos server's one-line body;
/// anything else (another web server's page) is not shown whole: it would
/// fill `kairos sync status` with HTML.
fn refusal_message(status: &str, body: String) -> String {
    if body.is_empty() {
        status.to_owned()
    } else if body.contains('\n') || body.starts_with('<') || body.len() > 200 {
        format!("{status} (not a Kairos sync server's answer: check the URL and port)")
    } else {
        body
    }
}

/// Sends one message.
pub(crate) async fn send(ws: &mut Ws, msg: &ClientMsg) -> Result<(), SyncError> {
    ws.send(Message::text(encode(msg)))
        .await
        .map_err(|e| SyncError::Connection {
            url: String::from("server"),
            message: e.to_string(),
        })
}

/// The next message, within `wait`.
pub(crate) async fn recv(ws: &mut Ws, wait: Duration) -> Result<ServerMsg, SyncError> {
    recv_with(ws, wait, false).await
}

/// The next message on an idle live session: it may be long in coming, but
/// any frame (the server's pings every 30 s) proves the connection alive
/// and restarts the wait; `silence` with nothing at all means it is dead.
pub(crate) async fn recv_live(ws: &mut Ws, silence: Duration) -> Result<ServerMsg, SyncError> {
    recv_with(ws, silence, true).await
}

async fn recv_with(
    ws: &mut Ws,
    wait: Duration,
    alive_on_any: bool,
) -> Result<ServerMsg, SyncError> {
    let mut deadline = tokio::time::Instant::now() + wait;
    loop {
        let next = tokio::time::timeout_at(deadline, ws.next())
            .await
            .map_err(|_| SyncError::Timeout(wait.as_secs()))?;
        match next {
            None => {
                return Err(SyncError::Connection {
                    url: "server".into(),
                    message: "connection closed".into(),
                });
            }
            Some(Err(e)) => {
                return Err(SyncError::Connection {
                    url: "server".into(),
                    message: e.to_string(),
                });
            }
            Some(Ok(Message::Text(t))) => {
                return match decode_server(t.as_str()) {
                    Ok(ServerMsg::Error { code, message }) => {
                        Err(SyncError::Server { code, message })
                    }
                    Ok(m) => Ok(m),
                    Err(e) => {
                        // The protocol's receiver rule holds for the device
                        // too: close with the frame's code (4409 for
                        // another version, naming both; 4400; 1009).
                        let text = e.to_string();
                        close_with(ws, e.close_code(), close_reason(&text)).await;
                        Err(SyncError::Protocol(text))
                    }
                };
            }
            Some(Ok(Message::Close(frame))) => {
                let (code, reason) = frame.map_or((1005, String::new()), |f| {
                    (u16::from(f.code), f.reason.to_string())
                });
                return Err(SyncError::Closed { code, reason });
            }
            Some(Ok(_)) => {
                if alive_on_any {
                    deadline = tokio::time::Instant::now() + wait;
                }
            }
        }
    }
}

/// Closes politely (best effort).
pub(crate) async fn close(ws: &mut Ws) {
    let _ = tokio::time::timeout(Duration::from_secs(2), ws.close(None)).await;
}

/// Closes with `code` and `reason` (best effort).
async fn close_with(ws: &mut Ws, code: u16, reason: &str) {
    let frame = CloseFrame {
        code: code.into(),
        reason: reason.into(),
    };
    let _ = tokio::time::timeout(Duration::from_secs(2), ws.close(Some(frame))).await;
}
