//! The one thread that runs the shell's store work: every IPC command's
//! call into the app ([`crate::state::Shared::call`]) and the refreshes
//! after an engine event. They all take the app's lock, so they never ran
//! side by side anyway; what tokio's blocking pool added was a new thread
//! for a call that came while another waited, each with a glibc malloc arena
//! of its own that keeps what the call freed (the month view's query on
//! 10,000 events: ≈ 25 MB a thread, docs/benchmarks.md 2026-12-06 "app
//! memory"). One thread, one arena.
//!
//! Requests that may wait on the network without the lock (Settings → Sync,
//! a feed's fetch) stay on the blocking pool: they must not hold up this
//! queue.

use std::panic::AssertUnwindSafe;
use std::sync::mpsc;

use kairos_app::api::ApiError;

type Job = Box<dyn FnOnce() + Send>;

/// A queue of jobs run one at a time, in order, on a thread of its own.
pub struct Worker {
    jobs: mpsc::Sender<Job>,
}

impl Worker {
    /// Starts the thread. It ends when the `Worker` is dropped.
    ///
    /// # Errors
    /// The thread cannot be started.
    pub fn start() -> std::io::Result<Self> {
        let (jobs, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("kairos-app".into())
            .spawn(move || {
                for job in rx {
                    // A panicking job drops its answer's sender: its caller
                    // gets an error, and the next job still runs.
                    let _ = std::panic::catch_unwind(AssertUnwindSafe(job));
                }
            })?;
        Ok(Self { jobs })
    }

    /// Runs `f` on the worker thread and waits (asynchronously) for it.
    ///
    /// # Errors
    /// `f` panicked, or the thread is gone.
    pub async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, ApiError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.jobs
            .send(Box::new(move || {
                let _ = tx.send(f());
            }))
            .map_err(|_| ApiError::internal("command failed: the app's worker thread ended"))?;
        rx.await
            .map_err(|_| ApiError::internal("command failed: it stopped with an internal error"))
    }
}

#[cfg(test)]
mod tests {
    use super::Worker;

    #[test]
    fn jobs_run_in_order_on_one_thread_and_a_panic_fails_only_its_call() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        let w = Worker::start().expect("worker");
        rt.block_on(async {
            let a = w.run(|| std::thread::current().id()).await.expect("a");
            let boom = w.run(|| -> u8 { panic!("boom") }).await;
            assert!(boom.is_err());
            let b = w.run(|| std::thread::current().id()).await.expect("b");
            assert_eq!(a, b, "one thread");
            assert_ne!(a, std::thread::current().id());
            let order: Vec<_> = queued_in_order(&w, 20).await;
            assert_eq!(order, (0..20).collect::<Vec<_>>());
        });
    }

    async fn queued_in_order(w: &Worker, n: usize) -> Vec<usize> {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut waits = Vec::new();
        for i in 0..n {
            let s = std::sync::Arc::clone(&seen);
            // Queued without waiting: they still run in the order sent.
            let (tx, rx) = tokio::sync::oneshot::channel();
            w.jobs
                .send(Box::new(move || {
                    s.lock().expect("lock").push(i);
                    let _ = tx.send(());
                }))
                .expect("send");
            waits.push(rx);
        }
        for r in waits {
            r.await.expect("ran");
        }
        seen.lock().expect("lock").clone()
    }
}
