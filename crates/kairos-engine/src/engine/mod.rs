//! The delivery loop: due instances go `pending → firing → delivered`
//! (or `failed → retry | abandoned`, or `expired` when far too late), each
//! step a guarded update in SQLite, so a retry, a restart or a second engine
//! cannot deliver an instance twice once it is recorded delivered.
//!
//! The store is blocking; the engine runs on a dedicated thread with its own
//! single-threaded runtime (see `daemon`), so store calls never block a shared
//! async worker.

mod durable;
mod fire;
mod flight;
mod journal;
mod record;
mod shown;

pub use durable::AT_RISK;
pub use fire::{RECORD_EVERY, RECORD_WITHIN_MS};
pub use flight::MAX_IN_FLIGHT;
pub use shown::{HERE, MAX_SHOWN};

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use kairos_core::Limits;
use kairos_core::workdays::WorkTime;
use kairos_store::{NewInstance, State, Store, StoreError};

use crate::channel::Channel;
use crate::clock::Clock;
pub use crate::error::EngineError;
pub use crate::events::{EngineEvent, Notice, NoticeSender};
use crate::materialise::{CalendarLabel, plan_with};
pub use crate::meta::FLOATING_ZONE;
use crate::meta::{MATERIALISED_UNTIL, database_zone, materialised_until, zone_named};
use crate::policy::CatchUp;

/// Engine settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// How far ahead instances are materialised (DESIGN.md §2: a short
    /// horizon, never an infinite series).
    pub horizon: Duration,
    /// Most instances handled per round.
    pub batch: usize,
    /// Zone for floating times when the database names none
    /// ([`FLOATING_ZONE`]).
    pub floating: Tz,
    /// Lateness policy.
    pub catch_up: CatchUp,
    /// Most reminders delivered before their outcomes are committed (group
    /// commit by count; [`RECORD_EVERY`]). At most [`AT_RISK`]. (A SIGKILL
    /// repeats only the attempt in flight: the journal records each
    /// delivery as it happens.)
    pub record_every: usize,
    /// Longest a group of delivered reminders keeps growing before it is
    /// committed (group commit by time; [`RECORD_WITHIN_MS`]), measured on
    /// the engine's clock from the moment its first delivery began.
    pub record_within: Duration,
    /// Most delivery attempts running at once on one channel; more wait in
    /// its queue ([`MAX_IN_FLIGHT`]). Attempts on different channels, and
    /// of different reminders, run concurrently, each bounded by its
    /// channel's [`Channel::timeout`].
    pub max_in_flight: usize,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            horizon: Duration::hours(48),
            batch: 1000,
            floating: Tz::UTC,
            catch_up: CatchUp::default(),
            record_every: RECORD_EVERY,
            record_within: Duration::milliseconds(RECORD_WITHIN_MS),
            max_in_flight: MAX_IN_FLIGHT,
        }
    }
}

/// Counters of one engine's life, for `kairos log` and the benches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Delivered within the precision budget.
    pub on_time: u64,
    /// Delivered late but within the grace period.
    pub late: u64,
    /// Delivered as missed (fell due while not running).
    pub missed: u64,
    /// Recorded expired, not delivered.
    pub expired: u64,
    /// A second delivery refused because one was already recorded.
    pub duplicates_prevented: u64,
    /// Delivery attempts that failed.
    pub failures: u64,
    /// Given up after bounded retries.
    pub abandoned: u64,
}

/// The delivery engine over one store.
pub struct Engine {
    store: Store,
    clock: Arc<dyn Clock>,
    /// Shared with the attempts running on them ([`flight`]).
    channels: Vec<Arc<dyn Channel>>,
    config: Config,
    limits: Limits,
    /// Flushes committed outcomes to the disk off the delivery path.
    durability: durable::Durability,
    /// What was delivered and is not yet recorded (`None`: in memory, or
    /// switched off after a write failed).
    journal: Option<journal::Journal>,
    /// `(key, channel)` attempts a dead engine began and never finished,
    /// from its journal ([`Engine::recover`]): delivered again as `repeat`.
    in_doubt: std::collections::HashSet<(String, String)>,
    /// Delivery attempts running or waiting, and the group of finished
    /// reminders not yet recorded.
    flights: flight::Flights,
    /// Notices from other threads (see [`Engine::notices`]).
    inbox: (NoticeSender, std::sync::mpsc::Receiver<Notice>),
    /// What happened, for subscribers.
    events: tokio::sync::broadcast::Sender<EngineEvent>,
    /// Reminders delivered in this run and not yet taken back ([`shown`]).
    shown: shown::Shown,
    /// Counters since start.
    pub stats: Stats,
}

impl Engine {
    /// An engine over `store`, delivering to `channels`. The flusher thread
    /// (see `durable`) starts with the first delivery and stops when the
    /// engine is dropped, after flushing what was committed.
    pub fn new(
        store: Store,
        clock: Arc<dyn Clock>,
        channels: Vec<Box<dyn Channel>>,
        config: Config,
    ) -> Self {
        let journal = journal::Journal::beside(store.path());
        let channels: Vec<Arc<dyn Channel>> = channels.into_iter().map(Arc::from).collect();
        Self {
            flights: flight::Flights::new(channels.len()),
            store,
            clock,
            channels,
            config,
            limits: Limits::default(),
            durability: durable::Durability::new(),
            journal,
            in_doubt: std::collections::HashSet::new(),
            inbox: std::sync::mpsc::channel(),
            events: tokio::sync::broadcast::channel(1024).0,
            shown: shown::Shown::default(),
            stats: Stats::default(),
        }
    }

    /// Announcements of what the engine did (fired, withdrawn). A slow
    /// subscriber misses old ones (it is told how many), never blocks.
    #[must_use]
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<EngineEvent> {
        self.events.subscribe()
    }

    /// A sender for notices (reminders to take back, acknowledgements to
    /// announce); the loop acts on them ([`Engine::handle_notices`]) when
    /// it next wakes.
    #[must_use]
    pub fn notices(&self) -> NoticeSender {
        self.inbox.0.clone()
    }

    /// The store (for the CLI's read-only commands and tests).
    pub fn store(&mut self) -> &mut Store {
        &mut self.store
    }

    /// Makes sure every alarm due up to `now + horizon` has a pending
    /// instance. Idempotent: instances are inserted by key.
    ///
    /// # Errors
    /// Store failures; an event that no longer parses.
    pub fn materialise(&mut self) -> Result<usize, EngineError> {
        let fallback = self.config.floating;
        let floating = database_zone(&self.store, fallback)?;
        let now = self.clock.now();
        // The account's server plans its fallbacks in this zone too.
        crate::sync::zone::report(&mut self.store, floating, now)?;
        let from = materialised_until(&self.store)?.unwrap_or(now);
        let to = now + self.config.horizon;
        // More than half a horizon is ready: nothing to do, and no commit
        // (an fsync on every wake-up was a large part of the lateness tail).
        if from > now + self.config.horizon / 2 {
            return Ok(0);
        }
        let mut added = 0;
        let holidays = self
            .store
            .read(|r| crate::workdays::holiday_dates(r, from, to))?;
        let weeks = self.store.work_settings()?;
        for cal in self.store.calendars()? {
            let events = self.store.events_of(cal.id)?;
            let parsed = crate::series::decode(&events, &cal.name, &self.limits)?;
            let label = CalendarLabel {
                uid: &cal.uid,
                name: &cal.name,
            };
            let work = WorkTime {
                week: crate::workdays::week_of(&weeks, cal.id),
                holidays: holidays.clone(),
            };
            let planned = plan_with(label, &parsed, from, to, floating, &self.limits, &work)
                .map_err(|source| EngineError::Calendar {
                    calendar: cal.name.clone(),
                    uid: "(calendar)".into(),
                    source,
                })?;
            let new: Vec<NewInstance> = planned.iter().map(|p| p.instance(cal.id)).collect();
            // Planned in `floating`: if the app moved floating times to
            // another zone meanwhile (and replanned them), these are stale;
            // the next round plans again in the new one.
            let inserted = self
                .store
                .write(|tx| -> Result<Option<usize>, StoreError> {
                    if zone_named(tx.meta_get(FLOATING_ZONE)?, fallback) != floating {
                        return Ok(None);
                    }
                    let k = tx.insert_instances(&new, now)?;
                    crate::sync::acks::enforce_on_new(tx, new.iter().map(|i| &i.key), now)?;
                    Ok(Some(k))
                })?;
            match inserted {
                Some(k) => added += k,
                None => return Ok(added),
            }
        }
        self.store.meta_set(MATERIALISED_UNTIL, &to.to_rfc3339())?;
        Ok(added)
    }

    /// When the engine must next wake: the earliest pending trigger or retry,
    /// or the horizon refresh, whichever is first.
    ///
    /// # Errors
    /// Store failures.
    pub fn next_wake(&self) -> Result<DateTime<Utc>, EngineError> {
        let now = self.clock.now();
        // Materialisation is due once less than half a horizon is left.
        let refresh = materialised_until(&self.store)?
            .map_or(now, |u| u - self.config.horizon / 2)
            .max(now);
        let pending = self.store.earliest_pending()?.map(|(_, t)| t);
        let retry = self.store.earliest_retry()?.map(|(_, t)| t);
        Ok([Some(refresh), pending, retry]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(refresh))
    }

    /// Recovery at start: an instance left `firing` by a crash may or may not
    /// have reached its channels. Its deliveries the journal holds are
    /// recorded (not made again); an attempt the journal shows begun and
    /// unfinished is made again marked `repeat`; the rest are delivered
    /// normally (see `journal`). Returns how many were left `firing`.
    ///
    /// # Errors
    /// Store failures.
    pub fn recover(&mut self) -> Result<usize, EngineError> {
        let now = self.clock.now();
        let stuck = self
            .store
            .in_state(State::Firing, self.config.batch.max(100_000))?;
        let replay = self
            .journal
            .as_ref()
            .map(journal::Journal::replay)
            .unwrap_or_default();
        let firing: std::collections::HashSet<&str> =
            stuck.iter().map(|i| i.key.as_str()).collect();
        let n = self.store.write(|tx| -> Result<usize, StoreError> {
            for d in replay
                .delivered
                .iter()
                .filter(|d| firing.contains(d.key.as_str()))
            {
                // Already recorded or not, the delivery happened once.
                let _ = tx.record_delivery(
                    &d.key,
                    &d.channel,
                    kairos_store::Outcome::Delivered,
                    None,
                    Some(d.latency_ms),
                    d.at,
                )?;
            }
            let mut n = 0;
            for inst in &stuck {
                let reached = |ch: &str| {
                    replay
                        .delivered
                        .iter()
                        .any(|d| d.key == inst.key && d.channel == ch)
                };
                let (to, reason) = if self.channels.iter().all(|ch| reached(ch.name())) {
                    (
                        State::Delivered,
                        "delivered before a crash (from the journal)",
                    )
                } else {
                    (State::Pending, "recovered after a crash while firing")
                };
                if tx.transition(&inst.key, &[State::Firing], to, reason, now)? {
                    n += 1;
                }
            }
            Ok(n)
        })?;
        self.in_doubt = replay
            .in_flight
            .into_iter()
            .filter(|(key, _)| firing.contains(key.as_str()))
            .collect();
        // Committed (and synced: `write`): the journal's facts are in the
        // database now.
        if let Some(j) = self.journal.as_mut() {
            j.clear();
        }
        Ok(n)
    }
}
