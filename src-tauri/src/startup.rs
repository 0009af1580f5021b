//! Start-up timing for the benchmark (`KAIROS_TRACE_STARTUP=1`): prints,
//! once, how long after process start the UI's first view was served (its
//! first `occurrences` call returned; the paint follows in the same frame).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

static START: OnceLock<Instant> = OnceLock::new();
static DONE: AtomicBool = AtomicBool::new(false);

/// Notes the process start (call first thing in `main`).
pub fn begin() {
    START.get_or_init(Instant::now);
}

/// Prints `kairos-startup: first-view-ms=N` the first time it is called,
/// when tracing is on.
pub fn first_view_served() {
    if DONE.swap(true, Ordering::Relaxed) || std::env::var_os("KAIROS_TRACE_STARTUP").is_none() {
        return;
    }
    if let Some(t) = START.get() {
        eprintln!("kairos-startup: first-view-ms={}", t.elapsed().as_millis());
    }
}
