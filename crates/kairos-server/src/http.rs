//! Plain HTTP on the sync port, for operators: `GET /healthz` (the process
//! answers), `GET /readyz` (the store answers a real query; 503 with the
//! reason otherwise) and `GET /metrics` (Prometheus text). Any other
//! request that is not a WebSocket upgrade gets a 404 (405 for a method
//! other than GET or HEAD), never a hang.
//!
//! The request head is read here, before tungstenite sees the connection
//! (tungstenite refuses a request without `Upgrade: websocket` before its
//! callback runs): an upgrade is handed on as a [`Prefixed`] stream that
//! replays the bytes read, anything else is answered and closed. The
//! caller bounds the read with the handshake timeout (slow-loris), and the
//! head is at most [`MAX_HEAD`] bytes.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};

use crate::Ctx;

/// The largest request head read (an upgrade's is a few hundred bytes).
pub(crate) const MAX_HEAD: usize = 8 * 1024;

/// How long `/readyz` waits for the store.
const READY_TIMEOUT: Duration = Duration::from_secs(2);

/// Reads the request head from `stream`: a WebSocket upgrade comes back
/// (with the head to replay); any other request is answered here and
/// `None` returned, as for a connection closed before a whole head.
pub(crate) async fn route<S>(ctx: &Ctx, mut stream: S) -> Option<Prefixed<S>>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut head = Vec::with_capacity(1024);
    let end = loop {
        let end = head.windows(4).position(|w| w == b"\r\n\r\n");
        if end.unwrap_or(head.len()) > MAX_HEAD {
            respond(
                &mut stream,
                "431 Request Header Fields Too Large",
                "text/plain",
                "request head over 8 KiB\n",
            )
            .await;
            return None;
        }
        if let Some(i) = end {
            break i;
        }
        match stream.read_buf(&mut head).await {
            Ok(0) | Err(_) => return None,
            Ok(_) => {}
        }
    };
    let text = String::from_utf8_lossy(&head[..end]);
    let mut lines = text.split("\r\n");
    let mut first = lines.next().unwrap_or("").split(' ');
    let (method, target) = (first.next().unwrap_or(""), first.next().unwrap_or(""));
    let upgrade = lines.any(|l| {
        l.split_once(':').is_some_and(|(k, v)| {
            k.trim().eq_ignore_ascii_case("upgrade") && v.to_ascii_lowercase().contains("websocket")
        })
    });
    if upgrade {
        return Some(Prefixed {
            head,
            pos: 0,
            inner: stream,
        });
    }
    let path = target.split('?').next().unwrap_or("");
    let (status, kind, body) = answer(ctx, method, path).await;
    let body = if method == "HEAD" {
        String::new()
    } else {
        body
    };
    respond(&mut stream, status, kind, &body).await;
    None
}

/// The status line, content type and body for a plain request.
async fn answer(ctx: &Ctx, method: &str, path: &str) -> (&'static str, &'static str, String) {
    const TEXT: &str = "text/plain; charset=utf-8";
    if method != "GET" && method != "HEAD" {
        return ("405 Method Not Allowed", TEXT, "only GET\n".into());
    }
    match path {
        "/healthz" => ("200 OK", TEXT, "ok\n".into()),
        "/readyz" => match tokio::time::timeout(READY_TIMEOUT, ctx.store.ping()).await {
            Ok(Ok(())) => ("200 OK", TEXT, "ready\n".into()),
            Ok(Err(e)) => {
                tracing::warn!("readyz: store: {e}");
                ("503 Service Unavailable", TEXT, format!("store: {e}\n"))
            }
            Err(_) => (
                "503 Service Unavailable",
                TEXT,
                format!("store: no answer within {READY_TIMEOUT:?}\n"),
            ),
        },
        "/metrics" => (
            "200 OK",
            "text/plain; version=0.0.4; charset=utf-8",
            ctx.metrics
                .render(ctx.hub.device_count(), ctx.store.retried_groups()),
        ),
        _ => (
            "404 Not Found",
            TEXT,
            format!(
                "no such path {path:.60}; try /healthz, /readyz, /metrics, or a WebSocket upgrade of {}\n",
                kairos_proto::PATH_SYNC
            ),
        ),
    }
}

/// Writes the answer and closes our side, then reads what the client
/// still sends until it closes (bounded by the caller's deadline): closing
/// over unread data would reset the connection and could lose the answer.
async fn respond<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    status: &str,
    kind: &str,
    body: &str,
) {
    let resp = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(resp.as_bytes()).await;
    let _ = stream.shutdown().await;
    let mut sink = [0u8; 1024];
    for _ in 0..64 {
        match stream.read(&mut sink).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
    }
}

/// A stream that first yields the bytes already read from it.
pub(crate) struct Prefixed<S> {
    /// The request head (and anything read after it), then what a read
    /// got beyond what its caller took; freed once replayed.
    head: Vec<u8>,
    pos: usize,
    inner: S,
}

impl<S> Prefixed<S> {
    /// The request's path (without its query) and the value of its
    /// `Authorization` header, from the head read (before it is replayed).
    pub(crate) fn path_and_credential(&self) -> (String, Option<String>) {
        let text = String::from_utf8_lossy(&self.head);
        let mut lines = text.split("\r\n");
        let target = lines.next().unwrap_or("").split(' ').nth(1).unwrap_or("");
        let path = target.split('?').next().unwrap_or("").to_owned();
        let credential = lines
            .take_while(|l| !l.is_empty())
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.trim().eq_ignore_ascii_case("authorization"))
            .map(|(_, v)| v.trim().to_owned());
        (path, credential)
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Prefixed<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.pos < this.head.len() {
            let n = buf.remaining().min(this.head.len() - this.pos);
            buf.put_slice(&this.head[this.pos..this.pos + n]);
            this.pos += n;
            if this.pos == this.head.len() {
                this.head = Vec::new();
                this.pos = 0;
            }
            return Poll::Ready(Ok(()));
        }
        if buf.remaining() >= SCRATCH {
            return Pin::new(&mut this.inner).poll_read(cx, buf);
        }
        // A small read (tungstenite asks for what its small buffer holds):
        // one syscall into the thread's scratch buffer, what the caller did
        // not take kept in `head` until it is read, sized to fit. An idle
        // connection keeps no read buffer here.
        SCRATCH_BUF.with(|scratch| {
            let Ok(mut scratch) = scratch.try_borrow_mut() else {
                return Pin::new(&mut this.inner).poll_read(cx, buf);
            };
            let mut read = ReadBuf::new(&mut scratch[..]);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut read))?;
            let got = read.filled();
            let n = buf.remaining().min(got.len());
            buf.put_slice(&got[..n]);
            if n < got.len() {
                this.head = got[n..].to_vec();
            }
            Poll::Ready(Ok(()))
        })
    }
}

/// The largest read a connection makes at once (through [`SCRATCH_BUF`]).
const SCRATCH: usize = 64 * 1024;

thread_local! {
    /// Each runtime thread's read buffer, shared by its connections.
    static SCRATCH_BUF: std::cell::RefCell<Box<[u8]>> =
        std::cell::RefCell::new(vec![0; SCRATCH].into_boxed_slice());
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Prefixed<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An in-memory socket that counts the reads made of it.
    struct Counted {
        data: Vec<u8>,
        pos: usize,
        reads: usize,
    }

    impl AsyncRead for Counted {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            self.reads += 1;
            let n = buf.remaining().min(self.data.len() - self.pos);
            buf.put_slice(&self.data[self.pos..self.pos + n]);
            self.pos += n;
            Poll::Ready(Ok(()))
        }
    }

    /// Tungstenite reads 128 bytes at a time: the socket is still read in
    /// one syscall's worth, every byte arrives once and in order, and
    /// nothing is kept once all was read.
    #[tokio::test]
    async fn small_reads_read_the_socket_at_once_and_keep_nothing() {
        let head = b"GET /v1/sync HTTP/1.1\r\n\r\n".to_vec();
        let data: Vec<u8> = (0..20_000u32).map(|i| (i % 251) as u8).collect();
        let mut s = Prefixed {
            head: head.clone(),
            pos: 0,
            inner: Counted {
                data: data.clone(),
                pos: 0,
                reads: 0,
            },
        };
        let mut got = Vec::new();
        let mut buf = [0u8; 128];
        loop {
            let n = s.read(&mut buf).await.expect("read");
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
        }
        assert_eq!(got, [head, data].concat());
        // One read for the 20,000 bytes, one that says the end.
        assert_eq!(s.inner.reads, 2);
        assert_eq!(s.head.capacity(), 0);
    }
}
