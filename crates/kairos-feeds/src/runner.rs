//! The refresh loop of a host (`kairos daemon`, the desktop app), on a
//! thread of its own with its own single-threaded runtime: the store is
//! blocking and a slow feed must never delay a reminder.
//!
//! It refreshes what is due, then waits for the earliest `next_at` (at most
//! [`MAX_WAIT`], then it looks again: new subscriptions made by another
//! process, a clock that jumped), for a wake-up, or for the stop signal.

use std::path::PathBuf;
use std::sync::Arc;
use std::thread::JoinHandle;

use chrono::Duration;
use chrono_tz::Tz;
use kairos_engine::clock::Clock;
use kairos_store::Store;
use tokio::sync::{Notify, watch};

use crate::fetch::{Fetcher, Limits};
use crate::refresh::{Outcome, Refresher};

/// The longest the loop waits before looking at the subscriptions again.
pub const MAX_WAIT: std::time::Duration = std::time::Duration::from_secs(300);

/// What the loop needs.
pub struct Runner {
    /// The database.
    pub db: PathBuf,
    /// "Now".
    pub clock: Arc<dyn Clock>,
    /// Floating times' zone (when the database has none).
    pub floating: Tz,
    /// The engine's horizon.
    pub horizon: Duration,
    /// Fetch limits.
    pub limits: Limits,
    /// Look again now (a subscription was added, the database changed).
    pub wake: Arc<Notify>,
    /// Turns true to stop.
    pub stop: watch::Receiver<bool>,
    /// Called after a refresh changed a calendar or failed (so the engine
    /// re-plans, sync pushes and the app shows the new state).
    pub on_changed: Box<dyn Fn() + Send>,
}

/// Starts the loop on its own thread.
///
/// # Errors
/// The thread or its runtime cannot be started.
pub fn spawn(r: Runner) -> std::io::Result<JoinHandle<()>> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    std::thread::Builder::new()
        .name("kairos-feeds".into())
        .spawn(move || rt.block_on(run(r)))
}

async fn run(r: Runner) {
    let mut stop = r.stop.clone();
    // Made on first need: a database without subscriptions costs nothing.
    let mut refresher: Option<Refresher> = None;
    let mut store: Option<Store> = None;
    loop {
        // A stop cancels a fetch in flight (a host must stop at once, not
        // after a 60 s timeout). Cancelling is safe: what follows a fetch
        // (the import and the subscription's row) has no await point.
        let wait = tokio::select! {
            w = round(&r, &mut store, &mut refresher) => w,
            _ = stop.changed() => return,
        };
        let wait = match wait {
            Ok(wait) => wait,
            Err(e) => {
                eprintln!("kairos: subscriptions: {e}");
                // Open the database afresh next time.
                store = None;
                MAX_WAIT
            }
        };
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = r.wake.notified() => {}
            _ = stop.changed() => {}
        }
        if *stop.borrow() {
            return;
        }
    }
}

/// Refreshes what is due; returns how long to wait for the next.
async fn round(
    r: &Runner,
    slot: &mut Option<Store>,
    refresher: &mut Option<Refresher>,
) -> Result<std::time::Duration, crate::FeedError> {
    if slot.is_none() {
        *slot = Some(Store::open(&r.db)?);
    }
    let Some(store) = slot.as_mut() else {
        return Ok(MAX_WAIT);
    };
    let subs = store.read(|x| x.subscriptions())?;
    if subs.is_empty() {
        return Ok(MAX_WAIT);
    }
    let now = r.clock.now();
    if subs.iter().any(|s| s.next_at <= now) {
        if refresher.is_none() {
            *refresher = Some(Refresher {
                fetcher: Fetcher::new(r.limits.clone())?,
                horizon: r.horizon,
                floating: r.floating,
            });
        }
        if let Some(f) = refresher.as_ref() {
            let done = f.refresh_due(store, now, false).await?;
            for d in &done {
                if let Outcome::Failed(e) = &d.outcome {
                    eprintln!("kairos: subscription {:?}: {e}", d.calendar);
                }
            }
            if done
                .iter()
                .any(|d| !matches!(d.outcome, Outcome::NotModified))
            {
                (r.on_changed)();
            }
        }
    }
    let next = store
        .read(|x| x.subscriptions())?
        .iter()
        .map(|s| s.next_at)
        .min();
    let now = r.clock.now();
    Ok(next.map_or(MAX_WAIT, |n| {
        (n - now).to_std().unwrap_or_default().min(MAX_WAIT)
    }))
}
