//! How a session ends: the `error` message, the close frame, and reading
//! until the device's own close frame.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::stream::FusedStream;
use futures_util::{SinkExt, StreamExt};
use kairos_proto::{Close, ServerMsg, close_reason, encode};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::time::timeout;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

use crate::rate::Bucket;
use crate::store::StoreError;

/// How long to wait for the device's close frame after ours.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// How a session ends.
#[derive(Debug)]
pub(crate) enum End {
    /// We close with this code; `error` (if any) is sent first.
    Close {
        code: u16,
        error: Option<&'static str>,
        reason: String,
    },
    /// The device closed, or the connection broke.
    Gone,
}

impl End {
    pub(crate) fn close(how: Close, reason: impl Into<String>) -> Self {
        let error = match how {
            Close::Normal | Close::GoingAway => None,
            other => Some(other.error_code()),
        };
        Self::Close {
            code: how.code(),
            error,
            reason: reason.into(),
        }
    }

    pub(crate) fn internal(e: &StoreError) -> Self {
        tracing::error!("store: {e}");
        Self::Close {
            code: 1011,
            error: Some("internal"),
            reason: "server error, try again later".into(),
        }
    }
}

/// Sends one message, then closes.
pub(crate) async fn send_then_close<S: AsyncRead + AsyncWrite + Unpin>(
    mut ws: WebSocketStream<S>,
    msg: &ServerMsg,
    end: End,
) {
    if ws.send(Message::text(encode(msg))).await.is_ok() {
        finish(ws, end).await;
    }
}

pub(crate) async fn finish<S: AsyncRead + AsyncWrite + Unpin>(
    mut ws: WebSocketStream<S>,
    end: End,
) {
    let End::Close {
        code,
        error,
        reason,
    } = end
    else {
        // Answers a close frame the device sent, if it did.
        let _ = ws.close(None).await;
        return;
    };
    if let Some(error) = error {
        let msg = ServerMsg::Error {
            code: error.into(),
            message: reason.clone(),
        };
        let _ = ws.send(Message::text(encode(&msg))).await;
    }
    let frame = CloseFrame {
        code: CloseCode::from(code),
        reason: close_reason(&reason).to_owned().into(),
    };
    if ws.close(Some(frame)).await.is_err() {
        return;
    }
    // Read (and drop) what the device still sends until its close frame,
    // so the kernel does not reset the connection over unread data and lose
    // our close frame. After a read error (an oversized frame: the rest of
    // it is still coming) tungstenite reads no more: drain the raw stream.
    // The error may have been returned before we got here (the session's
    // own read saw it), and then the stream is already fused and would say
    // `None` at once: that is not the device's close.
    let failed_before = ws.is_terminated();
    let _ = timeout(CLOSE_GRACE, async {
        if !failed_before {
            loop {
                match ws.next().await {
                    Some(Ok(_)) => {}
                    None => return,
                    Some(Err(_)) => break,
                }
            }
        }
        let mut buf = vec![0u8; 16 * 1024];
        while let Ok(n) = ws.get_mut().read(&mut buf).await {
            if n == 0 {
                break;
            }
        }
    })
    .await;
}

pub(crate) fn take(
    bucket: &Arc<Mutex<Bucket>>,
    f: impl FnOnce(&mut Bucket) -> bool,
) -> Result<(), End> {
    let (ok, ops) = bucket
        .lock()
        .map(|mut b| (f(&mut b), b.ops_per_sec()))
        .unwrap_or((false, kairos_proto::RATE_OPS_PER_SEC));
    if ok {
        Ok(())
    } else {
        Err(End::close(
            Close::RateLimited,
            format!(
                "over the rate limit of {} messages or {ops} ops per second",
                kairos_proto::RATE_MESSAGES_PER_SEC,
            ),
        ))
    }
}
