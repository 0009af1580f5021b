//! The CalDAV accounts' background sync of a host: a thread of its own
//! (kairos-caldav is blocking: each request runs on the client's private
//! runtime, the store between requests), started after the lock is held,
//! so only the lock holder syncs.
//!
//! Each account is synced when the host starts, then every interval
//! (`kairos caldav add --every`, default 5 min, ±10 % jitter); after a
//! failure it backs off (1 min, 2, 4, … up to the interval). An account
//! changed meanwhile (`kairos caldav edit`, the app's Edit: its stored
//! next sync moved to now) is synced at the next look. What each
//! sync did is stored ([`kairos_caldav::status::Status`]: last success,
//! last error, failures in a row, next due) for `kairos caldav calendars`.
//!
//! A change made here is pushed soon after, woken, not polled: the host's
//! [`Waker`] (an edit or dismissal in this process, `kairos …` in a
//! terminal, a change applied by Kairos sync) and the engine's events
//! (an acknowledgement from another device, "the database changed") make
//! the loop look at once whether a chosen calendar holds a change the
//! server has not seen (read from the database, no request); only then
//! does it sync that account before its time. A series op from another
//! device linked to the same collection, left to this sync
//! (`kairos_engine::sync::caldav::FETCH_DUE`), makes it sync at once too:
//! the server has a change this device has not fetched. An account backing
//! off after a failure waits for its retry.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use kairos_caldav::secret::{self, SecretStore};
use kairos_caldav::status::{self, Status};
use kairos_caldav::{When, account};
use kairos_engine::clock::Clock;
use kairos_engine::engine::{EngineEvent, Notice, NoticeSender};
use kairos_feeds::schedule;
use kairos_store::{CaldavAccount, Store};
use tokio::sync::broadcast::{self, error::RecvError};
use tokio::sync::{Notify, watch};

use super::Waker;

/// The longest the loop waits before looking at the accounts again (one
/// added by `kairos caldav add` while the host runs).
const MAX_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// A running background sync.
pub(super) struct Caldav {
    stop: watch::Sender<bool>,
    thread: JoinHandle<()>,
}

/// What the loop needs.
struct Loop {
    db: PathBuf,
    clock: Arc<dyn Clock>,
    floating: Tz,
    horizon: Duration,
    wake: Arc<Notify>,
    /// Wakes the engine and the sync connection after a sync changed
    /// the database (not this loop: it made the change).
    engine: Arc<Notify>,
    outbox: Arc<Notify>,
    notices: NoticeSender,
}

impl Caldav {
    /// Starts it.
    pub(super) fn start(
        db: &Path,
        clock: Arc<dyn Clock>,
        floating: Tz,
        horizon: Duration,
        wake: &Waker,
        notices: &NoticeSender,
        events: broadcast::Receiver<EngineEvent>,
    ) -> std::io::Result<Self> {
        let (stop, stopped) = watch::channel(false);
        let l = Loop {
            db: db.to_owned(),
            clock,
            floating,
            horizon,
            wake: Arc::clone(&wake.caldav),
            engine: Arc::clone(&wake.changed),
            outbox: Arc::clone(&wake.outbox),
            notices: notices.clone(),
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let thread = std::thread::Builder::new()
            .name("kairos-caldav".into())
            .spawn(move || l.run(&rt, events, stopped))?;
        Ok(Self { stop, thread })
    }

    /// Stops the loop and waits for its thread (a sync in flight ends
    /// first: each of its requests is bounded).
    pub(super) fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.thread.join();
    }
}

/// Why the loop woke.
enum Woke {
    Timer,
    Change,
    Stop,
}

impl Loop {
    fn run(
        self,
        rt: &tokio::runtime::Runtime,
        mut events: broadcast::Receiver<EngineEvent>,
        mut stop: watch::Receiver<bool>,
    ) {
        // Made on first need: a database without accounts costs nothing
        // (and the OS secret store is not asked).
        let mut store: Option<Store> = None;
        let mut secrets: Option<Box<dyn SecretStore>> = None;
        // When each account is due; a host syncs each one when it starts.
        let mut due: HashMap<i64, DateTime<Utc>> = HashMap::new();
        let mut woke = Woke::Timer;
        loop {
            let wait = match self.round(&mut store, &mut secrets, &mut due, &woke) {
                Ok(w) => w,
                Err(e) => {
                    eprintln!("kairos: caldav: {e}");
                    store = None; // Open the database afresh next time.
                    MAX_WAIT
                }
            };
            woke = rt.block_on(async {
                let sleep = tokio::time::sleep(wait);
                tokio::pin!(sleep);
                loop {
                    tokio::select! {
                        () = &mut sleep => return Woke::Timer,
                        () = self.wake.notified() => return Woke::Change,
                        _ = stop.changed() => return Woke::Stop,
                        ev = events.recv() => match ev {
                            Ok(EngineEvent::Acknowledged { .. } | EngineEvent::Changed)
                            | Err(RecvError::Lagged(_)) => return Woke::Change,
                            Ok(_) => {}
                            Err(RecvError::Closed) => return Woke::Stop,
                        },
                    }
                }
            });
            if matches!(woke, Woke::Stop) || *stop.borrow() {
                return;
            }
        }
    }

    /// Syncs the accounts that are due (or, woken by a change, those
    /// holding a change made here); returns how long to wait.
    fn round(
        &self,
        slot: &mut Option<Store>,
        secrets: &mut Option<Box<dyn SecretStore>>,
        due: &mut HashMap<i64, DateTime<Utc>>,
        woke: &Woke,
    ) -> Result<std::time::Duration, kairos_caldav::CaldavError> {
        if slot.is_none() {
            *slot = Some(Store::open(&self.db)?);
        }
        let Some(store) = slot.as_mut() else {
            return Ok(MAX_WAIT);
        };
        let accounts = store.read(|r| r.caldav_accounts())?;
        due.retain(|id, _| accounts.iter().any(|a| a.id == *id));
        if accounts.is_empty() {
            return Ok(MAX_WAIT);
        }
        let secrets = secrets.get_or_insert_with(|| {
            let choice = std::env::var("KAIROS_SECRET_STORE").ok();
            let (s, note) = secret::for_database(&self.db, choice.as_deref());
            if let Some(note) = note {
                eprintln!("kairos: caldav: {note}");
            }
            s
        });
        let mut changed = false;
        // Another linked device fetched a change of a calendar linked here
        // too (its op was left to this sync: kairos_engine::sync::caldav).
        let fetch_due = store.meta_get(kairos_engine::sync::caldav::FETCH_DUE)?;
        for a in &accounts {
            let now = self.clock.now();
            let st = Status::load(store, a.id)?;
            // An account changed since (`status::sync_soon`) is due sooner.
            let at = match (*due.entry(a.id).or_insert(now), st.next_at) {
                (at, Some(soon)) if soon < at => soon,
                (at, _) => at,
            };
            let backing_off = st.failures > 0;
            let go = at <= now
                || (!backing_off && fetch_due.is_some())
                || (matches!(woke, Woke::Change)
                    && !backing_off
                    && account::changed_here(store, a)?);
            if go {
                let (next, any) = self.sync_one(store, &**secrets, a)?;
                due.insert(a.id, next);
                changed |= any;
            }
        }
        if let Some(seen) = &fetch_due {
            kairos_engine::sync::caldav::fetch_done(store, seen)?;
        }
        if changed {
            // As for a change made by another process: re-plan, push to
            // the other devices, tell subscribers.
            let _ = self.notices.send(Notice::Announce(EngineEvent::Changed));
            self.engine.notify_one();
            self.outbox.notify_one();
        }
        let now = self.clock.now();
        let next = due.values().min().copied();
        Ok(next.map_or(MAX_WAIT, |n| {
            (n - now).to_std().unwrap_or_default().min(MAX_WAIT)
        }))
    }

    /// One account's sync, its status stored; returns when the next is due
    /// and whether the database changed.
    fn sync_one(
        &self,
        store: &mut Store,
        secrets: &dyn SecretStore,
        a: &CaldavAccount,
    ) -> Result<(DateTime<Utc>, bool), kairos_caldav::CaldavError> {
        let now = self.clock.now();
        let when = When {
            now,
            horizon: self.horizon,
            floating: self.floating,
        };
        let every = status::every(store, a.id)?;
        let mut st = Status::load(store, a.id)?;
        let result = account::sync_account(store, secrets, a, when);
        let done = self.clock.now();
        let changed = match result {
            Ok(reports) => {
                st.synced_at = Some(done);
                st.error = None;
                st.failures = 0;
                st.next_at = Some(schedule::after_success(
                    done,
                    every,
                    schedule::random_jitter(),
                ));
                // Acknowledged on the server: take back what is shown here,
                // and tell subscribers (as for another device's dismissal).
                for r in &reports {
                    for w in &r.acked.withdrawals {
                        let _ = self.notices.send(Notice::Withdraw(w.clone()));
                    }
                    for k in &r.acked.keys {
                        let _ = self
                            .notices
                            .send(Notice::Announce(EngineEvent::Acknowledged {
                                key: k.clone(),
                                by: kairos_caldav::acks::BY.to_owned(),
                                snoozed_until: None,
                            }));
                    }
                    for (k, until) in &r.acked.snoozed {
                        let _ = self
                            .notices
                            .send(Notice::Announce(EngineEvent::Acknowledged {
                                key: k.clone(),
                                by: kairos_caldav::acks::BY.to_owned(),
                                snoozed_until: Some(*until),
                            }));
                    }
                }
                reports.iter().any(|r| {
                    r.changed_here
                        + r.deleted_here
                        + r.conflicts
                        + r.acknowledged_here
                        + r.snoozed_here
                        > 0
                })
            }
            Err(e) => {
                eprintln!("kairos: caldav {} ({}): {e}", a.url, a.username);
                st.error = Some(e.to_string());
                st.error_at = Some(done);
                st.failures = st.failures.saturating_add(1);
                st.next_at = Some(schedule::after_failure(
                    done,
                    every,
                    st.failures,
                    None,
                    schedule::random_jitter(),
                ));
                // A failure mid-way may have applied earlier calendars.
                true
            }
        };
        st.save(store, a.id)?;
        Ok((st.next_at.unwrap_or(done + every), changed))
    }
}
