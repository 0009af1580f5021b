//! One TCP connection up to its WebSocket session: TLS (optional), the
//! HTTP upgrade with the credential checked in tungstenite's callback (a
//! bad one is an HTTP 401 with a one-line body, before any frame), then
//! the session (`/v1/sync`) or the one `joined` message (`/v1/join`).

use std::future::Future;
use std::net::SocketAddr;

use kairos_proto::{Close, PATH_JOIN, PATH_SYNC, ServerMsg, ids};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::runtime::Handle;
use tokio::sync::watch;
use tokio::time::{Instant, timeout, timeout_at};
use tokio_rustls::TlsAcceptor;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::{StatusCode, header};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::{WebSocketStream, accept_hdr_async_with_config};

use crate::Ctx;
use crate::http::Prefixed;
use crate::session::{self, End, Session};
use crate::store::{Auth, Joined};

/// Tungstenite's read buffer (see `ws_config`).
const READ_BUFFER: usize = 128;

/// What the upgrade request was admitted as.
enum Admitted {
    Sync(Auth),
    Join(Joined),
}

/// Small buffers for many idle connections; the protocol's frame limit.
/// Tungstenite keeps its read buffer for the connection's life and reads
/// at most this much at a time: 128 bytes (a `hello` or a pong in one
/// read; a larger frame in more reads, each copied from what one syscall
/// of up to 64 KiB got, `http::Prefixed`) instead of 1 KiB kept idle.
fn ws_config() -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(READ_BUFFER)
        .write_buffer_size(0)
        .max_message_size(Some(kairos_proto::MAX_FRAME))
        .max_frame_size(Some(kairos_proto::MAX_FRAME))
}

/// Serves one accepted plain-TCP connection to its end. Not an `async fn`
/// itself: the task's future is `connection`'s, one level, not one
/// nested in another that keeps its own copy of the arguments.
pub(crate) fn serve(
    ctx: Ctx,
    tcp: TcpStream,
    peer: SocketAddr,
    stop: watch::Receiver<bool>,
) -> impl Future<Output = ()> + Send {
    // Pushes are small: send each frame at once (push-to-delivery latency).
    let _ = tcp.set_nodelay(true);
    connection(ctx, tcp, peer, stop)
}

/// Serves one accepted connection with TLS to its end. The TLS
/// handshake's state machine is large: boxed, it is freed when it is done
/// instead of sizing the task for its whole life. Its result is matched in
/// a statement of its own: a `match` scrutinee lives to the end of the
/// `match`, so awaiting the connection inside an arm kept room for a TLS
/// stream in every connection's task for the session's whole life
/// (1.8 KB a task, heaptrack).
pub(crate) async fn serve_tls(
    ctx: Ctx,
    acceptor: TlsAcceptor,
    tcp: TcpStream,
    peer: SocketAddr,
    stop: watch::Receiver<bool>,
) {
    let _ = tcp.set_nodelay(true);
    let accept = Box::pin(acceptor.accept(tcp));
    let conn = match timeout(ctx.config.handshake_timeout, accept).await {
        Ok(Ok(tls)) => Box::pin(connection(ctx, tls, peer, stop)),
        Ok(Err(e)) => return tracing::debug!(%peer, "TLS handshake failed: {e}"),
        Err(_) => return tracing::debug!(%peer, "TLS handshake timed out"),
    };
    conn.await;
}

/// The upgrade, then what it admitted. The upgrade's state (2.2 KB,
/// heaptrack) is a boxed future freed before the session starts, so an
/// idle session's task holds the session's state only.
async fn connection<S>(ctx: Ctx, stream: S, peer: SocketAddr, mut stop: watch::Receiver<bool>)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let Some((ws, admitted)) = Box::pin(upgrade(&ctx, stream, peer)).await else {
        return;
    };
    match admitted {
        Admitted::Sync(auth) => {
            // Made here and run by reference: an `async fn` given the
            // socket by value would hold it twice (its argument's slot and
            // the session's), as `session::run(&ctx, ws, …)` did.
            let mut session = Session::open(&ctx, ws, auth, peer);
            // What an idle session's task holds (docs/benchmarks.md).
            static SIZE: std::sync::Once = std::sync::Once::new();
            SIZE.call_once(|| tracing::debug!(bytes = size_of_val(&session), "session state"));
            let end = session.run(&mut stop).await;
            tracing::info!(%peer, device = %session.device(), "session end: {end:?}");
            session.close(end).await;
        }
        Admitted::Join(joined) => {
            tracing::info!(%peer, account = %joined.auth.account, device = %joined.auth.device, "device joined");
            let msg = ServerMsg::Joined {
                account: joined.auth.account,
                device: joined.auth.device,
                token: joined.token,
            };
            Box::pin(session::send_then_close(
                ws,
                &msg,
                End::close(Close::Normal, "joined"),
            ))
            .await;
        }
    }
}

/// The request head, the credential and the WebSocket handshake: the
/// socket and what the credential admitted, or `None` (answered, refused
/// or timed out).
async fn upgrade<S>(
    ctx: &Ctx,
    stream: S,
    peer: SocketAddr,
) -> Option<(WebSocketStream<Prefixed<S>>, Admitted)>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    // One deadline for the request head and the upgrade (slow-loris).
    let deadline = Instant::now() + ctx.config.handshake_timeout;
    let stream = match timeout_at(deadline, Box::pin(crate::http::route(ctx, stream))).await {
        Ok(Some(upgrade)) => upgrade,
        Ok(None) => return None,
        Err(_) => {
            tracing::debug!(%peer, "request head timed out");
            return None;
        }
    };
    // A sync upgrade's token is looked up here, awaited, before
    // tungstenite's handshake: its callback is synchronous, and blocking
    // a worker there (`block_in_place`) hands the runtime to another OS
    // thread per handshake (thread churn, and heap spread over malloc's
    // per-thread arenas: idle memory, docs/benchmarks.md). The callback
    // uses this answer when the request it parsed carries the same token.
    // (Boxed: the lookup's state would otherwise size this task for the
    // session's whole life.)
    let mut checked = None;
    if let (path, Some(credential)) = stream.path_and_credential()
        && path == PATH_SYNC
        && let Some(token) = bearer(&credential)
    {
        match timeout_at(deadline, Box::pin(ctx.store.authenticate(token))).await {
            Ok(found) => checked = Some((token.to_owned(), found)),
            Err(_) => {
                tracing::debug!(%peer, "upgrade timed out");
                return None;
            }
        }
    }
    let mut admitted = None;
    // The callback's error type is tungstenite's, not ours to shrink.
    #[allow(clippy::result_large_err)]
    let callback = |req: &Request, resp: Response| match admit(ctx, req, checked.take()) {
        Ok(a) => {
            admitted = Some(a);
            Ok(resp)
        }
        Err((status, why)) => {
            if status == StatusCode::UNAUTHORIZED {
                let path = if req.uri().path() == PATH_JOIN {
                    "join"
                } else {
                    "sync"
                };
                ctx.metrics.auth_failures.add(path, 1);
            }
            tracing::info!(%peer, path = req.uri().path(), status = status.as_u16(), "refused: {why}");
            Err(refusal(status, why))
        }
    };
    let handshake = Box::pin(accept_hdr_async_with_config(
        stream,
        callback,
        Some(ws_config()),
    ));
    let ws = match timeout_at(deadline, handshake).await {
        Ok(Ok(ws)) => ws,
        Ok(Err(e)) => {
            tracing::debug!(%peer, "upgrade failed: {e}");
            return None;
        }
        Err(_) => {
            tracing::debug!(%peer, "upgrade timed out");
            return None;
        }
    };
    admitted.map(|a| (ws, a))
}

/// Runs a store call from the synchronous upgrade callback. The callback
/// runs on a runtime worker; `block_in_place` hands the worker's other tasks
/// elsewhere meanwhile (so the server needs the multi-thread runtime).
fn block<F: Future>(f: F) -> F::Output {
    tokio::task::block_in_place(|| Handle::current().block_on(f))
}

type Refused = (StatusCode, String);

fn unauthorized(why: &str) -> Refused {
    (StatusCode::UNAUTHORIZED, why.to_owned())
}

/// A token store lookup made before the handshake (see `upgrade`).
type Checked = (
    String,
    Result<Result<Auth, crate::store::Refusal>, crate::store::StoreError>,
);

/// The token of a `Bearer TOKEN` credential of the right form.
fn bearer(credential: &str) -> Option<&str> {
    let (scheme, token) = credential.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && ids::is_token(token)).then_some(token)
}

fn admit(ctx: &Ctx, req: &Request, checked: Option<Checked>) -> Result<Admitted, Refused> {
    let credential = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().split_once(' '))
        .map(|(scheme, value)| (scheme, value.trim()));
    let internal = |e: crate::store::StoreError| {
        tracing::error!("store: {e}");
        (
            StatusCode::SERVICE_UNAVAILABLE,
            "server error, try again later".to_owned(),
        )
    };
    match req.uri().path() {
        PATH_SYNC => {
            let token = match credential {
                Some((s, t)) if s.eq_ignore_ascii_case("bearer") => t,
                _ => return Err(unauthorized("expected Authorization: Bearer TOKEN")),
            };
            if !ids::is_token(token) {
                return Err(unauthorized("unknown token"));
            }
            let found = match checked {
                Some((t, found)) if t == token => found,
                _ => block(ctx.store.authenticate(token)),
            };
            match found.map_err(internal)? {
                Ok(auth) => Ok(Admitted::Sync(auth)),
                Err(refusal) => Err(unauthorized(refusal.reason())),
            }
        }
        PATH_JOIN => {
            let code = match credential {
                Some((s, c)) if s.eq_ignore_ascii_case("pairing") => c,
                _ => return Err(unauthorized("expected Authorization: Pairing CODE")),
            };
            let Some(code) = ids::normalize_pairing_code(code) else {
                return Err(unauthorized("unknown pairing code"));
            };
            let name =
                device_name(req.uri().query()).map_err(|why| (StatusCode::BAD_REQUEST, why))?;
            match block(ctx.store.join(code, name)).map_err(internal)? {
                Ok(joined) => Ok(Admitted::Join(joined)),
                Err(refusal) => Err(unauthorized(refusal.reason())),
            }
        }
        other => Err((
            StatusCode::NOT_FOUND,
            format!("no such path {other:.60}; use {PATH_SYNC} or {PATH_JOIN}"),
        )),
    }
}

/// The `name` query parameter of `/v1/join`, percent-decoded and checked.
fn device_name(query: Option<&str>) -> Result<String, String> {
    let raw = query
        .unwrap_or("")
        .split('&')
        .find_map(|kv| kv.strip_prefix("name="))
        .unwrap_or("");
    let name = percent_decode(raw).ok_or("name is not percent-encoded UTF-8")?;
    ids::check_name("name", &name)?;
    Ok(if name.is_empty() {
        "unnamed".into()
    } else {
        name
    })
}

fn percent_decode(s: &str) -> Option<String> {
    let mut out = Vec::with_capacity(s.len());
    let mut bytes = s.bytes();
    while let Some(b) = bytes.next() {
        match b {
            b'%' => {
                let hi = char::from(bytes.next()?).to_digit(16)?;
                let lo = char::from(bytes.next()?).to_digit(16)?;
                out.push(u8::try_from(hi * 16 + lo).ok()?);
            }
            b'+' => out.push(b' '),
            b => out.push(b),
        }
    }
    String::from_utf8(out).ok()
}

/// The refusal tungstenite writes instead of the 101: a one-line body.
fn refusal(status: StatusCode, why: String) -> ErrorResponse {
    let body = format!("{why}\n");
    let mut resp = ErrorResponse::new(Some(body.clone()));
    *resp.status_mut() = status;
    let headers = resp.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(
        header::CONTENT_LENGTH,
        header::HeaderValue::from(body.len()),
    );
    headers.insert(
        header::CONNECTION,
        header::HeaderValue::from_static("close"),
    );
    resp
}
