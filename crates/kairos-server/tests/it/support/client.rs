//! A small WebSocket client for one device's connection to the server under
//! test. Every wait is bounded by [`WAIT`].

#![cfg_attr(not(unix), allow(dead_code, unused_imports))]

use futures_util::{SinkExt, StreamExt};
use kairos_proto::{ClientMsg, Op, SeqOp, ServerMsg, decode_server, encode};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::timeout;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;

use super::WAIT;

pub trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// One device's connection.
pub struct Client {
    pub ws: WebSocketStream<Box<dyn Io>>,
}

/// What `hello` brought: the welcome, the ops, and the caught-up head.
pub struct Hello {
    pub account: String,
    pub device: String,
    /// The size in bytes and the number of ops of each `ops` message.
    pub batches: Vec<(usize, usize)>,
    pub head: u64,
    pub snapshot: bool,
    /// The op kinds the server said it takes beyond v1's first six.
    pub features: Vec<String>,
    pub ops: Vec<SeqOp>,
    pub caught_up: u64,
}

impl Client {
    pub async fn send(&mut self, msg: &ClientMsg) {
        self.ws.send(Message::text(encode(msg))).await.unwrap();
    }

    pub async fn send_raw(&mut self, text: String) {
        self.ws.send(Message::text(text)).await.unwrap();
    }

    /// The next message (pings and pongs skipped).
    pub async fn recv(&mut self) -> ServerMsg {
        self.recv_sized().await.0
    }

    /// The next message and the size of its frame.
    pub async fn recv_sized(&mut self) -> (ServerMsg, usize) {
        loop {
            match timeout(WAIT, self.ws.next())
                .await
                .expect("no message in time")
            {
                Some(Ok(Message::Text(t))) => return (decode_server(&t).unwrap(), t.len()),
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                other => panic!("expected a message, got {other:?}"),
            }
        }
    }

    /// Reads until the close frame: (code, reason); messages before it are
    /// returned too.
    pub async fn closed(&mut self) -> (u16, String, Vec<ServerMsg>) {
        let mut before = Vec::new();
        loop {
            match timeout(WAIT, self.ws.next())
                .await
                .expect("no close in time")
            {
                Some(Ok(Message::Close(Some(f)))) => {
                    return (f.code.into(), f.reason.to_string(), before);
                }
                Some(Ok(Message::Close(None))) => return (1005, String::new(), before),
                Some(Ok(Message::Text(t))) => before.push(decode_server(&t).unwrap()),
                Some(Ok(_)) => {}
                other => panic!("expected a close frame, got {other:?}"),
            }
        }
    }

    /// `hello` with `cursor`, through `caught_up` (a client of v1's first
    /// release: no features).
    pub async fn hello(&mut self, cursor: u64) -> Hello {
        self.hello_with(cursor, Vec::new()).await
    }

    /// `hello` naming `features`, through `caught_up`.
    pub async fn hello_with(&mut self, cursor: u64, features: Vec<String>) -> Hello {
        self.send(&ClientMsg::Hello {
            cursor,
            client: "kairos-server tests".into(),
            features,
        })
        .await;
        let ServerMsg::Welcome {
            account,
            device,
            head,
            snapshot,
            features,
        } = self.recv().await
        else {
            panic!("no welcome")
        };
        let (mut ops, mut batches) = (Vec::new(), Vec::new());
        loop {
            let (msg, len) = self.recv_sized().await;
            match msg {
                ServerMsg::Ops { ops: batch, .. } => {
                    batches.push((len, batch.len()));
                    ops.extend(batch);
                }
                ServerMsg::CaughtUp { head: caught_up } => {
                    return Hello {
                        account,
                        device,
                        batches,
                        head,
                        snapshot,
                        features,
                        ops,
                        caught_up,
                    };
                }
                other => panic!("during catch-up: {other:?}"),
            }
        }
    }

    /// Pushes and waits for `pushed`: the seqs, in order.
    pub async fn push(&mut self, ops: &[Op]) -> Vec<u64> {
        self.send(&ClientMsg::Push { ops: ops.to_vec() }).await;
        match self.recv().await {
            ServerMsg::Pushed { results } => {
                assert_eq!(
                    results.iter().map(|r| &r.id).collect::<Vec<_>>(),
                    ops.iter().map(|o| &o.id).collect::<Vec<_>>()
                );
                results.into_iter().map(|r| r.seq).collect()
            }
            other => panic!("expected pushed, got {other:?}"),
        }
    }
}
