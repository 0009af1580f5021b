//! An op made ready for the writer by the caller: the columns it is stored
//! under and its JSON are computed on the session's runtime worker (many
//! run in parallel), so the one writer only inserts.

use kairos_proto::{Effect, Op};

use super::StoreError;

/// A pushed op with the columns both stores keep beside it.
pub(crate) struct NewOp {
    pub(crate) op: Op,
    pub(crate) entity: String,
    pub(crate) hlc: String,
    pub(crate) kind: &'static str,
    /// A snooze's end, in ms since the epoch (read by compaction).
    pub(crate) until_ms: Option<i64>,
    /// The op as stored and sent in catch-up.
    pub(crate) json: String,
}

impl NewOp {
    pub(crate) fn new(op: Op) -> Result<Self, StoreError> {
        let json = serde_json::to_string(&op)
            .map_err(|e| StoreError::Encode(op.id.clone(), e.to_string()))?;
        Ok(Self {
            entity: op.entity(),
            hlc: op.hlc.to_string(),
            kind: op.body.kind(),
            until_ms: match op.body.effect() {
                Effect::Snooze(until) => Some(until.timestamp_millis()),
                _ => None,
            },
            json,
            op,
        })
    }

    /// Every op of a push, or the first that does not encode.
    pub(crate) fn all(ops: Vec<Op>) -> Result<Vec<Self>, StoreError> {
        ops.into_iter().map(Self::new).collect()
    }
}
