//! ICS subscriptions in the desktop: add a calendar from a URL, list the
//! subscriptions with their last refresh and error, refresh one now,
//! remove one. All of it is `kairos_feeds` (the code `kairos subscribe`
//! runs); this only turns its answers into IPC types.
//!
//! Like Settings → Sync these wait on the network, so they are not
//! [`crate::App`] methods: the shell runs them on the blocking pool through
//! a [`Feeds`] handle with a store connection of its own, without the
//! app's lock (the views stay usable while a slow feed takes its time;
//! the fetch itself is bounded by `kairos_feeds::fetch::Limits`). A first
//! fetch that fails stores nothing: no calendar, no subscription.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use chrono_tz::Tz;
use kairos_feeds::{FeedError, Kind, Refresher};
use kairos_store::{CalendarId, Store, Subscription};

use crate::api::{ApiError, ErrorKind, FeedProblem, SubscribeRequest, SubscriptionView};
use crate::error::ApiResult;

/// The shortest and longest refresh interval offered, minutes (the
/// feeds' own bounds: 5 min to 7 days).
pub const EVERY_MINUTES: std::ops::RangeInclusive<u32> = 5..=10_080;

/// ICS subscriptions on one database.
#[derive(Debug, Clone)]
pub struct Feeds {
    db: PathBuf,
    /// Floating times' zone (the display zone).
    floating: Tz,
}

fn rfc(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

fn kind_of(k: Kind) -> ErrorKind {
    match k {
        Kind::Url => ErrorKind::FeedUrl,
        Kind::Unreachable => ErrorKind::FeedUnreachable,
        Kind::Timeout => ErrorKind::FeedTimeout,
        Kind::Http => ErrorKind::FeedHttp,
        Kind::TooLarge => ErrorKind::FeedTooLarge,
        Kind::NotCalendar => ErrorKind::FeedNotCalendar,
        Kind::CalendarInUse => ErrorKind::FeedCalendarInUse,
        Kind::Other => ErrorKind::Internal,
    }
}

impl From<FeedError> for ApiError {
    fn from(e: FeedError) -> Self {
        match e {
            FeedError::Store(s) => s.into(),
            FeedError::Engine(x) => x.into(),
            FeedError::Unknown(name) => {
                ApiError::not_found(format!("calendar {name:?} is not subscribed to a feed"))
            }
            FeedError::Every { .. } => ApiError::invalid(format!("interval: {e}")),
            other => ApiError {
                kind: kind_of(other.kind()),
                message: other.to_string(),
            },
        }
    }
}

fn view(s: Subscription) -> SubscriptionView {
    SubscriptionView {
        calendar_id: s.calendar.0,
        calendar: s.name,
        url: s.url,
        every_minutes: u32::try_from(s.every_secs / 60).unwrap_or(u32::MAX),
        last_refresh: s.last_refresh.map(rfc),
        last_ok: s.last_ok.map(rfc),
        last_error: s.last_error.map(|m| FeedProblem {
            kind: kind_of(Kind::of_message(&m)),
            message: m,
        }),
        next_refresh: rfc(s.next_at),
    }
}

/// Runs one async feed request to its end on a runtime of its own.
fn run<T>(f: impl Future<Output = Result<T, FeedError>>) -> ApiResult<T> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ApiError::internal(format!("cannot start the network runtime: {e}")))?;
    Ok(rt.block_on(f)?)
}

impl Feeds {
    /// Subscriptions of the database at `db`; floating times of the feeds
    /// are read in `floating`.
    #[must_use]
    pub fn new(db: &Path, floating: Tz) -> Self {
        Self {
            db: db.to_owned(),
            floating,
        }
    }

    fn store(&self) -> ApiResult<Store> {
        Ok(Store::open(&self.db)?)
    }

    fn refresher(&self) -> ApiResult<Refresher> {
        Ok(Refresher::new(self.floating)?)
    }

    fn one(store: &Store, id: i64) -> ApiResult<Subscription> {
        store
            .read(|r| r.subscription(CalendarId(id)))?
            .ok_or_else(|| {
                ApiError::not_found(format!("calendar {id} is not subscribed to a feed"))
            })
    }

    /// Every subscription, by calendar name.
    ///
    /// # Errors
    /// The database cannot be read.
    pub fn list(&self) -> ApiResult<Vec<SubscriptionView>> {
        let mut subs = self.store()?.read(|r| r.subscriptions())?;
        subs.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(subs.into_iter().map(view).collect())
    }

    /// Subscribes: fetches the feed at once and stores its events and the
    /// subscription. A fetch that fails stores nothing.
    ///
    /// # Errors
    /// The URL (`feed_url`), the interval (`invalid`), the fetch and the
    /// body (`feed_*`, the message says what the server did), a calendar
    /// of that name with events of its own (`feed_calendar_in_use`).
    pub fn add(&self, req: &SubscribeRequest, now: DateTime<Utc>) -> ApiResult<SubscriptionView> {
        if !EVERY_MINUTES.contains(&req.every_minutes) {
            return Err(ApiError::invalid(format!(
                "interval: {} min is out of range (5 min to 7 days)",
                req.every_minutes
            )));
        }
        let name = req.calendar.trim();
        if name.chars().count() > 200 {
            return Err(ApiError::invalid("name: at most 200 characters"));
        }
        let refresher = self.refresher()?;
        let mut store = self.store()?;
        let every = Duration::minutes(i64::from(req.every_minutes));
        let done = run(refresher.subscribe(
            &mut store,
            &req.url,
            Some(name).filter(|n| !n.is_empty()),
            every,
            now,
        ))?;
        let sub = store
            .read(|r| r.subscriptions())?
            .into_iter()
            .find(|s| s.name == done.calendar)
            .ok_or_else(|| ApiError::internal("the subscription was not stored"))?;
        Ok(view(sub))
    }

    /// Refreshes calendar `id`'s feed now. A failed fetch is not an
    /// error here: it is the answer's `last_error`, and the calendar kept
    /// its last good copy.
    ///
    /// # Errors
    /// Not a subscribed calendar; the database.
    pub fn refresh(&self, id: i64, now: DateTime<Utc>) -> ApiResult<SubscriptionView> {
        let refresher = self.refresher()?;
        let mut store = self.store()?;
        let sub = Self::one(&store, id)?;
        run(refresher.refresh(
            &mut store,
            &sub,
            now,
            kairos_feeds::schedule::random_jitter(),
        ))?;
        Ok(view(Self::one(&store, id)?))
    }

    /// Ends calendar `id`'s subscription at `now`; the calendar and its
    /// events stay (no longer refreshed, and editable again).
    ///
    /// # Errors
    /// Not a subscribed calendar; the database.
    pub fn remove(&self, id: i64, now: DateTime<Utc>) -> ApiResult<()> {
        let mut store = self.store()?;
        let sub = Self::one(&store, id)?;
        kairos_feeds::refresh::remove(&mut store, &sub.name, now)?;
        Ok(())
    }
}

impl crate::App {
    /// ICS subscriptions on this database (used without the app's lock:
    /// a fetch waits on the network). Feeds' floating times are read in
    /// the display zone.
    #[must_use]
    pub fn feeds(&self) -> Feeds {
        Feeds::new(&self.path, self.display_tz())
    }

    /// Refuses a change to the events of a subscribed calendar: the next
    /// refresh would replace it with the feed's copy (unsubscribe first).
    pub(crate) fn writable(&self, calendar_id: i64) -> ApiResult<()> {
        match self
            .store
            .read(|r| r.subscription(CalendarId(calendar_id)))?
        {
            Some(s) => Err(ApiError::invalid(format!(
                "calendar {:?} is a subscription: its events are read-only (the next refresh \
                 would replace a change); unsubscribe to edit them",
                s.name
            ))),
            None => Ok(()),
        }
    }
}
