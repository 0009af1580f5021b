//! A webhook receiver the test owns: a real HTTP/1.1 server on
//! 127.0.0.1:0 that reports every POST on a channel and answers each with
//! the next status of its script (200 once the script is used up; 0 in the
//! script: reported, then never answered, the connection held until the
//! sender drops it, as a sender killed mid-request would); over TLS too
//! ([`start_tls`]).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustls_pki_types::pem::PemObject;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, mpsc};

/// One POST as received.
#[derive(Debug, Clone)]
pub struct Post {
    pub delivery: String,
    pub timestamp: String,
    pub signature: String,
    pub body: Vec<u8>,
}

pub struct Receiver {
    pub url: String,
    pub posts: mpsc::UnboundedReceiver<Post>,
}

/// Starts a receiver answering with `script` first, then 200, each answer
/// after `delay` (a slow receiver, so a drain takes time).
pub async fn start(script: &[u16], delay: Duration) -> Receiver {
    serve(script, delay, None).await
}

/// A receiver that answers each POST only when the test adds a permit to
/// the semaphore: a POST held in flight for as long as the test needs.
pub async fn start_held(script: &[u16]) -> (Receiver, Arc<Semaphore>) {
    let gate = Arc::new(Semaphore::new(0));
    (
        serve(script, Duration::ZERO, Some(Arc::clone(&gate))).await,
        gate,
    )
}

/// A receiver as [`start`] over TLS (`https://127.0.0.1:PORT/hook`) with
/// `cert` and `key` (PEM).
pub async fn start_tls(cert: &str, key: &str) -> Receiver {
    let certs = rustls_pki_types::CertificateDer::pem_slice_iter(cert.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = rustls_pki_types::PrivateKeyDer::from_pem_slice(key.as_bytes()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    serve_on(&[], Duration::ZERO, None, Some(Arc::new(config))).await
}

async fn serve(script: &[u16], delay: Duration, gate: Option<Arc<Semaphore>>) -> Receiver {
    serve_on(script, delay, gate, None).await
}

async fn serve_on(
    script: &[u16],
    delay: Duration,
    gate: Option<Arc<Semaphore>>,
    tls: Option<Arc<rustls::ServerConfig>>,
) -> Receiver {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let scheme = if tls.is_some() { "https" } else { "http" };
    let url = format!("{scheme}://{}/hook", listener.local_addr().unwrap());
    let script = Arc::new(Mutex::new(script.iter().copied().collect::<VecDeque<_>>()));
    let (tx, posts) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let answer = Answer {
                tx: tx.clone(),
                script: Arc::clone(&script),
                gate: gate.clone(),
                delay,
            };
            let tls = tls.clone();
            tokio::spawn(async move {
                match tls {
                    None => answer.connection(tcp).await,
                    // A client that refuses the certificate ends here.
                    Some(config) => {
                        if let Ok(stream) =
                            tokio_rustls::TlsAcceptor::from(config).accept(tcp).await
                        {
                            answer.connection(stream).await;
                        }
                    }
                }
            });
        }
    });
    Receiver { url, posts }
}

/// How one connection's POSTs are reported and answered.
struct Answer {
    tx: mpsc::UnboundedSender<Post>,
    script: Arc<Mutex<VecDeque<u16>>>,
    gate: Option<Arc<Semaphore>>,
    delay: Duration,
}

impl Answer {
    async fn connection<S: AsyncRead + AsyncWrite + Unpin>(self, stream: S) {
        let (r, mut w) = tokio::io::split(stream);
        let mut r = BufReader::new(r);
        // Keep-alive: one request after another on the connection.
        loop {
            let mut line = String::new();
            if r.read_line(&mut line).await.unwrap_or(0) == 0 {
                return;
            }
            let mut post = Post {
                delivery: String::new(),
                timestamp: String::new(),
                signature: String::new(),
                body: Vec::new(),
            };
            let mut len = 0usize;
            loop {
                let mut h = String::new();
                if r.read_line(&mut h).await.unwrap_or(0) == 0 {
                    return;
                }
                let h = h.trim_end();
                if h.is_empty() {
                    break;
                }
                let (name, value) = h.split_once(':').unwrap();
                let value = value.trim().to_owned();
                match name.to_ascii_lowercase().as_str() {
                    "content-length" => len = value.parse().unwrap(),
                    "kairos-delivery" => post.delivery = value,
                    "kairos-timestamp" => post.timestamp = value,
                    "kairos-signature" => post.signature = value,
                    _ => {}
                }
            }
            post.body = vec![0; len];
            if r.read_exact(&mut post.body).await.is_err() {
                return;
            }
            let status = self.script.lock().unwrap().pop_front().unwrap_or(200);
            if status == 0 {
                let _ = self.tx.send(post);
                let _ = r.read(&mut [0; 1]).await;
                return;
            }
            // Reported on arrival, answered `delay` later.
            let _ = self.tx.send(post);
            if !self.delay.is_zero() {
                tokio::time::sleep(self.delay).await;
            }
            if let Some(gate) = &self.gate
                && let Ok(permit) = gate.acquire().await
            {
                permit.forget();
            }
            let reply = format!("HTTP/1.1 {status} X\r\ncontent-length: 0\r\n\r\n");
            if w.write_all(reply.as_bytes()).await.is_err() {
                return;
            }
        }
    }
}

impl Receiver {
    /// The next POST, within the test's wait.
    pub async fn next(&mut self) -> Post {
        tokio::time::timeout(crate::support::WAIT, self.posts.recv())
            .await
            .expect("no POST in time")
            .unwrap()
    }

    /// Whether a POST is waiting right now (no wait).
    pub fn try_next(&mut self) -> Option<Post> {
        self.posts.try_recv().ok()
    }
}
