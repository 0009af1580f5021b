//! One account's replication round, computed before it is stored: the
//! account's stored registers and new ops applied (`replica`), the window
//! planned in the account's zone, and what the stores write back.

use chrono::{DateTime, Utc};
use kairos_proto::Op;

use super::{Fallback, Instance, LOOKBACK, Round, WINDOW, ms, replica};
use crate::store::StoreError;

/// One account's round, as computed before it is stored.
pub(crate) struct Write {
    pub account: String,
    /// The cursor and planned-until read at the start (the guard).
    pub from_seq: u64,
    pub from_until_ms: i64,
    pub to_seq: u64,
    pub to_until_ms: i64,
    pub now_ms: i64,
    pub window: (i64, i64),
    pub changes: replica::Changes,
    pub instances: Vec<Instance>,
    pub fallbacks: Vec<Fallback>,
}

/// An account to replicate: (id, head, cursor, planned until).
pub(crate) type Due = (String, u64, u64, i64);

/// What is read for one account's round.
pub(crate) struct Loaded {
    pub entities: Vec<String>,
    pub ops: Vec<(u64, String)>,
    pub fallbacks: Vec<Fallback>,
    /// The zone the operator set for the account (`remind_zone`), if any.
    pub zone: Option<String>,
}

/// Applies the loaded ops to the stored state and plans the window.
pub(super) fn plan(
    account: String,
    cursor: u64,
    until: i64,
    now: DateTime<Utc>,
    loaded: Loaded,
    round: &mut Round,
) -> Result<Write, StoreError> {
    let mut state = replica::State::default();
    let decode = |seq: u64, json: &str| {
        serde_json::from_str::<Op>(json).map_err(|e| StoreError::Corrupt(seq, e.to_string()))
    };
    let mut stored = Vec::with_capacity(loaded.entities.len());
    for json in &loaded.entities {
        stored.push(decode(0, json)?);
    }
    let mut ignored = replica::Changes::default();
    state.apply(&stored, &mut ignored);
    let mut ops = Vec::with_capacity(loaded.ops.len());
    let mut to_seq = cursor;
    for (seq, json) in &loaded.ops {
        ops.push(decode(*seq, json)?);
        to_seq = to_seq.max(*seq);
    }
    let mut changes = replica::Changes::default();
    state.apply(&ops, &mut changes);
    let back = chrono::Duration::from_std(LOOKBACK).unwrap_or_default();
    let ahead = chrono::Duration::from_std(WINDOW).unwrap_or_default();
    let (from, to) = (now - back, now + ahead);
    // The zone the devices told (what they plan in), else the operator's
    // (`kairos-server fallback … --zone`, for devices too old to tell),
    // else UTC.
    let named = state.zone().or(loaded.zone.as_deref());
    let zone = match named.map(str::parse::<chrono_tz::Tz>) {
        None => chrono_tz::UTC,
        Some(Ok(tz)) => tz,
        Some(Err(_)) => {
            let z = named.unwrap_or_default();
            round.skipped.push(format!(
                "zone {z:?} of {account}: not a known zone, floating times read in UTC"
            ));
            chrono_tz::UTC
        }
    };
    let (instances, bad) = state.plan(from, to, zone);
    round.skipped.extend(bad);
    Ok(Write {
        account,
        from_seq: cursor,
        from_until_ms: until,
        to_seq,
        to_until_ms: ms(to),
        now_ms: ms(now),
        window: (ms(from), ms(to)),
        changes,
        instances,
        fallbacks: loaded.fallbacks,
    })
}

/// What one account's stored round did.
#[derive(Debug, Default)]
pub(crate) struct Stored {
    pub planned: usize,
    pub withdrawn: usize,
    pub acked: usize,
    pub snoozed: usize,
    pub deliveries: usize,
    /// The channels of the deliveries an acknowledgement cancelled.
    pub cancelled_by_ack: Vec<String>,
}

/// Has an account planned again from its first instance on its next round
/// (after its fallbacks or its zone changed); `$1` is the account, on both
/// stores (SQLite takes `$1` as its first parameter).
pub(crate) const REPLAN: &str = "UPDATE remind_cursor SET planned_until_ms = 0 WHERE account = $1";
