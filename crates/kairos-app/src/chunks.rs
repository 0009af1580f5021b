//! A calendar read a few series at a time. Decoding every stored row of a
//! calendar at once (10,000 events: ≈ 17 MB of `Event`s, rules and strings)
//! costs memory the process keeps afterwards: glibc holds what a thread
//! freed in that thread's arena (docs/benchmarks.md, 2026-12-06 "app
//! memory"). Whole-calendar walks that only look at one series at a time
//! (the views' window query, re-planning floating series) read it in
//! chunks of whole series instead, so the peak is a chunk's, not the
//! calendar's.

use kairos_core::model::Calendar;
use kairos_store::{CalendarId, StoredEvent};

use crate::App;
use crate::api::ApiError;
use crate::error::ApiResult;

/// Rows decoded at once (a series is never split, so a chunk can be larger
/// by one series' overrides).
pub(crate) const CHUNK_ROWS: usize = 256;

/// `rows` (sorted by UID, as the store returns them) cut into runs of about
/// `size` rows that never split one UID's components.
pub(crate) fn series_chunks<T>(rows: &[T], size: usize, uid: impl Fn(&T) -> &str) -> Vec<&[T]> {
    let size = size.max(1);
    let mut out = Vec::new();
    let mut start = 0;
    while start < rows.len() {
        let mut end = (start + size).min(rows.len());
        while end < rows.len() && uid(&rows[end]) == uid(&rows[end - 1]) {
            end += 1;
        }
        out.push(&rows[start..end]);
        start = end;
    }
    out
}

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
        let rows = self.store.events_of(CalendarId(cal))?;
        for chunk in series_chunks(&rows, CHUNK_ROWS, |r: &StoredEvent| r.uid.as_str()) {
            let parsed =
                kairos_engine::series::read_calendar(chunk, &format!("#{cal}")).map_err(|e| {
                    ApiError::internal(format!("stored calendar {cal} no longer reads: {e}"))
                })?;
            f(&parsed)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::series_chunks;

    #[test]
    fn chunks_never_split_a_series_and_cover_every_row() {
        let uids = ["a", "b", "b", "b", "c", "d", "d", "e"];
        for size in 0..10 {
            let chunks = series_chunks(&uids, size, |u| u);
            let joined: Vec<&str> = chunks.concat();
            assert_eq!(joined, uids, "size {size}");
            for w in chunks.windows(2) {
                assert_ne!(w[0].last(), w[1].first(), "size {size}: a series split");
            }
            assert!(chunks.iter().all(|c| !c.is_empty()), "size {size}");
        }
        assert_eq!(
            series_chunks(&uids, 2, |u| u),
            vec![&uids[0..4], &uids[4..7], &uids[7..8]]
        );
        assert!(series_chunks(&[] as &[&str], 3, |u| u).is_empty());
    }
}
