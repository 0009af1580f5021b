//! A calendar's ICS subscription as account state (`calendar.feed`,
//! protocol feature [`kairos_proto::FEATURE_FEED`], issue #19 §1).
//!
//! The subscription travels, not its events: every device that applies a
//! `calendar.feed` op stores the subscription (due at once) and fetches the
//! feed itself (`kairos-feeds`), so the same content gives the same
//! reminder keys everywhere (the calendar's uid, the event UID, the
//! occurrence, the alarm and the fingerprint of its content). A series of a
//! subscribed calendar is therefore never recorded as an op ([`is_feed`],
//! checked by [`super::record`]); its acknowledgements are, as for any
//! event.
//!
//! Architecture Invariant: this module knows the `subscriptions` rows and
//! the op; it knows no HTTP (fetching is `kairos-feeds`').

use chrono::{DateTime, Utc};
use kairos_proto::Body;
use kairos_store::{CalendarId, StoreError, Tx};

use super::record;

/// Whether calendar `cal_uid` is subscribed to a feed here (its series are
/// then not recorded for sync: every device fetches them).
///
/// # Errors
/// Store failures.
pub fn is_feed(tx: &Tx<'_>, cal_uid: &str) -> Result<bool, StoreError> {
    match tx.calendar_by_uid(cal_uid)? {
        Some(c) => Ok(tx.subscription(c.id)?.is_some()),
        None => Ok(false),
    }
}

/// Records a subscription of calendar `cal_uid` to `url`, refreshed every
/// `every_secs` (or its end, with `removed`: the op then names the URL
/// that ended) for sync, in the caller's transaction. Nothing on a
/// database that never joined. Returns whether an op was recorded.
///
/// # Errors
/// Store failures.
pub fn record_feed(
    tx: &Tx<'_>,
    cal_uid: &str,
    url: &str,
    every_secs: i64,
    removed: bool,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let (lo, hi) = (
        kairos_proto::MIN_FEED_EVERY_SECS,
        kairos_proto::MAX_FEED_EVERY_SECS,
    );
    let body = Body::CalendarFeed {
        calendar: cal_uid.to_owned(),
        url: url.to_owned(),
        every: u32::try_from(every_secs).unwrap_or(hi).clamp(lo, hi),
        removed,
    };
    Ok(record(tx, body, now)?.is_some())
}

/// Records the subscription of every subscribed calendar (what joining
/// an account tells it). Returns how many.
///
/// # Errors
/// Store failures.
pub(crate) fn record_all(tx: &Tx<'_>, now: DateTime<Utc>) -> Result<usize, StoreError> {
    let mut n = 0;
    for s in tx.subscriptions()? {
        let Some(c) = tx.calendars()?.into_iter().find(|c| c.id == s.calendar) else {
            continue;
        };
        n += usize::from(record_feed(tx, &c.uid, &s.url, s.every_secs, false, now)?);
    }
    Ok(n)
}

/// Applies another device's subscription of calendar `cal`: stored and
/// due at `now` (this device fetches it at its loop's next look, or at
/// once with `kairos subscriptions refresh`). A subscription already held
/// for the same URL and interval keeps its validators and schedule.
///
/// # Errors
/// Store failures.
pub(crate) fn apply_put(
    tx: &Tx<'_>,
    cal: CalendarId,
    url: &str,
    every: u32,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    if let Some(held) = tx.subscription(cal)?
        && held.url == url
        && held.every_secs == i64::from(every)
    {
        return Ok(());
    }
    tx.subscription_put(cal, url, i64::from(every), now, now)
}
