//! A small HTTP/1.1 server the tests control, on 127.0.0.1:0: one request
//! per connection (`Connection: close`), answered by a closure that sees
//! the request's path and headers. It counts requests and body bytes sent.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the server saw.
#[derive(Debug, Clone)]
pub struct Request {
    pub path: String,
    /// Header names in lower case.
    pub headers: BTreeMap<String, String>,
}

/// How to answer.
pub enum Reply {
    /// Status, extra headers, body.
    Full(u16, Vec<(String, String)>, Vec<u8>),
    /// 200 with a body that never ends (sent in 64 KiB chunks until the
    /// client goes away or `max` bytes went).
    Endless { max: u64 },
    /// Read the request, then never answer.
    Stall,
}

pub type Handler = Arc<dyn Fn(&Request) -> Reply + Send + Sync>;

pub struct Server {
    pub base: String,
    pub handler: Arc<Mutex<Handler>>,
    pub requests: Arc<Mutex<Vec<Request>>>,
    pub hits: Arc<AtomicUsize>,
    pub sent: Arc<AtomicU64>,
    /// Notified at each request.
    pub hit: Arc<tokio::sync::Notify>,
}

impl Server {
    pub async fn start(handler: Handler) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let server = Server {
            base,
            handler: Arc::new(Mutex::new(handler)),
            requests: Arc::default(),
            hits: Arc::default(),
            sent: Arc::default(),
            hit: Arc::default(),
        };
        let (h, reqs, hits, sent, hit) = (
            server.handler.clone(),
            server.requests.clone(),
            server.hits.clone(),
            server.sent.clone(),
            server.hit.clone(),
        );
        tokio::spawn(async move {
            loop {
                let Ok((sock, _)) = listener.accept().await else {
                    return;
                };
                let (h, reqs, hits, sent) = (h.clone(), reqs.clone(), hits.clone(), sent.clone());
                let hit = hit.clone();
                tokio::spawn(async move {
                    let _ = serve(sock, h, reqs, hits, sent, &hit).await;
                });
            }
        });
        server
    }

    pub fn set(&self, handler: Handler) {
        *self.handler.lock().expect("lock") = handler;
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn last_request(&self) -> Request {
        self.requests
            .lock()
            .expect("lock")
            .last()
            .cloned()
            .expect("a request")
    }
}

async fn serve(
    mut sock: TcpStream,
    h: Arc<Mutex<Handler>>,
    reqs: Arc<Mutex<Vec<Request>>>,
    hits: Arc<AtomicUsize>,
    sent: Arc<AtomicU64>,
    hit: &tokio::sync::Notify,
) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = sock.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let text = String::from_utf8_lossy(&buf).into_owned();
    let mut lines = text.split("\r\n");
    let path = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .unwrap_or("/")
        .to_owned();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let req = Request { path, headers };
    hits.fetch_add(1, Ordering::SeqCst);
    reqs.lock().expect("lock").push(req.clone());
    hit.notify_one();
    let handler = h.lock().expect("lock").clone();
    match handler(&req) {
        Reply::Full(status, headers, body) => {
            let mut head = format!("HTTP/1.1 {status} X\r\nConnection: close\r\n");
            for (k, v) in &headers {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            if status != 304 {
                head.push_str(&format!("Content-Length: {}\r\n", body.len()));
            }
            head.push_str("\r\n");
            sock.write_all(head.as_bytes()).await?;
            sock.write_all(&body).await?;
            sent.fetch_add(body.len() as u64, Ordering::SeqCst);
            sock.shutdown().await?;
        }
        Reply::Endless { max } => {
            sock.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/calendar\r\nConnection: close\r\n\r\n",
            )
            .await?;
            let block = vec![b'X'; 64 << 10];
            let mut total = 0u64;
            while total < max {
                sock.write_all(&block).await?;
                total += block.len() as u64;
                sent.fetch_add(block.len() as u64, Ordering::SeqCst);
            }
        }
        Reply::Stall => {
            // Hold the socket open without answering until the client gives up.
            let _ = sock.read(&mut chunk).await;
        }
    }
    Ok(())
}
