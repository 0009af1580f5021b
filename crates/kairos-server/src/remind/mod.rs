//! Server-side reminders (issue #21 §2): the server as one more replica of
//! each opted-in account's calendars, a durable delay queue of their
//! reminder instances, and fallback deliveries (webhook, e-mail) for the
//! reminders no device acknowledged in time.
//!
//! How the pieces fit:
//! - `replica` (pure) applies an account's ops by the protocol's merge
//!   rules and plans its instances in a window with the engine's own
//!   planner, so the keys are the devices' keys;
//! - `sqlite` / `pg` keep the replica, the queue and the deliveries in the
//!   server's store (tables of `migrations/0002_remind.sql`), each round one
//!   transaction guarded by the account's cursor, so two instances on one
//!   PostgreSQL never both apply the same ops;
//! - [`Reminders::replicate`] is one round of "read new ops, plan the
//!   window, store"; `now` is always an argument.
//!
//! Only accounts with a fallback configured are replicated: the server does
//! not plan reminders nobody asked it to send.

mod ack_store;
pub mod chat;
mod claim;
pub mod email;
mod finish;
pub mod gate;
pub mod metrics;
mod pg;
mod plan_pg;
mod rate;
mod reconfigure;
mod replica;
mod round;
mod run;
mod send;
pub mod serve;
mod shared;
mod shared_sql;
mod snooze;
mod sqlite;
pub mod webhook;
pub mod worker;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::store::{Database, StoreError};

pub use claim::{Claimed, Finish};
pub use pg::NEXT_DUE_PG;
pub use replica::Instance;
pub use worker::{Channels, Drained, Options};

use round::plan;
pub(crate) use round::{Due, Loaded, Stored, Write};

/// How far ahead instances are planned.
pub const WINDOW: Duration = Duration::from_secs(48 * 3600);
/// How far back a round plans (a server that was down delivers what fell
/// due meanwhile, late, rather than never).
pub const LOOKBACK: Duration = Duration::from_secs(3600);

/// A fallback channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    /// A JSON POST signed with HMAC-SHA256.
    Webhook,
    /// An e-mail over SMTP.
    Email,
}

impl Channel {
    /// Its name in the store and on the command line.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Webhook => "webhook",
            Self::Email => "email",
        }
    }

    /// The channel named `s`.
    ///
    /// # Errors
    /// Not a channel's name.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "webhook" => Ok(Self::Webhook),
            "email" => Ok(Self::Email),
            other => Err(format!("channel {other:?} is not webhook or email")),
        }
    }
}

/// "If no device acknowledged a reminder of `calendar` `after` it fired
/// (or `always`), send it on `channel` to `target`."
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fallback {
    /// The account.
    pub account: String,
    /// A calendar uid, or `*` for every calendar without its own setting.
    pub calendar: String,
    /// How it is sent.
    pub channel: Channel,
    /// The webhook URL or the e-mail address.
    pub target: String,
    /// The webhook's signing secret.
    pub secret: Option<String>,
    /// How long after the trigger an unacknowledged reminder is sent.
    pub after: Duration,
    /// Send even when a device acknowledged it.
    pub always: bool,
}

impl Fallback {
    /// [`Fallback::after`] in milliseconds.
    pub(crate) fn after_ms(&self) -> i64 {
        i64::try_from(self.after.as_millis()).unwrap_or(i64::MAX)
    }
}

/// What one round of [`Reminders::replicate`] did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Round {
    /// Accounts replicated.
    pub accounts: usize,
    /// Instances added to the queue.
    pub planned: usize,
    /// Pending instances withdrawn (their event moved or went away).
    pub withdrawn: usize,
    /// Instances marked acknowledged.
    pub acked: usize,
    /// Instances snoozed on a device: their fallbacks moved to N after the
    /// snooze's end.
    pub snoozed: usize,
    /// Deliveries queued.
    pub deliveries: usize,
    /// Series that did not parse (named).
    pub skipped: Vec<String>,
}

/// The queue's rows of one instance, for tests and `why`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// Its key.
    pub key: String,
    /// When it goes off.
    pub due: DateTime<Utc>,
    /// `pending`, `acked` or `withdrawn`.
    pub state: String,
}

enum Db {
    Sqlite(sqlite::Sqlite),
    Postgres(pg::Pg),
}

/// The server's reminder replica and queue, on either store, with this
/// instance's view of the breakers (`gate`; their state and the rate
/// buckets are in the store, shared) and its metrics.
pub struct Reminders {
    db: Db,
    gate: Mutex<gate::Gate>,
    metrics: Arc<crate::metrics::Metrics>,
    /// This instance's order of the accounts in a round (see
    /// [`Reminders::replicate`]).
    spread: u64,
}

pub(crate) fn ms(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

pub(crate) fn from_ms(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or_default()
}

impl Reminders {
    /// Opens the reminder tables of `db` (the server's store, already
    /// migrated: SQLite migrates itself when opened, PostgreSQL by
    /// `kairos-server migrate`).
    ///
    /// # Errors
    /// The store cannot be opened.
    pub async fn open(db: &Database) -> Result<Self, StoreError> {
        let db = match db {
            Database::Sqlite(data) => Db::Sqlite(sqlite::Sqlite::open(data).await?),
            Database::Postgres(url) => Db::Postgres(pg::Pg::connect(url)?),
        };
        Ok(Self {
            db,
            gate: Mutex::default(),
            metrics: Arc::default(),
            spread: {
                let mut b = [0u8; 8];
                // A fixed order is only slower when instances share a
                // store, never wrong.
                let _ = getrandom::fill(&mut b);
                u64::from_le_bytes(b)
            },
        })
    }

    /// Sets (or replaces) a fallback; the account is planned again at the
    /// next round. The deliveries already queued under it take its target,
    /// secret and delay (`reconfigure`; the wall clock only stamps their
    /// audit lines).
    ///
    /// # Errors
    /// The store, or no such account.
    pub async fn configure(&self, f: Fallback) -> Result<(), StoreError> {
        let now = ms(Utc::now());
        match &self.db {
            Db::Sqlite(s) => s.configure(f, now).await,
            Db::Postgres(p) => p.configure(&f, now).await,
        }
    }

    /// Sets the zone `account`'s floating times and working hours are read
    /// in (see `migrations/0009_remind_zone.sql`); the account is planned
    /// again at the next round: instances whose key or time the zone
    /// changes are withdrawn and planned anew.
    ///
    /// # Errors
    /// The store, or no such account.
    pub async fn set_zone(&self, account: &str, zone: chrono_tz::Tz) -> Result<(), StoreError> {
        match &self.db {
            Db::Sqlite(s) => s.set_zone(account, zone.name()).await,
            Db::Postgres(p) => p.set_zone(account, zone.name()).await,
        }
    }

    /// One round: every opted-in account with new ops, or whose planned
    /// window ends within half a window of `now`, is brought up to date.
    ///
    /// # Errors
    /// The store.
    pub async fn replicate(&self, now: DateTime<Utc>) -> Result<Round, StoreError> {
        let half = chrono::Duration::from_std(WINDOW / 2).unwrap_or_default();
        let due = match &self.db {
            Db::Sqlite(s) => s.due(ms(now + half)).await?,
            Db::Postgres(p) => p.due(ms(now + half)).await?,
        };
        // Each instance takes the accounts in an order of its own: on one
        // PostgreSQL, two instances taking them in the same order plan
        // each account twice (the one that loses the account's cursor
        // planned for nothing, then waits on the winner and rolls back).
        let mut due = due;
        due.sort_by_key(|(account, ..)| spread(self.spread, account));
        let mut round = Round::default();
        for (account, _head, cursor, until) in due {
            let loaded = match &self.db {
                Db::Sqlite(s) => s.load(&account, cursor).await?,
                Db::Postgres(p) => p.load(&account, cursor).await?,
            };
            let w = plan(account, cursor, until, now, loaded, &mut round)?;
            let stored = match &self.db {
                Db::Sqlite(s) => s.apply(w).await?,
                Db::Postgres(p) => p.apply(w).await?,
            };
            if let Some(r) = stored {
                for channel in &r.cancelled_by_ack {
                    self.metrics.reminders.outcome(channel, "cancelled_ack");
                }
                round.accounts += 1;
                round.planned += r.planned;
                round.withdrawn += r.withdrawn;
                round.acked += r.acked;
                round.snoozed += r.snoozed;
                round.deliveries += r.deliveries;
            }
        }
        Ok(round)
    }

    /// The audit trail of `key` (in every account that has it): (account,
    /// when, what), oldest first.
    ///
    /// # Errors
    /// The store.
    pub async fn why(&self, key: &str) -> Result<Vec<(String, DateTime<Utc>, String)>, StoreError> {
        let rows = match &self.db {
            Db::Sqlite(s) => {
                let key = key.to_owned();
                s.run(move |c| {
                    let rows = c
                        .prepare_cached(
                            "SELECT account, at_ms, event FROM remind_audit WHERE key = ?1 ORDER BY at_ms, rowid",
                        )?
                        .query_map([&key], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                        .collect::<Result<Vec<(String, i64, String)>, _>>()?;
                    Ok(rows)
                })
                .await?
            }
            Db::Postgres(p) => p
                .get()
                .await?
                .query(finish::PG_WHY, &[&key])
                .await?
                .iter()
                .map(|r| (r.get(0), r.get(1), r.get(2)))
                .collect(),
        };
        Ok(rows
            .into_iter()
            .map(|(a, t, e)| (a, from_ms(t), e))
            .collect())
    }

    /// The fallbacks set for `account` (one per calendar and channel).
    ///
    /// # Errors
    /// The store.
    pub async fn fallbacks(&self, account: &str) -> Result<Vec<Fallback>, StoreError> {
        match &self.db {
            Db::Sqlite(s) => {
                let account = account.to_owned();
                s.run(move |c| sqlite::fallbacks(c, &account)).await
            }
            Db::Postgres(p) => pg::fallbacks(&p.get().await?, account).await,
        }
    }

    /// The queued instances of `account`, by due time.
    ///
    /// # Errors
    /// The store.
    pub async fn instances(&self, account: &str) -> Result<Vec<Row>, StoreError> {
        match &self.db {
            Db::Sqlite(s) => s.instances(account).await,
            Db::Postgres(p) => p.instances(account).await,
        }
    }
}

/// `sql` written for SQLite with PostgreSQL's placeholders (`?N` → `$N`,
/// up to 19).
pub(crate) fn dollars(sql: &str) -> String {
    let mut sql = sql.to_owned();
    for n in (1..=19).rev() {
        sql = sql.replace(&format!("?{n}"), &format!("${n}"));
    }
    sql
}

/// `account`'s place in the order of the instance whose seed is `seed`
/// (FNV-1a over the seed and the name).
fn spread(seed: u64, account: &str) -> u64 {
    crate::fnv1a(seed.to_le_bytes().into_iter().chain(account.bytes()))
}

/// A delivery's place among its second's (`rank` in the queue): the
/// task's priority, 10 for none.
pub(crate) fn rank(priority: Option<u8>) -> i64 {
    priority.map_or(10, i64::from)
}

/// The fallbacks that apply to `calendar`: per channel, its own setting,
/// else the account's `*`.
pub(crate) fn effective<'a>(fallbacks: &'a [Fallback], calendar: &str) -> Vec<&'a Fallback> {
    let mut out: Vec<&Fallback> = Vec::new();
    for f in fallbacks.iter().filter(|f| f.calendar == calendar) {
        out.push(f);
    }
    for f in fallbacks.iter().filter(|f| f.calendar == "*") {
        if !out.iter().any(|o| o.channel == f.channel) {
            out.push(f);
        }
    }
    out
}
