//! A device's live connection as a daemon runs it, for the tests.

use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use kairos_engine::sync::apply::Applied;
use kairos_sync::live::{self, Live};
use kairos_sync::{LinkState, Tls};
use tokio::sync::{Notify, watch};

use super::{Device, WAIT};

/// A device's live connection (`live::spawn`), as a daemon runs it: each
/// batch it applies is handed to the test.
pub struct LiveClient {
    stop: watch::Sender<bool>,
    applied: mpsc::Receiver<Applied>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// What a local change notifies (push now).
    pub outbox: Arc<Notify>,
    /// The state it publishes.
    pub state: watch::Receiver<LinkState>,
}

impl LiveClient {
    pub fn spawn(device: &Device) -> Self {
        let (stop, stop_rx) = watch::channel(false);
        let (tx, applied) = mpsc::channel();
        let outbox = Arc::new(Notify::new());
        let (state_tx, state) = watch::channel(LinkState::not_paired());
        let thread = live::spawn(Live {
            db: device.db.clone(),
            applier: device.applier(),
            tls: Tls::default(),
            outbox: outbox.clone(),
            on_applied: Box::new(move |a| {
                let _ = tx.send(a);
            }),
            stop: stop_rx,
            state: state_tx,
        })
        .unwrap();
        Self {
            stop,
            applied,
            thread: Some(thread),
            outbox,
            state,
        }
    }

    /// Waits (at most `bound`) until the published state satisfies `f`;
    /// returns it.
    pub async fn state_within(
        &mut self,
        bound: Duration,
        what: &str,
        f: impl FnMut(&LinkState) -> bool,
    ) -> LinkState {
        let got = tokio::time::timeout(bound, self.state.wait_for(f))
            .await
            .map(|r| r.map(|s| s.clone()));
        match got {
            Ok(Ok(s)) => s,
            _ => panic!(
                "no {what} within {bound:?}; last state {:?}",
                *self.state.borrow()
            ),
        }
    }

    /// The next batch the client applied (a catch-up batch of nothing new
    /// is told too).
    pub fn next_batch(&self, deadline: Instant) -> Applied {
        let left = deadline.saturating_duration_since(Instant::now());
        self.applied
            .recv_timeout(left)
            .expect("the live client applied nothing in time")
    }

    /// The next batch with at least one op that changed something.
    pub fn next_applied(&self) -> Applied {
        let deadline = Instant::now() + WAIT;
        loop {
            let a = self.next_batch(deadline);
            if a.applied > 0 {
                return a;
            }
        }
    }

    /// Turns `stop` true and waits for the thread to end, at most `bound`.
    /// Returns how long it took.
    pub fn stop_within(&mut self, bound: Duration) -> Duration {
        let started = Instant::now();
        let _ = self.stop.send(true);
        self.ended_within(bound);
        started.elapsed()
    }

    /// Waits for the thread to end by itself, at most `bound`.
    pub fn ended_within(&mut self, bound: Duration) {
        let Some(thread) = self.thread.take() else {
            return;
        };
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(thread.join().is_ok());
        });
        let ok = rx
            .recv_timeout(bound)
            .unwrap_or_else(|_| panic!("the live client's thread did not end within {bound:?}"));
        assert!(ok, "the live client's thread panicked");
    }
}

impl Drop for LiveClient {
    fn drop(&mut self) {
        if self.thread.is_some() && !std::thread::panicking() {
            self.stop_within(WAIT);
        } else {
            let _ = self.stop.send(true);
        }
    }
}
