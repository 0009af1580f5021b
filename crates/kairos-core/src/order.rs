//! Ordering of large results. A window query can return a million items;
//! sorting them by comparing UID strings was the single largest cost of
//! `occurrences` (memcmp in every tie between events at the same time). Each
//! series gets the rank of its UID once, and items are sorted by small keys.

use chrono::{DateTime, Utc};

use crate::query::Series;

/// For each series, the rank of its UID among all series' UIDs (equal UIDs
/// share a rank).
pub(crate) fn uid_ranks(series: &[Series<'_>]) -> Vec<u32> {
    fn uid<'s>(s: &'s Series<'_>) -> &'s str {
        s.master
            .or(s.overrides.first().copied())
            .map_or("", |e| e.uid.as_str())
    }
    let mut idx: Vec<usize> = (0..series.len()).collect();
    idx.sort_unstable_by(|&a, &b| uid(&series[a]).cmp(uid(&series[b])));
    let mut ranks = vec![0u32; series.len()];
    let mut rank = 0u32;
    for (pos, &i) in idx.iter().enumerate() {
        if pos > 0 && uid(&series[idx[pos - 1]]) != uid(&series[i]) {
            rank += 1;
        }
        ranks[i] = rank;
    }
    ranks
}

/// `items` in the order of `key`; `key` must identify an item (ties may come
/// out in any order).
pub(crate) fn sort_by_small_key<T: Copy, K: Ord + Copy>(
    items: &mut Vec<T>,
    key: impl Fn(usize, &T) -> K,
) {
    let mut keyed: Vec<(K, u32)> = items
        .iter()
        .enumerate()
        // Results are capped far below u32::MAX (Limits::max_results).
        .map(|(i, t)| (key(i, t), u32::try_from(i).unwrap_or(u32::MAX)))
        .collect();
    keyed.sort_unstable();
    *items = keyed.into_iter().map(|(_, i)| items[i as usize]).collect();
}

/// An instant as one integer that orders like it: iCalendar times have whole
/// seconds, but sub-second parts (from callers) are kept, in nanoseconds.
pub(crate) fn ticks(t: DateTime<Utc>) -> i128 {
    i128::from(t.timestamp()) * 1_000_000_000 + i128::from(t.timestamp_subsec_nanos())
}
