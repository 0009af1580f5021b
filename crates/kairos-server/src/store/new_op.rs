//! An op made ready for the writer by the caller: its JSON is computed on
//! the session's runtime worker (many run in parallel), so the writer only
//! inserts. Both stores keep only the JSON beside the key (compaction reads
//! the entity, hlc and effect back from it).

use kairos_proto::{Op, PushedOp};

use super::StoreError;

/// A pushed op with the JSON both stores keep: this crate's encoding of
/// the op, or the device's own text when it came from a frame (one object
/// that decoded as the op with no other top-level field: `PushedOp`).
pub(crate) struct NewOp {
    pub(crate) op: Op,
    /// The op as stored and sent in catch-up.
    pub(crate) json: String,
}

impl NewOp {
    pub(crate) fn new(op: Op) -> Result<Self, StoreError> {
        let json = serde_json::to_string(&op)
            .map_err(|e| StoreError::Encode(op.id.clone(), e.to_string()))?;
        Ok(Self { json, op })
    }

    /// Every op of a push, or the first that does not encode.
    pub(crate) fn all(ops: Vec<Op>) -> Result<Vec<Self>, StoreError> {
        ops.into_iter().map(Self::new).collect()
    }
}

impl From<PushedOp> for NewOp {
    fn from(p: PushedOp) -> Self {
        Self {
            op: p.op,
            json: p.json,
        }
    }
}
