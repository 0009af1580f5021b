//! A session's start and its catch-ups: `hello` in time, `welcome`, the
//! ops after the device's cursor in batches, `caught_up`; and the same
//! catch-up from the store when the live channel lagged or another
//! instance committed. Each is boxed by its caller (`mod.rs`): their
//! state machines (store calls, PostgreSQL's included) would otherwise
//! size every idle session's task.

use kairos_proto::{ClientFrame, ClientMsg, Close, MAX_OPS_PER_MESSAGE, SeqOp, ServerMsg};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;

use futures_util::StreamExt;

use super::{BATCH_BYTES, End, Session};

impl<S: AsyncRead + AsyncWrite + Unpin> Session<'_, S> {
    pub(super) async fn hello(&mut self, stop: &mut watch::Receiver<bool>) -> Result<(), End> {
        let wait = self.ctx.config.handshake_timeout;
        let deadline = tokio::time::Instant::now() + wait;
        let cursor = loop {
            let frame = tokio::select! {
                _ = stop.changed() => return Err(End::close(Close::GoingAway, "server shutting down")),
                f = tokio::time::timeout_at(deadline, self.ws.next()) => f.map_err(|_| {
                    End::close(Close::HelloTimeout, format!("no hello within {} ms of the upgrade", wait.as_millis()))
                })?,
            };
            match self.frame(frame)? {
                None => continue,
                Some(ClientFrame::Other(ClientMsg::Hello {
                    cursor,
                    client,
                    features,
                })) => {
                    tracing::debug!(device = %self.auth.device, cursor, client, ?features, "hello");
                    self.features = kairos_proto::FEATURES
                        .iter()
                        .copied()
                        .filter(|k| features.iter().any(|f| f == k))
                        .collect();
                    break cursor;
                }
                Some(_) => {
                    return Err(End::close(
                        Close::BadMessage,
                        "the first message must be hello",
                    ));
                }
            }
        };
        // Subscribed to the account's events since before hello: a
        // revocation committed after the upgrade's check but before that
        // subscription would otherwise go unnoticed.
        self.ensure_live().await?;
        self.ctx.store.touch(&self.auth.account, &self.auth.device);
        let log = self
            .ctx
            .store
            .log(&self.auth.account)
            .await
            .map_err(|e| End::internal(&e))?;
        // A cursor ahead of the head: the server was restored from an older
        // backup; the device gets everything there is.
        let snapshot = cursor < log.floor || cursor > log.head;
        self.send(&ServerMsg::Welcome {
            account: self.auth.account.clone(),
            device: self.auth.device.clone(),
            head: log.head,
            snapshot,
            features: kairos_proto::FEATURES
                .iter()
                .map(|f| (*f).to_owned())
                .collect(),
        })
        .await?;
        self.sent = if snapshot { 0 } else { cursor };
        self.catch_up(log.head, false).await?;
        self.send(&ServerMsg::CaughtUp { head: self.sent }).await
    }

    /// Closes with 4401 unless the session's device is still live (not
    /// revoked since the upgrade's check). (`&mut`: a shared borrow held
    /// across the await would need the session to be `Sync`.)
    pub(super) async fn ensure_live(&mut self) -> Result<(), End> {
        let live = self
            .ctx
            .store
            .is_live(&self.auth.device)
            .await
            .map_err(|e| End::internal(&e))?;
        if live {
            Ok(())
        } else {
            Err(End::close(Close::Revoked, "device revoked"))
        }
    }

    /// Sends every op after `sent`, in batches; with `skip_own` (catching
    /// up live after the channel lagged) not the device's own ops, which it
    /// pushed in this session and which live delivery never echoes either.
    pub(super) async fn catch_up(&mut self, head: u64, skip_own: bool) -> Result<(), End> {
        loop {
            let batch = self
                .ctx
                .store
                .ops_after(
                    &self.auth.account,
                    self.sent,
                    MAX_OPS_PER_MESSAGE,
                    BATCH_BYTES,
                )
                .await
                .map_err(|e| End::internal(&e))?;
            let Some(last) = batch.last().map(|s| s.seq) else {
                return Ok(());
            };
            let me = &self.auth.device;
            let ops: Vec<SeqOp> = batch
                .into_iter()
                .filter(|s| !(skip_own && s.op.device == *me) && self.understands(s))
                .collect();
            if !ops.is_empty() {
                self.ctx.metrics.catch_up_ops.add(ops.len() as u64);
                self.send(&ServerMsg::Ops {
                    ops,
                    head: head.max(last),
                })
                .await?;
            }
            self.sent = last;
        }
    }

    /// The live channel dropped `missed` events for this session: it
    /// catches up from the store, without its own ops.
    pub(super) async fn lagged(&mut self, missed: u64) -> Result<(), End> {
        tracing::debug!(device = %self.auth.device, missed, "live channel lagged; catching up");
        self.ensure_live().await?;
        let head = self
            .ctx
            .store
            .log(&self.auth.account)
            .await
            .map_err(|e| End::internal(&e))?
            .head;
        self.catch_up(head, true).await
    }
}
