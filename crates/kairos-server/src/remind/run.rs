//! The serving instance's reminder task: replication and draining as two
//! tasks, each with its own poll, so a long replication round (an account
//! with a big op backlog being planned) never holds back deliveries
//! already due. A round that queued deliveries wakes the drain at once;
//! otherwise the drain sleeps until the next delivery is due (at most a
//! poll).

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use tokio::sync::{Notify, watch};

use super::Reminders;
use super::worker::{Channels, Options};

impl Reminders {
    /// The serving instance's task until `stop` turns true: the drain here
    /// (every due batch, then a sleep of at most `poll` or until a round
    /// queues deliveries), replication rounds (every `poll`) in a task of
    /// their own. On `stop` the drain finishes its round (what it sent is
    /// recorded); a replication round in progress is dropped (its
    /// transaction rolls back: the next instance or start does it again).
    pub async fn run(self, opts: Options, channels: Channels, stop: watch::Receiver<bool>) {
        let me = Arc::new(self);
        let queued = Arc::new(Notify::new());
        let replication = tokio::spawn(replicate(
            Arc::clone(&me),
            opts.poll,
            Arc::clone(&queued),
            stop.clone(),
        ));
        drain(&me, &opts, &channels, &queued, stop).await;
        let _ = replication.await;
    }
}

async fn replicate(
    me: Arc<Reminders>,
    poll: std::time::Duration,
    queued: Arc<Notify>,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        if *stop.borrow() {
            return;
        }
        let round = tokio::select! {
            r = me.replicate(Utc::now()) => r,
            changed = stop.changed() => if changed.is_err() { return } else { continue },
        };
        match round {
            Ok(r) if r.deliveries > 0 => queued.notify_one(),
            Ok(_) => {}
            Err(e) => tracing::warn!("reminders: replicating: {e}"),
        }
        tokio::select! {
            () = tokio::time::sleep(poll) => {}
            changed = stop.changed() => if changed.is_err() { return; },
        }
    }
}

async fn drain(
    me: &Reminders,
    opts: &Options,
    channels: &Channels,
    queued: &Notify,
    mut stop: watch::Receiver<bool>,
) {
    let mut counted: Option<tokio::time::Instant> = None;
    loop {
        if *stop.borrow() {
            return;
        }
        loop {
            match me.drain(Utc::now(), opts, channels).await {
                Ok(d) if d.claimed > 0 => {
                    tracing::debug!(?d, "reminders: drained");
                    if d.claimed < opts.batch {
                        break;
                    }
                }
                Ok(_) => break,
                Err(e) => {
                    tracing::warn!("reminders: draining: {e}");
                    break;
                }
            }
        }
        let now = tokio::time::Instant::now();
        if count_now(counted, now, || me.metrics.reminders.take_scraped()) {
            counted = Some(now);
            match me.depth(Utc::now()).await {
                Ok((due, future)) => me.metrics.reminders.depth(due, future),
                Err(e) => tracing::warn!("reminders: queue depth: {e}"),
            }
        }
        let nap = nap(me, opts.poll).await;
        tokio::select! {
            () = tokio::time::sleep(nap) => {}
            () = queued.notified() => {}
            changed = stop.changed() => if changed.is_err() { return; },
        }
    }
}

/// The least time between two counts of the queue.
const COUNT_EVERY: Duration = Duration::from_secs(1);

/// Whether the drain counts the queue (the depth gauge of `/metrics`) at
/// this pause: at the first, then when `/metrics` was read since the last
/// count (`scraped`, asked only then, so its flag is not lost) and not
/// within [`COUNT_EVERY`] of it. The count reads every pending row (on
/// PostgreSQL 3.3–3.6 ms with 20,000 queued, and linear in the queue):
/// made at every pause it cost each instance a scan of the whole queue
/// every poll, scraped or not (docs/benchmarks.md).
fn count_now(
    counted: Option<tokio::time::Instant>,
    now: tokio::time::Instant,
    scraped: impl FnOnce() -> bool,
) -> bool {
    match counted {
        None => true,
        Some(at) => now.duration_since(at) >= COUNT_EVERY && scraped(),
    }
}

/// How long the drain sleeps: until the next delivery this store knows of
/// is due (or a lease ends), at most `poll`. Woken at the due time instead
/// of up to a poll after it, every instance starts on a burst together and
/// a lone reminder is not up to `poll` late; `poll` still bounds how late a
/// delivery planned meanwhile by another instance is seen. Something due
/// already (rows another claim holds locked this instance's claim skipped)
/// waits the poll, as before.
async fn nap(me: &Reminders, poll: Duration) -> Duration {
    match me.next_due().await {
        Ok(Some(at)) => {
            let ahead = at - Utc::now().timestamp_millis();
            match u64::try_from(ahead) {
                Ok(ms) if ms > 0 => poll.min(Duration::from_millis(ms)),
                _ => poll,
            }
        }
        Ok(None) => poll,
        Err(e) => {
            tracing::warn!("reminders: next due time: {e}");
            poll
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{COUNT_EVERY, count_now};
    use std::cell::Cell;
    use tokio::time::Instant;

    #[test]
    fn the_queue_is_counted_first_then_only_when_a_scrape_asked() {
        let t0 = Instant::now();
        let later = t0 + COUNT_EVERY;
        assert!(count_now(None, t0, || false), "the first pause counts");
        assert!(!count_now(Some(t0), later, || false), "no scrape, no count");
        assert!(count_now(Some(t0), later, || true), "a scrape asked");
        // Within a second of the last count the scrape's flag is not
        // taken: it stays for the next pause.
        let asked = Cell::new(false);
        let near = t0 + COUNT_EVERY / 2;
        assert!(!count_now(Some(t0), near, || {
            asked.set(true);
            true
        }));
        assert!(!asked.get(), "the flag was taken without a count");
    }
}
