//! Subscribing and refreshing: fetch, check, then replace the calendar's
//! content through the engine's one import path
//! ([`kairos_engine::import::import_with`] in [`Mode::Replace`], the path
//! of `kairos import --replace`), and record how it went. A refresh that
//! fails changes nothing but the subscription's row: the calendar keeps its
//! last good copy.

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use kairos_core::ics::Warning;
use kairos_engine::import::{ImportReport, Mode, import_with};
use kairos_engine::sync::feed::record_feed;
use kairos_store::{RefreshResult, Store, Subscription};

use crate::body;
use crate::error::FeedError;
use crate::fetch::{Failure, Fetched, Fetcher, Validators};
use crate::schedule::{self, MAX_EVERY, MIN_EVERY};
use crate::url::feed_url;

/// How one refresh ended.
#[derive(Debug)]
pub enum Outcome {
    /// 304: nothing to do (nothing parsed, nothing written but the times).
    NotModified,
    /// A new body replaced the calendar's content.
    Updated {
        /// What changed.
        report: ImportReport,
        /// What lenient reading repaired or skipped.
        warnings: Vec<Warning>,
    },
    /// It failed; the calendar kept its last good copy.
    Failed(FeedError),
}

/// One subscription's refresh.
#[derive(Debug)]
pub struct Refreshed {
    /// The calendar's name.
    pub calendar: String,
    /// How it ended.
    pub outcome: Outcome,
    /// When the next one is due.
    pub next_at: DateTime<Utc>,
}

/// Refreshes subscriptions of one database.
#[derive(Debug, Clone)]
pub struct Refresher {
    /// The HTTP client.
    pub fetcher: Fetcher,
    /// The engine's materialisation horizon.
    pub horizon: Duration,
    /// The zone of floating times (when the database has none of its own).
    pub floating: Tz,
}

/// `every` checked against [`MIN_EVERY`]..=[`MAX_EVERY`].
///
/// # Errors
/// Out of range (the message names the bounds).
pub fn check_every(every: Duration) -> Result<Duration, FeedError> {
    if every < MIN_EVERY || every > MAX_EVERY {
        return Err(FeedError::Every {
            minutes: every.num_minutes(),
        });
    }
    Ok(every)
}

impl Refresher {
    /// A refresher with the default fetch limits and the engine's default
    /// horizon (what `kairos subscribe` and the desktop app use).
    ///
    /// # Errors
    /// The HTTP client cannot be built.
    pub fn new(floating: Tz) -> Result<Self, FeedError> {
        Ok(Self {
            fetcher: Fetcher::new(crate::Limits::default())?,
            horizon: kairos_engine::engine::Config::default().horizon,
            floating,
        })
    }

    /// Subscribes calendar `calendar` (default: the feed's `X-WR-CALNAME`,
    /// else the URL's host) to `url`: fetches it at once and stores the
    /// events and the subscription. Nothing is stored when the first
    /// fetch fails.
    ///
    /// # Errors
    /// The URL, the interval, the fetch, the body; a calendar that has
    /// events of its own; the store.
    pub async fn subscribe(
        &self,
        store: &mut Store,
        url: &str,
        calendar: Option<&str>,
        every: Duration,
        now: DateTime<Utc>,
    ) -> Result<Refreshed, FeedError> {
        let url = feed_url(url)?;
        let every = check_every(every)?;
        let fetched = self
            .fetcher
            .fetch(&url, &Validators::default(), now)
            .await
            .map_err(|f| f.error)?;
        let Fetched::Body {
            bytes,
            content_type,
            validators,
        } = fetched
        else {
            // No validators were sent: a 304 is the server's mistake.
            return Err(FeedError::Status {
                status: 304,
                reason: "Not Modified (to a request without validators)".into(),
            });
        };
        let (cal, warnings) = body::read(&bytes, content_type.as_deref())?;
        let name = calendar
            .map(str::to_owned)
            .or_else(|| cal.name.clone().filter(|n| !n.trim().is_empty()))
            .unwrap_or_else(|| host_of(&url));
        if let Some(c) = store.calendars()?.into_iter().find(|c| c.name == name) {
            let subscribed = store.read(|r| r.subscription(c.id))?.is_some();
            if !subscribed && !store.events_of(c.id)?.is_empty() {
                return Err(FeedError::CalendarInUse(name));
            }
        }
        // The subscription is in place (and recorded for sync) before the
        // events go in, so that a paired device records no series op for
        // them: every device of the account fetches the feed itself.
        let (cal_id, cal_uid) = kairos_engine::import::calendar_named(store, &name, now)?;
        let next_at = schedule::after_success(now, every, schedule::random_jitter());
        let secs = every.num_seconds();
        store.write(|tx| {
            tx.subscription_put(cal_id, &url, secs, next_at, now)?;
            record_feed(tx, &cal_uid, &url, secs, false, now).map(drop)
        })?;
        let report = match import_with(
            store,
            &name,
            &cal,
            Mode::Replace,
            now,
            self.horizon,
            self.floating,
        ) {
            Ok(report) => report,
            Err(e) => {
                // Nothing stays subscribed when the first copy was not stored.
                store.write(|tx| {
                    tx.subscription_remove(cal_id)?;
                    record_feed(tx, &cal_uid, &url, secs, true, now).map(drop)
                })?;
                return Err(e.into());
            }
        };
        store.write(|tx| tx.subscription_record(cal_id, applied(&validators), next_at, now))?;
        Ok(Refreshed {
            calendar: name,
            outcome: Outcome::Updated { report, warnings },
            next_at,
        })
    }

    /// Refreshes `sub` now. Only a store failure is an `Err`; a failed
    /// fetch is an [`Outcome::Failed`], recorded with its backoff.
    ///
    /// # Errors
    /// The store.
    pub async fn refresh(
        &self,
        store: &mut Store,
        sub: &Subscription,
        now: DateTime<Utc>,
        jitter: f64,
    ) -> Result<Refreshed, FeedError> {
        let every = Duration::seconds(sub.every_secs);
        let v = Validators {
            etag: sub.etag.clone(),
            last_modified: sub.last_modified.clone(),
        };
        let result = match self.fetcher.fetch(&sub.url, &v, now).await {
            Ok(Fetched::NotModified) => Ok(None),
            Ok(Fetched::Body {
                bytes,
                content_type,
                validators,
            }) => body::read(&bytes, content_type.as_deref())
                .map(|read| Some((read, validators)))
                .map_err(Failure::from),
            Err(f) => Err(f),
        };
        let (outcome, next_at) = match result {
            Ok(None) => {
                let next = schedule::after_success(now, every, jitter);
                store.write(|tx| {
                    tx.subscription_record(sub.calendar, RefreshResult::NotModified, next, now)
                })?;
                (Outcome::NotModified, next)
            }
            Ok(Some(((cal, warnings), validators))) => {
                let report = import_with(
                    store,
                    &sub.name,
                    &cal,
                    Mode::Replace,
                    now,
                    self.horizon,
                    self.floating,
                )?;
                let next = schedule::after_success(now, every, jitter);
                store.write(|tx| {
                    tx.subscription_record(sub.calendar, applied(&validators), next, now)
                })?;
                (Outcome::Updated { report, warnings }, next)
            }
            Err(Failure { error, retry_after }) => {
                let failures = u32::try_from(sub.failures)
                    .unwrap_or(u32::MAX)
                    .saturating_add(1);
                let next = schedule::after_failure(now, every, failures, retry_after, jitter);
                let text = error.to_string();
                store.write(|tx| {
                    tx.subscription_record(
                        sub.calendar,
                        RefreshResult::Failed { error: &text },
                        next,
                        now,
                    )
                })?;
                (Outcome::Failed(error), next)
            }
        };
        Ok(Refreshed {
            calendar: sub.name.clone(),
            outcome,
            next_at,
        })
    }

    /// Refreshes every subscription due at `now` (all of them with
    /// `force`), one after the other.
    ///
    /// # Errors
    /// The store.
    pub async fn refresh_due(
        &self,
        store: &mut Store,
        now: DateTime<Utc>,
        force: bool,
    ) -> Result<Vec<Refreshed>, FeedError> {
        let subs = store.read(|r| r.subscriptions())?;
        let mut done = Vec::new();
        for sub in subs.iter().filter(|s| force || s.next_at <= now) {
            done.push(
                self.refresh(store, sub, now, schedule::random_jitter())
                    .await?,
            );
        }
        Ok(done)
    }

    /// Refreshes the subscription of calendar `name` now.
    ///
    /// # Errors
    /// No such subscription; the store.
    pub async fn refresh_named(
        &self,
        store: &mut Store,
        name: &str,
        now: DateTime<Utc>,
    ) -> Result<Refreshed, FeedError> {
        let subs = store.read(|r| r.subscriptions())?;
        let sub = subs
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| FeedError::Unknown(name.to_owned()))?;
        self.refresh(store, sub, now, schedule::random_jitter())
            .await
    }
}

/// Ends the subscription of calendar `name`, recorded for sync (the
/// account's other devices drop the events they fetched from it); here
/// the calendar and its events stay (a copy that no longer changes).
///
/// # Errors
/// No such subscription; the store.
pub fn remove(store: &mut Store, name: &str, now: DateTime<Utc>) -> Result<(), FeedError> {
    let subs = store.read(|r| r.subscriptions())?;
    let sub = subs
        .iter()
        .find(|s| s.name == name)
        .ok_or_else(|| FeedError::Unknown(name.to_owned()))?;
    store.write(|tx| {
        tx.subscription_remove(sub.calendar)?;
        if let Some(c) = tx.calendars()?.into_iter().find(|c| c.id == sub.calendar) {
            record_feed(tx, &c.uid, &sub.url, sub.every_secs, true, now)?;
        }
        Ok::<_, kairos_store::StoreError>(())
    })?;
    Ok(())
}

fn applied(v: &Validators) -> RefreshResult<'_> {
    RefreshResult::Applied {
        etag: v.etag.as_deref(),
        last_modified: v.last_modified.as_deref(),
    }
}

fn host_of(url: &str) -> String {
    reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_else(|| "feed".to_owned())
}
