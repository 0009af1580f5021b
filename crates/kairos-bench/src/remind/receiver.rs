//! The webhook receiver the bench owns: a real HTTP/1.1 server on
//! 127.0.0.1:0 (keep-alive, `Content-Length` bodies) answering every POST
//! with 200 and counting it.
//!
//! Counting, as a receiver that dedupes would:
//! - a **wire duplicate** is a POST whose `Kairos-Delivery` was seen before
//!   (the same delivery sent twice, e.g. by an instance that was killed
//!   after sending and before recording, and by the one that took its
//!   claim over): the receiver drops it by that header;
//! - a **logical duplicate** is a second distinct delivery id for the same
//!   reminder (the same account and event): something no header dedupes.
//!
//! Times are the wall clock at the end of the request's body, in ms, so
//! lateness is `received − due` against the due time in the body.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::Result;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// What was received so far.
#[derive(Debug, Default)]
pub struct Tally {
    /// POSTs received.
    pub posts: u64,
    /// First receipt (ms), the body's due time (ms) and the last receipt
    /// (ms) per delivery id.
    pub first: HashMap<String, (i64, i64, i64)>,
    /// Logical reminders (account/event uid) seen, with their delivery id.
    pub logical: HashMap<String, String>,
    /// Distinct delivery ids for a reminder already delivered under another.
    pub logical_duplicates: u64,
    /// Bodies that did not say account, key and due.
    pub malformed: u64,
}

impl Tally {
    /// POSTs beyond the first of their delivery id.
    #[must_use]
    pub fn wire_duplicates(&self) -> u64 {
        self.posts - self.first.len() as u64 - self.malformed
    }
}

/// A running receiver.
pub struct Receiver {
    /// `http://127.0.0.1:PORT/hook`.
    pub url: String,
    tally: Arc<Mutex<Tally>>,
    /// Distinct deliveries so far (changes on each new one).
    pub progress: watch::Receiver<usize>,
}

impl Receiver {
    /// Starts one on a free port.
    ///
    /// # Errors
    /// No port.
    pub async fn start() -> Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}/hook", listener.local_addr()?);
        let tally = Arc::new(Mutex::new(Tally::default()));
        let (tx, progress) = watch::channel(0);
        let tx = Arc::new(tx);
        let t = Arc::clone(&tally);
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let _ = tcp.set_nodelay(true);
                tokio::spawn(serve(tcp, Arc::clone(&t), Arc::clone(&tx)));
            }
        });
        Ok(Self {
            url,
            tally,
            progress,
        })
    }

    /// Runs `f` on the tally.
    pub fn with<T>(&self, f: impl FnOnce(&Tally) -> T) -> T {
        f(&self.tally.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// `account/uid` of a body `{"account":…, "key": "CAL/UID/…", "due": …}`.
fn identify(body: &[u8]) -> Option<(String, String, i64)> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    let account = v["account"].as_str()?;
    let key = v["key"].as_str()?;
    let uid = key.split('/').nth(1)?;
    let due: chrono::DateTime<chrono::Utc> = v["due"].as_str()?.parse().ok()?;
    Some((
        format!("{account}/{uid}"),
        key.to_owned(),
        due.timestamp_millis(),
    ))
}

async fn serve(tcp: TcpStream, tally: Arc<Mutex<Tally>>, progress: Arc<watch::Sender<usize>>) {
    let (r, mut w) = tcp.into_split();
    let mut r = BufReader::new(r);
    let mut line = String::new();
    loop {
        // Request line, then headers up to the empty line.
        let (mut len, mut delivery) = (0usize, String::new());
        let mut first = true;
        loop {
            line.clear();
            match r.read_line(&mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let l = line.trim_end();
            if first {
                first = false;
                continue;
            }
            if l.is_empty() {
                break;
            }
            if let Some((name, value)) = l.split_once(':') {
                let value = value.trim();
                if name.eq_ignore_ascii_case("content-length") {
                    len = value.parse().unwrap_or(0);
                } else if name.eq_ignore_ascii_case("kairos-delivery") {
                    value.clone_into(&mut delivery);
                }
            }
        }
        let mut body = vec![0; len.min(1 << 20)];
        if r.read_exact(&mut body).await.is_err() {
            return;
        }
        let at = chrono::Utc::now().timestamp_millis();
        let distinct = {
            let mut t = tally.lock().unwrap_or_else(PoisonError::into_inner);
            t.posts += 1;
            match identify(&body) {
                Some((logical, _key, due)) if !delivery.is_empty() => {
                    if let Some(seen) = t.first.get_mut(&delivery) {
                        seen.2 = at;
                    } else {
                        t.first.insert(delivery.clone(), (at, due, at));
                        match t.logical.get(&logical) {
                            Some(other) if *other != delivery => t.logical_duplicates += 1,
                            Some(_) => {}
                            None => {
                                t.logical.insert(logical, delivery);
                            }
                        }
                    }
                }
                _ => t.malformed += 1,
            }
            t.first.len()
        };
        progress.send_replace(distinct);
        if w.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
            .await
            .is_err()
        {
            return;
        }
    }
}
