//! A calendar read a few series at a time. Decoding every stored row of a
//! calendar at once (10,000 events: ≈ 17 MB of `Event`s, rules and strings)
//! costs memory the process keeps afterwards: glibc holds what a thread
//! freed in that thread's arena (docs/benchmarks.md, 2026-12-06 "app
//! memory"). Whole-calendar walks that only look at one series at a time
//! (the views' window query, re-planning floating series) read it in
//! chunks of whole series instead, streamed from the store
//! (`events_of_in_runs`: the stored rows of one chunk are held, not the
//! calendar's), so the peak is a chunk's, not the calendar's.

use kairos_core::model::Calendar;
use kairos_store::CalendarId;

use crate::App;
use crate::api::ApiError;
use crate::error::ApiResult;

/// Rows decoded at once (a series is never split, so a chunk can be larger
/// by one series' overrides).
pub(crate) const CHUNK_ROWS: usize = 256;

impl App {
    /// Calls `f` with calendar `cal` decoded a chunk of whole series at a
    /// time (see the module doc), in UID order.
    ///
    /// # Errors
    /// A stored component that no longer reads; what `f` returns.
    pub(crate) fn for_each_chunk(
        &self,
        cal: i64,
        mut f: impl FnMut(&Calendar) -> ApiResult<()>,
    ) -> ApiResult<()> {
        self.store
            .events_of_in_runs(CalendarId(cal), CHUNK_ROWS, |chunk| {
                let parsed = kairos_engine::series::read_calendar(chunk, &format!("#{cal}"))
                    .map_err(|e| {
                        ApiError::internal(format!("stored calendar {cal} no longer reads: {e}"))
                    })?;
                f(&parsed)
            })
    }
}
