//! A device's session (`docs/sync-protocol.md`, "A session"): `hello` in
//! time, catch-up from the cursor (or a snapshot), then live: pushes are
//! committed in order and answered once durable, ops other devices pushed
//! arrive as they commit, and a revocation closes the session at once.

mod catch_up;
mod end;

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use futures_util::stream::FuturesOrdered;
use futures_util::{SinkExt, StreamExt};
use kairos_proto::{
    ClientFrame, ClientMsg, Close, MAX_FRAME, PushResult, PushedOp, SeqOp, ServerMsg,
    decode_client_frame, encode,
};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{broadcast, watch};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

use crate::Ctx;
use crate::hub::{Event, Member};
use crate::metrics::Rejected;
use crate::rate::Bucket;
use crate::store::{Auth, Committed, StoreError};

pub(crate) use end::{End, send_then_close};
use end::{finish, take};

/// Pushes waiting for their commit before the session stops reading.
const MAX_IN_FLIGHT: usize = 64;
/// Catch-up frames hold at most this many bytes of ops (and at least one
/// op: a larger one goes alone, under the frame limit). Small on purpose:
/// tungstenite keeps its write buffer at the size of the largest frame a
/// session sent, for as long as the session lasts, so a device that caught
/// up in 100 KiB–1 MiB frames held that much while idle afterwards. The
/// client applies them [`kairos_proto::MAX_OPS_PER_MESSAGE`] at a time all
/// the same.
const BATCH_BYTES: usize = 32 * 1024;
const _: () = assert!(BATCH_BYTES < MAX_FRAME - 64 * 1024);

type Pending = Pin<Box<dyn Future<Output = Result<Vec<PushResult>, StoreError>> + Send>>;

pub(crate) struct Session<'a, S> {
    ctx: &'a Ctx,
    ws: WebSocketStream<S>,
    auth: Auth,
    member: Member,
    /// The highest seq sent to the device (catch-up and live alike).
    sent: u64,
    /// When the device last sent a frame (pongs included).
    heard: tokio::time::Instant,
    /// Made at the first push and dropped once empty: an idle session
    /// holds no queue (two allocations and its state, ≈ 0.2 KB).
    pending: Option<Box<FuturesOrdered<Pending>>>,
    /// The op kinds added within v1 that the device's client applies
    /// (its hello's `features`, those this server knows): an older client
    /// is never sent an op of another, which it could not decode.
    features: Vec<&'static str>,
}

impl<'a, S: AsyncRead + AsyncWrite + Unpin> Session<'a, S> {
    /// A session of the device `auth` admitted, joined to the hub. Made
    /// here and run by reference (`run`, then `close`): an `async fn`
    /// taking the socket by value keeps its argument's slot beside the
    /// local it is moved into, so the connection's task held the
    /// WebSocket state twice (docs/benchmarks.md).
    pub(crate) fn open(ctx: &'a Ctx, ws: WebSocketStream<S>, auth: Auth, peer: SocketAddr) -> Self {
        let member = ctx.hub.join(&auth.account, &auth.device);
        ctx.metrics.sessions_opened.inc();
        tracing::info!(%peer, account = %auth.account, device = %auth.device, "session open");
        Session {
            ctx,
            ws,
            auth,
            member,
            sent: 0,
            pending: None,
            heard: tokio::time::Instant::now(),
            features: Vec::new(),
        }
    }

    /// The session's device.
    pub(crate) fn device(&self) -> &str {
        &self.auth.device
    }

    /// `hello`, the first catch-up, then live until the session ends.
    pub(crate) async fn run(&mut self, stop: &mut watch::Receiver<bool>) -> End {
        // Boxed: hello's state (store calls, the first catch-up) is freed
        // before the session goes live and idles.
        match Box::pin(self.hello(stop)).await {
            Ok(()) => self.live(stop).await,
            Err(end) => end,
        }
    }

    /// Leaves the hub, then closes the socket as `end` says: the boxed
    /// closing handshake, to be awaited. Not an `async fn`: its state (the
    /// session moved in, and the socket moved out of it) would be part of
    /// every connection's task for its whole life (≈ 0.9 KB).
    pub(crate) fn close(self, end: End) -> Pin<Box<impl Future<Output = ()>>> {
        let Session {
            ctx, ws, member, ..
        } = self;
        drop(member);
        ctx.metrics.sessions_closed.inc();
        Box::pin(finish(ws, end))
    }
}

/// The next queued push's results, in push order (`None` when none is
/// queued); the queue is dropped once empty.
async fn next_pushed(
    pending: &mut Option<Box<FuturesOrdered<Pending>>>,
) -> Option<Result<Vec<PushResult>, StoreError>> {
    let queue = pending.as_mut()?;
    let done = queue.next().await;
    if queue.is_empty() {
        *pending = None;
    }
    done
}

impl<S: AsyncRead + AsyncWrite + Unpin> Session<'_, S> {
    async fn send(&mut self, msg: &ServerMsg) -> Result<(), End> {
        self.ws
            .send(Message::text(encode(msg)))
            .await
            .map_err(|_| End::Gone)
    }

    /// One frame from the device: `None` for frames that carry no message.
    /// A push's ops come with their JSON text, which the store keeps.
    fn frame(
        &mut self,
        frame: Option<Result<Message, WsError>>,
    ) -> Result<Option<ClientFrame>, End> {
        self.heard = tokio::time::Instant::now();
        let text = match frame {
            None | Some(Ok(Message::Close(_))) => return Err(End::Gone),
            Some(Err(WsError::Capacity(e))) => {
                self.ctx.metrics.reject(Rejected::TooBig, 1);
                return Err(End::close(
                    Close::TooBig,
                    format!("{e}: at most {MAX_FRAME} bytes"),
                ));
            }
            Some(Err(_)) => return Err(End::Gone),
            Some(Ok(Message::Text(text))) => text,
            Some(Ok(Message::Binary(_))) => {
                take(&self.member.bucket, Bucket::take_message)?;
                return Err(End::close(
                    Close::BadMessage,
                    "binary frames are not part of the protocol",
                ));
            }
            Some(Ok(_)) => {
                take(&self.member.bucket, Bucket::take_message)?;
                return Ok(None);
            }
        };
        take(&self.member.bucket, Bucket::take_message)?;
        decode_client_frame(&text).map(Some).map_err(|e| {
            self.ctx.metrics.reject(Rejected::BadMessage, 1);
            End::close(e.close(), e.to_string())
        })
    }

    async fn live(&mut self, stop: &mut watch::Receiver<bool>) -> End {
        let every = self.ctx.config.ping_interval;
        let mut ping = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        loop {
            let step = tokio::select! {
                _ = stop.changed() => {
                    // Pushes already queued commit anyway: answer them first.
                    while let Some(done) = next_pushed(&mut self.pending).await {
                        let Ok(results) = done else { break };
                        if self.send(&ServerMsg::Pushed { results }).await.is_err() {
                            break;
                        }
                    }
                    Err(End::close(Close::GoingAway, "server shutting down"))
                }
                _ = ping.tick() => self.keepalive(every).await,
                ev = self.member.rx.recv() => self.on_event(ev).await,
                Some(done) = next_pushed(&mut self.pending), if self.in_flight() > 0 => match done {
                    Ok(results) => self.send(&ServerMsg::Pushed { results }).await,
                    Err(e) => Err(End::internal(&e)),
                },
                frame = self.ws.next(), if self.in_flight() < MAX_IN_FLIGHT => match self.frame(frame) {
                    // Boxed: the rarer messages' store calls would size
                    // the idle session's state for them.
                    Ok(Some(ClientFrame::Push(ops))) => self.on_push(ops),
                    Ok(Some(ClientFrame::Other(msg))) => Box::pin(self.on_message(msg)).await,
                    Ok(None) => Ok(()),
                    Err(end) => Err(end),
                },
            };
            if let Err(end) = step {
                return end;
            }
        }
    }

    /// Pushes waiting for their commit.
    fn in_flight(&self) -> usize {
        self.pending.as_ref().map_or(0, |p| p.len())
    }

    /// A ping, or the end of a connection that answered none of the last
    /// three: a suspended laptop's socket is not closed, it goes silent.
    async fn keepalive(&mut self, every: std::time::Duration) -> Result<(), End> {
        if self.heard.elapsed() > every * 3 {
            return Err(End::close(Close::Normal, "no answer to pings"));
        }
        self.ws
            .send(Message::Ping(Default::default()))
            .await
            .map_err(|_| End::Gone)
    }

    async fn on_event(
        &mut self,
        ev: Result<Arc<Event>, broadcast::error::RecvError>,
    ) -> Result<(), End> {
        let ev = match ev {
            Ok(ev) => ev,
            // Boxed: a rare path with store calls (see `catch_up.rs`).
            Err(broadcast::error::RecvError::Lagged(n)) => return Box::pin(self.lagged(n)).await,
            Err(broadcast::error::RecvError::Closed) => return Err(End::Gone),
        };
        match &ev.committed {
            Committed::Revoked { device, .. } if *device == self.auth.device => {
                Err(End::close(Close::Revoked, "device revoked"))
            }
            // Ops this session has not seen come before these (another
            // instance committed them): the store has them all, in order.
            Committed::Ops { prev, head, .. } if *prev > self.sent => {
                Box::pin(self.catch_up(*head, true)).await
            }
            // Another instance's commit reached the account's head.
            Committed::Head { head, .. } if *head > self.sent => {
                Box::pin(self.catch_up(*head, true)).await
            }
            // The device's own ops right after what it was sent: it has
            // them, so the next op it is sent follows on.
            Committed::Ops { from, head, .. } if *from == self.auth.device => {
                self.sent = self.sent.max(*head);
                Ok(())
            }
            Committed::Ops { ops, head, .. } => {
                let fresh: Vec<SeqOp> = ops
                    .iter()
                    .filter(|s| s.seq > self.sent && self.understands(s))
                    .cloned()
                    .collect();
                let sent = !fresh.is_empty();
                self.send_live(fresh, *head).await?;
                if sent {
                    self.ctx.metrics.fan_out.observe(ev.at.elapsed());
                }
                // Ops its client cannot decode were passed over: it has
                // everything up to `head` (these ops follow what it was sent).
                self.sent = self.sent.max(*head);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Whether the device's client can decode this op (see `features`).
    fn understands(&self, s: &SeqOp) -> bool {
        s.op.body.carried_by(&self.features)
    }

    /// Sends live ops, split so that no message is over the frame limit.
    async fn send_live(&mut self, mut ops: Vec<SeqOp>, head: u64) -> Result<(), End> {
        while !ops.is_empty() {
            let mut n = ops.len();
            let text = loop {
                let text = encode(&ServerMsg::Ops {
                    ops: ops[..n].to_vec(),
                    head,
                });
                if text.len() <= MAX_FRAME || n == 1 {
                    break text;
                }
                n = n.div_ceil(2);
            };
            let rest = ops.split_off(n);
            self.sent = ops.last().map_or(self.sent, |s| s.seq);
            self.ws
                .send(Message::text(text))
                .await
                .map_err(|_| End::Gone)?;
            ops = rest;
        }
        Ok(())
    }

    /// Queues a push's ops for the store; the answer goes out once they
    /// are durable (`live`).
    fn on_push(&mut self, ops: Vec<PushedOp>) -> Result<(), End> {
        let me = &self.auth.device;
        let n = ops.len() as u64;
        take(&self.member.bucket, |b| b.take_ops(ops.len())).inspect_err(|_| {
            self.ctx.metrics.reject(Rejected::RateLimit, n);
        })?;
        if let Some((i, p)) = ops.iter().enumerate().find(|(_, p)| p.op.device != *me) {
            self.ctx.metrics.reject(Rejected::ForeignDevice, n);
            return Err(End::close(
                Close::BadMessage,
                format!("push: op {i}: an op of another device ({})", p.op.device),
            ));
        }
        let now_ms = u64::try_from(chrono::Utc::now().timestamp_millis()).unwrap_or(0);
        if let Some(p) = ops.iter().find(|p| p.op.hlc.is_far_ahead(now_ms)) {
            tracing::warn!(device = %me, hlc = %p.op.hlc, "stamp more than 24 h ahead of the server's clock");
        }
        let write = self.ctx.store.push_pushed(&self.auth, ops);
        self.pending
            .get_or_insert_with(Box::default)
            .push_back(Box::pin(self.ctx.metrics.time_write(write)));
        Ok(())
    }

    async fn on_message(&mut self, msg: ClientMsg) -> Result<(), End> {
        let (account, me) = (self.auth.account.clone(), self.auth.device.clone());
        match msg {
            ClientMsg::Hello { .. } => Err(End::close(Close::BadMessage, "hello was already sent")),
            // Pushes come as `ClientFrame::Push` (`on_push`).
            ClientMsg::Push { .. } => Err(End::close(
                Close::BadMessage,
                "push: not decoded as a push frame",
            )),
            ClientMsg::Pair => {
                let code = self
                    .ctx
                    .store
                    .pair(&account, self.ctx.config.code_ttl)
                    .await
                    .map_err(|e| End::internal(&e))?;
                self.send(&ServerMsg::Code {
                    code: code.code,
                    expires_at: code.expires_at,
                })
                .await
            }
            ClientMsg::Devices => {
                let mut devices = self
                    .ctx
                    .store
                    .devices(&account)
                    .await
                    .map_err(|e| End::internal(&e))?;
                let connected = self.ctx.hub.connected(&account);
                // The store says whether another instance holds it.
                for d in &mut devices {
                    d.connected |= connected.contains(&d.device);
                }
                self.send(&ServerMsg::DeviceList { devices }).await
            }
            ClientMsg::Revoke { device } => {
                if !self
                    .ctx
                    .store
                    .revoke(&account, &device)
                    .await
                    .map_err(|e| End::internal(&e))?
                {
                    return self
                        .send(&ServerMsg::Error {
                            code: "not_found".into(),
                            message: format!("no device {device} in this account"),
                        })
                        .await;
                }
                tracing::info!(%account, by = %me, %device, "device revoked");
                self.send(&ServerMsg::Revoked {
                    device: device.clone(),
                })
                .await?;
                if device == me {
                    return Err(End::close(Close::Normal, "device left"));
                }
                Ok(())
            }
        }
    }
}
