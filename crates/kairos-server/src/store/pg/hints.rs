//! The hints for the other instances, sent by a task of their own on a
//! pooled connection: the writers hand each group's hints over and go on
//! with their next group, and every hint that arrives while one `NOTIFY`
//! statement runs goes in the next one (one transaction for many groups,
//! where each writer spent a round trip and a transaction per group).
//!
//! Never inside the writing transaction: a NOTIFY there serialises every
//! commit on a global lock (FINDINGS.md). A lost hint is repaired by the
//! other instances' periodic head check.

use deadpool_postgres::Pool;
use tokio::sync::mpsc;

use super::{CHANNEL, get};

/// Starts the task; it stops when every sender is dropped.
pub(super) fn start(pool: Pool) -> mpsc::UnboundedSender<Vec<String>> {
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(run(pool, rx));
    tx
}

async fn run(pool: Pool, mut rx: mpsc::UnboundedReceiver<Vec<String>>) {
    while let Some(mut hints) = rx.recv().await {
        while let Ok(more) = rx.try_recv() {
            hints.extend(more);
        }
        let sent = match get(&pool).await {
            Ok(c) => c
                .execute(
                    &format!("SELECT pg_notify('{CHANNEL}', h) FROM unnest($1::text[]) AS h"),
                    &[&hints],
                )
                .await
                .map(|_| ())
                .map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        if let Err(e) = sent {
            tracing::warn!("hints not sent (the others repair it within a second): {e}");
        }
    }
}
