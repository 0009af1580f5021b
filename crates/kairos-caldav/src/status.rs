//! What a background sync leaves behind for `kairos caldav calendars` (and
//! later the app) to show: per account, when it last synced, the last
//! error and how many syncs in a row failed, when the next is due; and the
//! interval chosen with `kairos caldav add --every`.
//!
//! Kept in the `meta` table (`caldav.status.<account>`, `caldav.every.<account>`),
//! as small JSON / a number of seconds: local to this database, never
//! synced to other devices (each device syncs its own CalDAV accounts).

use chrono::{DateTime, Duration, Utc};
use kairos_store::Store;
use serde_json::{Value, json};

use crate::error::{CaldavError, Result};

/// The interval when none was chosen.
pub const DEFAULT_EVERY: Duration = Duration::minutes(5);
/// The shortest interval (a quiet `sync-collection` sync is one small
/// request per calendar; a local server in a test can take this).
pub const MIN_EVERY: Duration = Duration::seconds(2);
/// The longest.
pub const MAX_EVERY: Duration = Duration::days(1);

/// The state of an account's background sync.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Status {
    /// When the last sync of all its chosen calendars succeeded.
    pub synced_at: Option<DateTime<Utc>>,
    /// The last failure's message (cleared by a success).
    pub error: Option<String>,
    /// When it failed.
    pub error_at: Option<DateTime<Utc>>,
    /// Failures in a row.
    pub failures: u32,
    /// When the next sync is due.
    pub next_at: Option<DateTime<Utc>>,
}

fn status_key(account: i64) -> String {
    format!("caldav.status.{account}")
}

fn every_key(account: i64) -> String {
    format!("caldav.every.{account}")
}

fn time(v: &Value, k: &str) -> Option<DateTime<Utc>> {
    v.get(k)?
        .as_str()
        .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
        .map(|t| t.with_timezone(&Utc))
}

impl Status {
    /// As stored (the default when nothing is, or it cannot be read).
    ///
    /// # Errors
    /// The database.
    pub fn load(store: &Store, account: i64) -> Result<Self> {
        let Some(text) = store.read(|r| r.meta_get(&status_key(account)))? else {
            return Ok(Self::default());
        };
        let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        Ok(Self {
            synced_at: time(&v, "synced_at"),
            error: v.get("error").and_then(Value::as_str).map(str::to_owned),
            error_at: time(&v, "error_at"),
            failures: v
                .get("failures")
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or(0),
            next_at: time(&v, "next_at"),
        })
    }

    /// Stores it.
    ///
    /// # Errors
    /// The database.
    pub fn save(&self, store: &mut Store, account: i64) -> Result<()> {
        let text = self.to_json().to_string();
        store.write(|tx| tx.meta_set(&status_key(account), &text))?;
        Ok(())
    }

    /// As JSON fields (RFC 3339 times, `null` for none).
    #[must_use]
    pub fn to_json(&self) -> Value {
        let t = |t: Option<DateTime<Utc>>| t.map(|t| t.to_rfc3339());
        json!({
            "synced_at": t(self.synced_at), "error": self.error,
            "error_at": t(self.error_at), "failures": self.failures,
            "next_at": t(self.next_at),
        })
    }
}

/// The account's interval ([`DEFAULT_EVERY`] when none was chosen).
///
/// # Errors
/// The database.
pub fn every(store: &Store, account: i64) -> Result<Duration> {
    let v = store.read(|r| r.meta_get(&every_key(account)))?;
    Ok(v.and_then(|s| s.parse::<i64>().ok())
        .map_or(DEFAULT_EVERY, Duration::seconds)
        .clamp(MIN_EVERY, MAX_EVERY))
}

/// Chooses the account's interval.
///
/// # Errors
/// An interval outside [[`MIN_EVERY`], [`MAX_EVERY`]]; the database.
pub fn set_every(store: &mut Store, account: i64, every: Duration) -> Result<()> {
    if every < MIN_EVERY || every > MAX_EVERY {
        return Err(CaldavError::BadInterval(format!(
            "{} s is outside {} s to {} s",
            every.num_seconds(),
            MIN_EVERY.num_seconds(),
            MAX_EVERY.num_seconds()
        )));
    }
    let secs = every.num_seconds().to_string();
    store.write(|tx| tx.meta_set(&every_key(account), &secs))?;
    Ok(())
}

/// Asks the background sync to sync the account at its next look (an
/// account changed: a calendar chosen, a new interval or password): its
/// next sync is due `now`.
///
/// # Errors
/// The database.
pub fn sync_soon(store: &mut Store, account: i64, now: DateTime<Utc>) -> Result<()> {
    let mut st = Status::load(store, account)?;
    st.next_at = Some(now);
    st.save(store, account)
}

/// Forgets an account's status and interval (it was removed).
///
/// # Errors
/// The database.
pub fn forget(store: &mut Store, account: i64) -> Result<()> {
    store.write(|tx| {
        tx.meta_delete(&status_key(account))?;
        tx.meta_delete(&every_key(account))
    })?;
    Ok(())
}
