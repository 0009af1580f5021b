//! The engine's side of sync (issue #10): every accepted local change is
//! recorded as an op in the outbox, in the transaction that makes the
//! change ([`record`]); ops from other devices enter through
//! [`apply::apply_remote`], which calls the same functions local changes
//! call, so an event arriving from another device is stored, planned and
//! keyed exactly as if it were made here.
//!
//! This module knows ops and merge rules (kairos-proto) and the store; it
//! knows no sockets: the connection is `kairos-sync`'s.
//!
//! A database that never joined an account records nothing: no outbox, no
//! registers. Joining records a `put` of every calendar and series it has
//! ([`join`]), so the account learns what this device already kept.

pub mod acks;
pub mod apply;
pub mod caldav;
pub mod caldav_copy;
pub mod caldav_rekey;
pub mod feed;
pub mod zone;

use chrono::{DateTime, Utc};
use kairos_proto::{AckState, Body, Hlc, HlcClock, Op};
use kairos_store::{Store, StoreError, Tx};

use crate::error::EngineError;

/// `meta` keys of a paired database.
pub mod keys {
    /// The server's URL (`ws://…` or `wss://…`).
    pub const SERVER: &str = "sync.server";
    /// The account's id.
    pub const ACCOUNT: &str = "sync.account";
    /// This device's id (`d_…`); set means "paired".
    pub const DEVICE: &str = "sync.device";
    /// This device's token (the database is readable by its owner only).
    pub const TOKEN: &str = "sync.token";
    /// Highest server seq applied.
    pub const CURSOR: &str = "sync.cursor";
    /// The last HLC stamp issued or seen.
    pub const HLC: &str = "sync.hlc";
    /// The last op number issued (op ids are `DEVICE:N`).
    pub const OP_SEQ: &str = "sync.op_seq";
    /// The last sync error and when (RFC 3339).
    pub const LAST_ERROR: &str = "sync.last_error";
    /// When the last error happened.
    pub const LAST_ERROR_AT: &str = "sync.last_error_at";
    /// When the last successful exchange with the server ended.
    pub const LAST_SYNC_AT: &str = "sync.last_sync_at";
    /// "1" while the last catch-up was a snapshot.
    pub const SNAPSHOT: &str = "sync.snapshot";
    /// "1" while a daemon holds a live session.
    pub const CONNECTED: &str = "sync.connected";
    /// The zone this device last told the account (`account.zone`).
    pub const ZONE_SENT: &str = "sync.zone_sent";
}

/// Who this database is to the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// Server URL.
    pub server: String,
    /// Account id.
    pub account: String,
    /// Device id.
    pub device: String,
    /// Bearer token.
    pub token: String,
}

/// The identity of a paired database, `None` when it never joined.
///
/// # Errors
/// Store failures.
pub fn identity(store: &Store) -> Result<Option<Identity>, StoreError> {
    let get = |k| store.meta_get(k);
    Ok(
        match (
            get(keys::SERVER)?,
            get(keys::ACCOUNT)?,
            get(keys::DEVICE)?,
            get(keys::TOKEN)?,
        ) {
            (Some(server), Some(account), Some(device), Some(token)) => Some(Identity {
                server,
                account,
                device,
                token,
            }),
            _ => None,
        },
    )
}

/// The entity an op's last-writer-wins register is kept under, with
/// whether the op is a tombstone; `None` for acknowledgements (they merge
/// as [`AckState`], not by register).
pub(crate) fn register_of(body: &Body) -> Option<(String, bool)> {
    match body {
        Body::CalendarPut { calendar, .. } => Some((format!("calendar/{calendar}"), false)),
        Body::CalendarDelete { calendar } => Some((format!("calendar/{calendar}"), true)),
        Body::CalendarWork { calendar, .. } => Some((format!("work/{calendar}"), false)),
        Body::CalendarFeed { calendar, .. } => Some((format!("feed/{calendar}"), false)),
        Body::SeriesPut { calendar, uid, .. } => Some((format!("series/{calendar}/{uid}"), false)),
        Body::SeriesDelete { calendar, uid, .. } => {
            Some((format!("series/{calendar}/{uid}"), true))
        }
        Body::AccountZone { .. } => Some(("zone".to_owned(), false)),
        Body::ReminderDismiss { .. } | Body::ReminderSnooze { .. } => None,
    }
}

/// This device's clock, as stored.
pub(crate) fn clock_of(tx: &Tx<'_>, device: &str) -> Result<HlcClock, StoreError> {
    let last = tx.meta_get(keys::HLC)?.and_then(|t| t.parse::<Hlc>().ok());
    Ok(HlcClock::new(device.to_owned(), last))
}

/// Records a local change as an op, in the caller's transaction: the op in
/// the outbox, the entity's register (or the reminder's ack record) moved
/// to its stamp. Does nothing on a database that never joined an account,
/// nor for a series of a subscribed calendar (every device fetches the
/// feed itself: [`feed`]). Returns the op.
///
/// # Errors
/// Store failures.
pub fn record(tx: &Tx<'_>, body: Body, now: DateTime<Utc>) -> Result<Option<Op>, StoreError> {
    record_as(tx, body, now, caldav::Origin::Here)
}

/// [`record`] of a change from `origin`: a series fetched from the CalDAV
/// server of a calendar linked here is marked ([`caldav`]).
pub(crate) fn record_as(
    tx: &Tx<'_>,
    body: Body,
    now: DateTime<Utc>,
    origin: caldav::Origin,
) -> Result<Option<Op>, StoreError> {
    let Some(device) = tx.meta_get(keys::DEVICE)? else {
        return Ok(None);
    };
    if let Body::SeriesPut { calendar, .. } | Body::SeriesDelete { calendar, .. } = &body
        && feed::is_feed(tx, calendar)?
    {
        return Ok(None);
    }
    let body = caldav::mark(tx, body, origin)?;
    let mut clock = clock_of(tx, &device)?;
    let hlc = clock.issue(u64::try_from(now.timestamp_millis()).unwrap_or(0));
    tx.meta_set(keys::HLC, &hlc.to_string())?;
    let n = tx
        .meta_get(keys::OP_SEQ)?
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0)
        + 1;
    tx.meta_set(keys::OP_SEQ, &n.to_string())?;
    let target = register_of(&body);
    let base = match &target {
        Some((entity, _)) => tx.register(entity)?.and_then(|r| r.hlc.parse::<Hlc>().ok()),
        None => None,
    };
    let op = Op {
        id: format!("{device}:{n}"),
        hlc,
        device,
        base,
        body,
    };
    if let Some((entity, deleted)) = target {
        let base = op.base.as_ref().map(ToString::to_string);
        tx.register_set(&entity, &op.hlc.to_string(), deleted, base.as_deref())?;
    } else if let Body::ReminderDismiss { key } | Body::ReminderSnooze { key, .. } = &op.body {
        merge_ack(tx, crate::reminder::base_key(key), &op)?;
    }
    // Strings and numbers only: serialising cannot fail.
    let text = serde_json::to_string(&op).unwrap_or_default();
    tx.outbox_push(&op.id, &text, now)?;
    Ok(Some(op))
}

/// The acknowledgement record of reminder `base`, merged with `op`, stored;
/// returns the merged record.
///
/// # Errors
/// Store failures.
pub(crate) fn merge_ack(tx: &Tx<'_>, base: &str, op: &Op) -> Result<AckState, StoreError> {
    let mut ack = tx.ack(base)?.map(|t| decode_ack(&t)).unwrap_or_default();
    ack.apply(op);
    tx.ack_set(base, &encode_ack(&ack))?;
    Ok(ack)
}

/// Pairs the database: stores the identity and records a `put` of every
/// calendar and series it keeps (and the working time of each calendar
/// whose differs from the default, and each subscription instead of its
/// calendar's series), so the account gets them. One transaction.
///
/// # Errors
/// Store failures.
pub fn join(store: &mut Store, id: &Identity, now: DateTime<Utc>) -> Result<usize, EngineError> {
    let calendars = store.calendars()?;
    store.write(|tx| -> Result<usize, EngineError> {
        tx.outbox_clear()?;
        tx.sync_state_clear()?;
        for k in [
            keys::CURSOR,
            keys::OP_SEQ,
            keys::HLC,
            keys::LAST_ERROR,
            keys::LAST_ERROR_AT,
            keys::ZONE_SENT,
        ] {
            tx.meta_delete(k)?;
        }
        tx.meta_set(keys::SERVER, &id.server)?;
        tx.meta_set(keys::ACCOUNT, &id.account)?;
        tx.meta_set(keys::DEVICE, &id.device)?;
        tx.meta_set(keys::TOKEN, &id.token)?;
        let mut n = 0;
        for c in &calendars {
            let body = Body::CalendarPut {
                calendar: c.uid.clone(),
                name: c.name.clone(),
                color: c.color.clone(),
            };
            n += usize::from(record(tx, body, now)?.is_some());
            n += usize::from(crate::workdays::record_if_set(tx, c.id, now)?);
            let events = tx.events_of(c.id)?;
            let synced = caldav_copy::Synced::of(tx, c.id)?;
            // `events_of` returns the rows ordered by uid: one run per series.
            for group in events.chunk_by(|a, b| a.uid == b.uid) {
                let uid = group[0].uid.as_str();
                let ics = crate::series::wire_text(group.iter(), &c.name)?;
                // A series of a linked calendar that is the server's copy
                // (unchanged since this device's last CalDAV sync) is sent
                // marked: a stale copy must not be written back over a
                // newer one by the devices already in the account. One
                // edited here and not yet written to the server is an edit
                // like any other: every linked device applies it and
                // writes it back (`caldav_copy`).
                let origin = synced.origin(uid, group)?;
                let body = Body::SeriesPut {
                    calendar: c.uid.clone(),
                    uid: uid.to_owned(),
                    ics,
                };
                n += usize::from(record_as(tx, body, now, origin)?.is_some());
            }
        }
        n += feed::record_all(tx, now)?;
        Ok(n)
    })
}

/// Forgets the account: identity, outbox, registers and ack records. The
/// calendars, events and reminders stay.
///
/// # Errors
/// Store failures.
pub fn leave(store: &mut Store) -> Result<(), StoreError> {
    store.write(|tx| {
        tx.outbox_clear()?;
        tx.sync_state_clear()?;
        for k in [
            keys::SERVER,
            keys::ACCOUNT,
            keys::DEVICE,
            keys::TOKEN,
            keys::CURSOR,
            keys::OP_SEQ,
            keys::HLC,
            keys::LAST_ERROR,
            keys::LAST_ERROR_AT,
            keys::LAST_SYNC_AT,
            keys::SNAPSHOT,
            keys::CONNECTED,
        ] {
            tx.meta_delete(k)?;
        }
        Ok(())
    })
}

/// An acknowledgement record as the `acks` table keeps it.
#[derive(serde::Serialize, serde::Deserialize, Default)]
struct StoredAck {
    dismissed: Option<String>,
    /// The winning snooze's stamp and its `until` in unix milliseconds.
    snooze: Option<(String, i64)>,
}

/// An ack record as stored. Serialising strings and RFC 3339 instants to
/// JSON cannot fail.
fn encode_ack(ack: &AckState) -> String {
    let s = StoredAck {
        dismissed: ack.dismissed.as_ref().map(ToString::to_string),
        snooze: ack
            .snooze
            .as_ref()
            .map(|(h, t)| (h.to_string(), t.timestamp_millis())),
    };
    serde_json::to_string(&s).unwrap_or_else(|_| "{}".to_owned())
}

/// A stored ack record; one that does not read counts as none.
pub(crate) fn decode_ack(text: &str) -> AckState {
    let s: StoredAck = serde_json::from_str(text).unwrap_or_default();
    AckState {
        dismissed: s.dismissed.and_then(|h| h.parse().ok()),
        snooze: s
            .snooze
            .and_then(|(h, t)| Some((h.parse::<Hlc>().ok()?, DateTime::from_timestamp_millis(t)?))),
    }
}
