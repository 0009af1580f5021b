//! `subscriptions` (schema 0007): which calendars are ICS feeds, where
//! they come from, and how their last refreshes went. The fetching and the
//! schedule belong to `kairos-feeds`; this file only keeps the rows.

use chrono::{DateTime, Utc};
use rusqlite::{OptionalExtension, Row, params};

use super::{ms, opt_time_at, time_at};
use crate::error::{At, Result};
use crate::store::{Reader, Tx};
use crate::types::{CalendarId, Subscription};

const COLS: &str = "s.calendar_id, c.name, s.url, s.every_secs, s.etag, s.last_modified,
     s.last_refresh, s.last_ok, s.last_error, s.failures, s.next_at";

fn subscription(row: &Row<'_>) -> rusqlite::Result<Subscription> {
    Ok(Subscription {
        calendar: CalendarId(row.get(0)?),
        name: row.get(1)?,
        url: row.get(2)?,
        every_secs: row.get(3)?,
        etag: row.get(4)?,
        last_modified: row.get(5)?,
        last_refresh: opt_time_at(row, 6)?,
        last_ok: opt_time_at(row, 7)?,
        last_error: row.get(8)?,
        failures: row.get(9)?,
        next_at: time_at(row, 10)?,
    })
}

/// How a refresh ended, as recorded.
#[derive(Debug, Clone, Copy)]
pub enum RefreshResult<'a> {
    /// A new body was applied: its validators (either may be absent).
    Applied {
        /// `ETag` of the body.
        etag: Option<&'a str>,
        /// `Last-Modified` of the body.
        last_modified: Option<&'a str>,
    },
    /// 304 Not Modified: only the times change.
    NotModified,
    /// The refresh failed: the calendar kept its last good copy.
    Failed {
        /// Why (shown to the user).
        error: &'a str,
    },
}

impl Tx<'_> {
    /// Subscribes calendar `calendar` to `url` (replacing an earlier
    /// subscription of it, whose validators are then forgotten).
    pub fn subscription_put(
        &self,
        calendar: CalendarId,
        url: &str,
        every_secs: i64,
        next_at: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<()> {
        self.conn
            .prepare_cached(
                "INSERT INTO subscriptions (calendar_id, url, every_secs, next_at, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (calendar_id) DO UPDATE SET url = excluded.url,
                   every_secs = excluded.every_secs, next_at = excluded.next_at,
                   etag = NULL, last_modified = NULL, failures = 0",
            )
            .and_then(|mut s| s.execute(params![calendar.0, url, every_secs, ms(next_at), ms(now)]))
            .at(self.ctx)?;
        Ok(())
    }

    /// Ends the subscription of `calendar` (its events stay). Returns
    /// whether there was one.
    pub fn subscription_remove(&self, calendar: CalendarId) -> Result<bool> {
        let n = self
            .conn
            .prepare_cached("DELETE FROM subscriptions WHERE calendar_id = ?1")
            .and_then(|mut s| s.execute([calendar.0]))
            .at(self.ctx)?;
        Ok(n > 0)
    }

    /// Records a refresh attempt made at `now` and when the next is due.
    /// A failure counts one more consecutive failure and keeps the
    /// validators; a success resets the count and clears the error.
    /// Returns false when the subscription no longer exists.
    pub fn subscription_record(
        &self,
        calendar: CalendarId,
        result: RefreshResult<'_>,
        next_at: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<bool> {
        let (cal, next, at) = (calendar.0, ms(next_at), ms(now));
        let n = match result {
            RefreshResult::Applied {
                etag,
                last_modified,
            } => self
                .conn
                .prepare_cached(
                    "UPDATE subscriptions SET etag = ?4, last_modified = ?5, last_refresh = ?3,
                       last_ok = ?3, last_error = NULL, failures = 0, next_at = ?2
                     WHERE calendar_id = ?1",
                )
                .and_then(|mut s| s.execute(params![cal, next, at, etag, last_modified])),
            RefreshResult::NotModified => self
                .conn
                .prepare_cached(
                    "UPDATE subscriptions SET last_refresh = ?3, last_ok = ?3,
                       last_error = NULL, failures = 0, next_at = ?2
                     WHERE calendar_id = ?1",
                )
                .and_then(|mut s| s.execute(params![cal, next, at])),
            RefreshResult::Failed { error } => self
                .conn
                .prepare_cached(
                    "UPDATE subscriptions SET last_refresh = ?3, last_error = ?4,
                       failures = failures + 1, next_at = ?2
                     WHERE calendar_id = ?1",
                )
                .and_then(|mut s| s.execute(params![cal, next, at, error])),
        }
        .at(self.ctx)?;
        Ok(n > 0)
    }
}

impl Reader<'_> {
    /// Every subscription, by calendar name.
    pub fn subscriptions(&self) -> Result<Vec<Subscription>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {COLS} FROM subscriptions s JOIN calendars c ON c.id = s.calendar_id
                 ORDER BY c.name"
            ))
            .at(self.ctx)?;
        stmt.query_map([], subscription)
            .and_then(Iterator::collect)
            .at(self.ctx)
    }

    /// The subscription of `calendar`, if it is one.
    pub fn subscription(&self, calendar: CalendarId) -> Result<Option<Subscription>> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {COLS} FROM subscriptions s JOIN calendars c ON c.id = s.calendar_id
                 WHERE s.calendar_id = ?1"
            ))
            .and_then(|mut s| s.query_row([calendar.0], subscription).optional())
            .at(self.ctx)
    }
}
