//! A device as the bench plays it: `kairos-proto` messages over a
//! tokio-tungstenite client, exactly as `docs/sync-protocol.md` says —
//! `/v1/join` with `Authorization: Pairing CODE`, `/v1/sync` with
//! `Authorization: Bearer TOKEN`, `hello` → `welcome` → catch-up `ops` →
//! `caught_up`, then `push`/`pushed` and live `ops`.
//!
//! Ops are valid by `Op::validate`: ids `DEVICE:N` counting from 1, stamps
//! from the device's own [`HlcClock`], `device` the session's device.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use futures_util::{SinkExt, StreamExt};
use kairos_proto::{Body, ClientMsg, HlcClock, MAX_FRAME, Op, ServerMsg, decode_server, encode};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::wall_ms;

/// A client WebSocket.
pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// What a device keeps after joining.
#[derive(Debug, Clone)]
pub struct Creds {
    /// Its account.
    pub account: String,
    /// Its id (`d_…`).
    pub device: String,
    /// Its bearer token.
    pub token: String,
}

/// Small buffers: the bench holds up to 10,000 of these (see FINDINGS.md on
/// tungstenite's 128 KiB defaults).
fn config() -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(4 * 1024)
        .write_buffer_size(4 * 1024)
        .max_message_size(Some(MAX_FRAME))
        .max_frame_size(Some(MAX_FRAME))
}

/// Opens `base` + `path` with `Authorization: auth` (10 s at most).
///
/// # Errors
/// Refused (the HTTP status and body are in the message), or no answer.
pub async fn open(base: &str, path: &str, auth: &str) -> Result<Ws> {
    let mut req = format!("{base}{path}").into_client_request()?;
    req.headers_mut()
        .insert("authorization", HeaderValue::from_str(auth)?);
    let attempt = tokio_tungstenite::connect_async_with_config(req, Some(config()), true);
    match tokio::time::timeout(Duration::from_secs(10), attempt).await {
        Err(_) => bail!("{path}: no upgrade within 10 s"),
        Ok(Ok((ws, _))) => Ok(ws),
        Ok(Err(tungstenite::Error::Http(resp))) => {
            let body = resp
                .body()
                .as_ref()
                .map(|b| String::from_utf8_lossy(b).trim().to_owned())
                .unwrap_or_default();
            bail!("{path}: refused, HTTP {}: {body}", resp.status())
        }
        Ok(Err(e)) => bail!("{path}: {e}"),
    }
}

/// The next server message within `wait`; a close or `error` is an error.
///
/// # Errors
/// Timeout, close, transport or decoding error.
pub async fn recv<S>(ws: &mut S, wait: Duration) -> Result<ServerMsg>
where
    S: futures_util::Stream<Item = Result<Message, tungstenite::Error>> + Unpin,
{
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let next = tokio::time::timeout_at(deadline, ws.next())
            .await
            .map_err(|_| anyhow!("no message within {wait:?}"))?;
        match next {
            None => bail!("connection closed"),
            Some(Err(e)) => bail!("{e}"),
            Some(Ok(Message::Text(t))) => {
                return match decode_server(t.as_str()) {
                    Ok(ServerMsg::Error { code, message }) => {
                        bail!("server error {code}: {message}")
                    }
                    Ok(m) => Ok(m),
                    Err(e) => bail!("undecodable server message: {e}"),
                };
            }
            Some(Ok(Message::Close(f))) => {
                let (code, reason) = f.map_or((1005, String::new()), |f| {
                    (u16::from(f.code), f.reason.to_string())
                });
                bail!("closed by the server: {code} {reason}");
            }
            Some(Ok(_)) => {}
        }
    }
}

/// Sends one message.
///
/// # Errors
/// The connection broke.
pub async fn send(ws: &mut Ws, msg: &ClientMsg) -> Result<()> {
    ws.send(Message::text(encode(msg))).await?;
    Ok(())
}

/// Joins with a pairing code: the new device's credentials.
///
/// # Errors
/// Refused, or no `joined`.
pub async fn join(base: &str, code: &str, name: &str) -> Result<Creds> {
    let mut ws = open(
        base,
        &format!("{}?name={name}", kairos_proto::PATH_JOIN),
        &format!("Pairing {code}"),
    )
    .await?;
    match recv(&mut ws, Duration::from_secs(10)).await? {
        ServerMsg::Joined {
            account,
            device,
            token,
        } => {
            let _ = tokio::time::timeout(Duration::from_secs(1), ws.close(None)).await;
            Ok(Creds {
                account,
                device,
                token,
            })
        }
        m => bail!("join: expected joined, got {m:?}"),
    }
}

/// A session after `caught_up`, with the device's clock and op counter.
pub struct Session {
    /// The socket.
    pub ws: Ws,
    /// Makes its ops.
    pub stamper: Stamper,
}

impl Session {
    /// Upgrades `/v1/sync`, says hello from `cursor`, reads the catch-up.
    ///
    /// # Errors
    /// Refused, or the session does not reach `caught_up` within 60 s.
    pub async fn start(base: &str, creds: &Creds, cursor: u64) -> Result<Self> {
        let mut ws = open(
            base,
            kairos_proto::PATH_SYNC,
            &format!("Bearer {}", creds.token),
        )
        .await?;
        let hello = ClientMsg::Hello {
            cursor,
            client: "sync-bench/0.1.0".into(),
            features: Vec::new(),
        };
        send(&mut ws, &hello).await?;
        let wait = Duration::from_secs(60);
        match recv(&mut ws, wait).await.context("waiting for welcome")? {
            ServerMsg::Welcome { device, .. } if device == creds.device => {}
            m => bail!("expected welcome for {}, got {m:?}", creds.device),
        }
        let mut clock = HlcClock::new(creds.device.clone(), None);
        loop {
            match recv(&mut ws, wait).await.context("catching up")? {
                ServerMsg::Ops { ops, .. } => {
                    for o in &ops {
                        clock.observe(&o.op.hlc);
                    }
                }
                ServerMsg::CaughtUp { .. } => break,
                m => bail!("expected ops or caught_up, got {m:?}"),
            }
        }
        Ok(Self {
            ws,
            stamper: Stamper::new(clock),
        })
    }

    /// The next op of this device with `body`.
    pub fn op(&mut self, body: Body) -> Op {
        self.stamper.op(body)
    }

    /// The socket and the op maker, apart.
    #[must_use]
    pub fn into_parts(self) -> (Ws, Stamper) {
        (self.ws, self.stamper)
    }
}

/// The op numbers of this process: every op the bench makes, in any part and
/// on any connection, gets a number never used before, so parts run together
/// on one fleet never reuse a device's op id (the server would rightly answer
/// a reused id with its first seq and not store it again, which a part would
/// count as lost).
static OP_NUMBERS: AtomicU64 = AtomicU64::new(0);

/// A device's op maker: its clock; op numbers come from [`OP_NUMBERS`].
pub struct Stamper {
    /// The device's HLC.
    pub clock: HlcClock,
}

impl Stamper {
    /// A maker for the device `clock` stamps for.
    #[must_use]
    pub fn new(clock: HlcClock) -> Self {
        Self { clock }
    }

    /// The next op of this device with `body` (ids are `DEVICE:N`, N unique
    /// in this process).
    pub fn op(&mut self, body: Body) -> Op {
        let n = OP_NUMBERS.fetch_add(1, Ordering::Relaxed) + 1;
        Op::new(n, self.clock.issue(wall_ms()), body)
    }
}

/// A `reminder.dismiss` body whose key carries the bench's index `i`
/// (shaped like a real key: calendar uid / event uid / occurrence / alarm).
#[must_use]
pub fn dismiss(i: u64) -> Body {
    Body::ReminderDismiss {
        key: format!("5eedbench0000/e{i}/2026-12-04T16:00:00Z/#0@5eed0001"),
    }
}

/// The index [`dismiss`] put in a key.
#[must_use]
pub fn index_of(body: &Body) -> Option<u64> {
    let Body::ReminderDismiss { key } = body else {
        return None;
    };
    key.split('/').nth(1)?.strip_prefix('e')?.parse().ok()
}
