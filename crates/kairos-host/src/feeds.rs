//! The ICS subscriptions' refresh loop of a host: a thread of its own
//! (`kairos_feeds::runner`), started after the lock is held, so only the
//! lock holder refreshes on schedule.

use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;

use chrono::Duration;
use chrono_tz::Tz;
use kairos_engine::clock::Clock;
use kairos_engine::engine::NoticeSender;
use kairos_feeds::Limits;
use kairos_feeds::runner::{Runner, spawn};
use tokio::sync::watch;

use super::Waker;

/// A running refresh loop.
pub(super) struct Feeds {
    stop: watch::Sender<bool>,
    thread: JoinHandle<()>,
}

impl Feeds {
    /// Starts it.
    pub(super) fn start(
        db: &Path,
        clock: Arc<dyn Clock>,
        floating: Tz,
        horizon: Duration,
        wake: &Waker,
        notices: &NoticeSender,
    ) -> std::io::Result<Self> {
        let (stop, stopped) = watch::channel(false);
        let (waker, notices) = (wake.clone(), notices.clone());
        let thread = spawn(Runner {
            db: db.to_owned(),
            clock,
            floating,
            horizon,
            limits: Limits::default(),
            wake: Arc::clone(&wake.feeds),
            stop: stopped,
            // A calendar changed (or a feed failed): re-plan, push, tell
            // subscribers — as for a change made by another process.
            on_changed: Box::new(move || waker.changed_elsewhere(&notices)),
        })?;
        Ok(Self { stop, thread })
    }

    /// Stops the loop and waits for its thread (an HTTP request in
    /// flight is dropped).
    pub(super) fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.thread.join();
    }
}
