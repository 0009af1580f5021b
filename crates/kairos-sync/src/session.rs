//! One session with the server: `hello`, catch-up from the cursor, pushes
//! of the outbox, and the live ops that follow (`docs/sync-protocol.md`,
//! "A session").

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use kairos_engine::clock::Clock;
use kairos_engine::sync::apply::{Applied, apply_remote};
use kairos_engine::sync::{Identity, keys};
use kairos_proto::{ClientMsg, MAX_OPS_PER_MESSAGE, Op, SeqOp, ServerMsg};
use kairos_store::Store;

use crate::SyncError;
use crate::conn::{self, Tls, Ws};

/// How long one answer may take.
pub(crate) const ANSWER: Duration = Duration::from_secs(15);

/// What applying ops needs besides the store.
#[derive(Clone)]
pub struct Applier {
    /// "Now" for planning and the audit log.
    pub clock: Arc<dyn Clock>,
    /// The zone of floating times (when the database names none).
    pub floating: Tz,
    /// The materialisation horizon.
    pub horizon: chrono::Duration,
}

impl Applier {
    /// Applies a batch and moves the cursor to its last seq, in one
    /// transaction.
    pub(crate) fn apply(&self, store: &mut Store, ops: &[SeqOp]) -> Result<Applied, SyncError> {
        let plain: Vec<Op> = ops.iter().map(|s| s.op.clone()).collect();
        let last = ops.iter().map(|s| s.seq).max();
        Ok(apply_remote(
            store,
            &plain,
            last,
            self.clock.now(),
            self.horizon,
            self.floating,
        )?)
    }
}

/// Ops a device pushes per second at most: under the server's limit
/// (kairos-proto's `RATE_OPS_PER_SEC`, 5,000), which closes a session that
/// goes over it. A large import is paced instead of cut off.
pub(crate) const PUSH_OPS_PER_SEC: usize = 4_000;

/// An open session.
pub(crate) struct Session {
    pub ws: Ws,
    /// Whether this catch-up is a snapshot.
    pub snapshot: bool,
    /// Start of the current one-second pacing window, and ops pushed in it.
    window: (tokio::time::Instant, usize),
    /// The op kinds added within v1 that the server takes (its welcome's
    /// `features`: `calendar.work`, `calendar.feed`). An older server
    /// refuses a push holding another (4400), so those wait in the outbox,
    /// and everything else goes on.
    takes: Vec<String>,
}

/// Whether a server that takes the features `takes` is sent `op` now.
pub(crate) fn sendable(op: &Op, takes: &[String]) -> bool {
    op.body.carried_by(takes)
}

/// The stored cursor.
pub(crate) fn cursor(store: &Store) -> Result<u64, SyncError> {
    Ok(store
        .meta_get(keys::CURSOR)?
        .and_then(|v| v.parse().ok())
        .unwrap_or(0))
}

impl Session {
    /// Connects with the device's token and says hello.
    pub(crate) async fn open(store: &Store, id: &Identity, tls: &Tls) -> Result<Self, SyncError> {
        let url = conn::url(&id.server, "/v1/sync")?;
        let mut ws = conn::connect(&url, &format!("Bearer {}", id.token), tls).await?;
        let hello = ClientMsg::Hello {
            cursor: cursor(store)?,
            client: format!("kairos/{}", env!("CARGO_PKG_VERSION")),
            features: kairos_proto::FEATURES
                .iter()
                .map(|f| (*f).to_owned())
                .collect(),
        };
        conn::send(&mut ws, &hello).await?;
        match conn::recv(&mut ws, ANSWER).await? {
            ServerMsg::Welcome {
                snapshot, features, ..
            } => Ok(Self {
                ws,
                snapshot,
                window: (tokio::time::Instant::now(), 0),
                takes: features,
            }),
            other => Err(SyncError::Protocol(format!(
                "expected welcome, got {other:?}"
            ))),
        }
    }

    /// Applies ops until `caught_up`, [`MAX_OPS_PER_MESSAGE`] at a time
    /// (one transaction each, however small the server's frames are).
    /// Returns how many ops arrived.
    pub(crate) async fn catch_up(
        &mut self,
        store: &mut Store,
        applier: &Applier,
        on_applied: &mut dyn FnMut(Applied),
    ) -> Result<usize, SyncError> {
        let mut pulled = 0;
        let mut held: Vec<SeqOp> = Vec::new();
        loop {
            match conn::recv(&mut self.ws, ANSWER).await? {
                ServerMsg::Ops { ops, .. } => {
                    pulled += ops.len();
                    held.extend(ops);
                    if held.len() >= MAX_OPS_PER_MESSAGE {
                        on_applied(applier.apply(store, &held)?);
                        held.clear();
                    }
                }
                ServerMsg::CaughtUp { head } => {
                    if !held.is_empty() {
                        on_applied(applier.apply(store, &held)?);
                    }
                    // The server's word for where this device now is: ops
                    // it skipped (this device's own) are behind it too.
                    let at = cursor(store)?.max(head);
                    store.write(|tx| {
                        tx.meta_set(keys::CURSOR, &at.to_string())?;
                        tx.meta_set(keys::SNAPSHOT, if self.snapshot { "1" } else { "0" })
                    })?;
                    return Ok(pulled);
                }
                other => {
                    return Err(SyncError::Protocol(format!(
                        "unexpected during catch-up: {other:?}"
                    )));
                }
            }
        }
    }

    /// Pushes the whole outbox, batch by batch, each removed once the
    /// server says it is durable, except ops the server does not take yet
    /// ([`sendable`]), which stay for a later one. Live ops arriving
    /// meanwhile are applied.
    /// Adds to `pushed` as batches are confirmed (so a failure half-way
    /// still counts what went).
    pub(crate) async fn push_outbox(
        &mut self,
        store: &mut Store,
        applier: &Applier,
        on_applied: &mut dyn FnMut(Applied),
        pushed: &mut usize,
    ) -> Result<(), SyncError> {
        // Past the ops held back so far.
        let mut after = 0;
        loop {
            let rows = store.read(|r| r.outbox_after(after, MAX_OPS_PER_MESSAGE))?;
            if rows.is_empty() {
                return Ok(());
            }
            let ops: Vec<Op> = rows
                .iter()
                .filter_map(|r| serde_json::from_str(&r.op).ok())
                .collect();
            let ids: Vec<String> = rows.iter().map(|r| r.op_id.clone()).collect();
            if ops.len() != rows.len() {
                // A row that no longer reads can never be sent: drop it
                // rather than block everything behind it.
                let bad: Vec<String> = rows
                    .iter()
                    .filter(|r| serde_json::from_str::<Op>(&r.op).is_err())
                    .map(|r| r.op_id.clone())
                    .collect();
                store.write(|tx| tx.outbox_remove(&bad))?;
                continue;
            }
            after = rows.last().map_or(after, |r| r.seq);
            let (ops, ids): (Vec<Op>, Vec<String>) = ops
                .into_iter()
                .zip(ids)
                .filter(|(op, _)| sendable(op, &self.takes))
                .unzip();
            if ops.is_empty() {
                continue;
            }
            self.pace(ops.len()).await;
            conn::send(&mut self.ws, &ClientMsg::Push { ops }).await?;
            loop {
                match conn::recv(&mut self.ws, ANSWER).await? {
                    ServerMsg::Pushed { results } => {
                        let done: Vec<String> = results.into_iter().map(|r| r.id).collect();
                        store.write(|tx| tx.outbox_remove(&done))?;
                        *pushed += ids.len();
                        break;
                    }
                    ServerMsg::Ops { ops, .. } => on_applied(applier.apply(store, &ops)?),
                    other => {
                        return Err(SyncError::Protocol(format!(
                            "expected pushed, got {other:?}"
                        )));
                    }
                }
            }
        }
    }

    /// Waits, if needed, so that pushing `n` more ops keeps within
    /// [`PUSH_OPS_PER_SEC`].
    async fn pace(&mut self, n: usize) {
        let (start, sent) = self.window;
        let now = tokio::time::Instant::now();
        if now >= start + Duration::from_secs(1) {
            self.window = (now, n);
        } else if sent + n > PUSH_OPS_PER_SEC {
            tokio::time::sleep_until(start + Duration::from_secs(1)).await;
            self.window = (tokio::time::Instant::now(), n);
        } else {
            self.window.1 += n;
        }
    }

    /// Sends a request and waits for its answer, applying live ops that
    /// come first... or ignoring them (the cursor does not move, so they
    /// come again).
    pub(crate) async fn request(&mut self, msg: &ClientMsg) -> Result<ServerMsg, SyncError> {
        conn::send(&mut self.ws, msg).await?;
        loop {
            match conn::recv(&mut self.ws, ANSWER).await? {
                ServerMsg::Ops { .. } | ServerMsg::CaughtUp { .. } => {}
                other => return Ok(other),
            }
        }
    }
}

/// Records a failure for `kairos sync status`.
pub(crate) fn note_error(store: &mut Store, e: &SyncError, now: DateTime<Utc>) {
    let _ = store.write(|tx| {
        tx.meta_set(keys::LAST_ERROR, &e.to_string())?;
        tx.meta_set(keys::LAST_ERROR_AT, &now.to_rfc3339())
    });
}

#[cfg(test)]
mod tests {
    use kairos_proto::{Body, Hlc, Op};

    use super::sendable;

    #[test]
    fn new_kinds_wait_for_a_server_that_takes_them_and_nothing_else_does() {
        let hlc: Hlc = "0001764864000123.00002.d_4f1c2a9b0e7d3c5a"
            .parse()
            .unwrap_or_else(|e| panic!("stamp: {e}"));
        let work = Op::new(
            1,
            hlc.clone(),
            Body::CalendarWork {
                calendar: "c1".into(),
                week: 31,
                holidays: true,
            },
        );
        let feed = Op::new(
            2,
            hlc.clone(),
            Body::CalendarFeed {
                calendar: "c1".into(),
                url: "https://feeds.test/private-abc.ics".into(),
                every: 3600,
                removed: false,
            },
        );
        let dismiss = Op::new(3, hlc, Body::ReminderDismiss { key: "k".into() });
        let none: Vec<String> = Vec::new();
        let work_only = vec!["calendar.work".to_owned()];
        let both = vec!["calendar.work".to_owned(), "calendar.feed".to_owned()];
        assert!(
            !sendable(&work, &none),
            "an older server would close (4400)"
        );
        assert!(sendable(&work, &work_only));
        assert!(
            !sendable(&feed, &work_only),
            "a server of issue #18's build"
        );
        assert!(sendable(&feed, &both));
        assert!(sendable(&dismiss, &none));
    }
}
