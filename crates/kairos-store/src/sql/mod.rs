//! The SQL, one file per table group, as methods on [`crate::Reader`] (reads)
//! and [`crate::Tx`] (writes). Shared column conversions live here.

mod audit;
mod batch;
mod caldav;
mod calendars;
mod events;
mod instances;
mod meta;
mod subscriptions;
mod sync_log;
mod worktime;

use chrono::{DateTime, Utc};
use rusqlite::Row;
use rusqlite::types::Type;

use crate::types::State;

pub use batch::Delivered;
pub use caldav::{CaldavAccount, CaldavCalendar, CaldavObject};
pub use subscriptions::RefreshResult;
pub use sync_log::{OutboxRow, Register};

/// Times are stored as unix milliseconds (sub-millisecond parts are dropped).
pub(crate) fn ms(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

/// A `LIMIT` argument; SQLite takes an i64, any larger request means "all".
pub(crate) fn limit(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn bad(idx: usize, ty: Type, msg: String) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(idx, ty, msg.into())
}

pub(crate) fn time_at(row: &Row<'_>, idx: usize) -> rusqlite::Result<DateTime<Utc>> {
    let v: i64 = row.get(idx)?;
    DateTime::from_timestamp_millis(v)
        .ok_or_else(|| bad(idx, Type::Integer, format!("time {v} ms is out of range")))
}

pub(crate) fn opt_time_at(row: &Row<'_>, idx: usize) -> rusqlite::Result<Option<DateTime<Utc>>> {
    match row.get::<_, Option<i64>>(idx)? {
        None => Ok(None),
        Some(_) => time_at(row, idx).map(Some),
    }
}

pub(crate) fn state_at(row: &Row<'_>, idx: usize) -> rusqlite::Result<State> {
    let s: String = row.get(idx)?;
    State::parse(&s).ok_or_else(|| bad(idx, Type::Text, format!("unknown state {s:?}")))
}

/// `None` for NULL (no state before creation) and for the audit's 'removed'.
pub(crate) fn opt_state_at(row: &Row<'_>, idx: usize) -> rusqlite::Result<Option<State>> {
    match row.get::<_, Option<String>>(idx)?.as_deref() {
        None | Some(REMOVED | SYNC_NOTE) => Ok(None),
        Some(_) => state_at(row, idx).map(Some),
    }
}

/// The audit's `to_state` for an instance that was deleted.
pub(crate) const REMOVED: &str = "removed";

/// The audit's `to_state` for a note about sync (an edit that lost).
pub(crate) const SYNC_NOTE: &str = "sync";
