//! The other instances' hints: a connection of its own that `LISTEN`s and
//! turns each notification into an event (the account's new head, or a
//! revocation). Reconnects after a lost connection; hints sent meanwhile
//! are lost, which the server's periodic head check repairs.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use tokio_postgres::AsyncMessage;

use super::super::writer::Committed;
use super::CHANNEL;

/// The wait before connecting again.
const RETRY: Duration = Duration::from_secs(1);

/// The event a hint's text stands for (see `writer::hint`).
pub(super) fn parse(text: &str) -> Option<Committed> {
    let mut parts = text.splitn(3, ' ');
    match (parts.next()?, parts.next()?, parts.next()?) {
        ("h", head, account) => Some(Committed::Head {
            account: account.to_owned(),
            head: head.parse().ok()?,
        }),
        ("r", account, device) => Some(Committed::Revoked {
            account: account.to_owned(),
            device: device.to_owned(),
        }),
        _ => None,
    }
}

pub(super) async fn run(target: super::Target, on_hint: Arc<dyn Fn(Committed) + Send + Sync>) {
    loop {
        match target.config.connect(target.tls.clone()).await {
            Ok((client, mut conn)) => {
                let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
                // The connection's messages are only read by polling it.
                let mut messages = futures_util::stream::poll_fn(move |cx| conn.poll_message(cx));
                let pump = tokio::spawn(async move {
                    while let Some(Ok(m)) = messages.next().await {
                        if tx.send(m).is_err() {
                            break;
                        }
                    }
                });
                match client.batch_execute(&format!("LISTEN {CHANNEL}")).await {
                    Ok(()) => {
                        tracing::debug!("listening for other instances' hints");
                        while let Some(m) = rx.recv().await {
                            if let AsyncMessage::Notification(n) = m {
                                match parse(n.payload()) {
                                    Some(event) => on_hint(event),
                                    None => tracing::warn!(payload = n.payload(), "unknown hint"),
                                }
                            }
                        }
                        tracing::warn!("hint connection lost; reconnecting");
                    }
                    Err(e) => tracing::warn!("LISTEN failed: {e}"),
                }
                pump.abort();
            }
            Err(e) => tracing::warn!("hint connection failed: {e}"),
        }
        tokio::time::sleep(RETRY).await;
    }
}
