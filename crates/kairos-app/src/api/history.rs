//! The IPC type of an event's sync history: edits that lost to another
//! device's later edit (what `kairos log` prints as `edit from A lost to B`).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// One edit of this event that lost to a concurrent, later one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct LostEdit {
    /// When this device saw both versions (RFC 3339 UTC).
    pub at: String,
    /// The device whose edit was replaced (a device id, `d_…`).
    pub lost: String,
    /// The device whose later edit was kept.
    pub won: String,
    /// The replaced edit was made on this device.
    pub lost_here: bool,
    /// The kept edit was made on this device.
    pub won_here: bool,
}
