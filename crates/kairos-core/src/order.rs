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

/// Sorts `items` by `(instant, uid rank)`, then by `rest` among equals.
///
/// The common case packs instant and rank into one `u64` (whole seconds of
/// years 0–9999 need 39 bits, ranks up to 2^25 the rest) and sorts 16-byte
/// `(key, index)` pairs; only runs of equal keys are compared by `rest`.
/// Anything that does not fit falls back to comparing the full key.
pub(crate) fn sort_by_time_and_rank<T: Copy, K: Ord>(
    items: &mut Vec<T>,
    primary: impl Fn(usize, &T) -> (DateTime<Utc>, u32),
    rest: impl Fn(&T) -> K,
) {
    const OFFSET: i64 = 1 << 36; // > 62,167,219,200 s before 1970 (year 0)
    let pack = |(t, rank): (DateTime<Utc>, u32)| -> Option<u64> {
        let secs = u64::try_from(t.timestamp().checked_add(OFFSET)?).ok()?;
        (t.timestamp_subsec_nanos() == 0 && secs < (1 << 39) && rank < (1 << 25))
            .then_some(secs << 25 | u64::from(rank))
    };
    // Results are capped far below u32::MAX (Limits::max_results).
    let index = |i: usize| u32::try_from(i).unwrap_or(u32::MAX);
    let packed: Option<Vec<(u64, u32)>> = items
        .iter()
        .enumerate()
        .map(|(i, t)| pack(primary(i, t)).map(|k| (k, index(i))))
        .collect();
    let order: Vec<u32> = match packed {
        Some(mut keyed) => {
            keyed.sort_unstable();
            let mut start = 0;
            while start < keyed.len() {
                let end = start
                    + keyed[start..]
                        .iter()
                        .take_while(|(k, _)| *k == keyed[start].0)
                        .count();
                if end - start > 1 {
                    keyed[start..end].sort_by(|a, b| {
                        rest(&items[a.1 as usize]).cmp(&rest(&items[b.1 as usize]))
                    });
                }
                start = end;
            }
            keyed.into_iter().map(|(_, i)| i).collect()
        }
        None => {
            let mut keyed: Vec<(i128, u32, K, u32)> = items
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let (at, rank) = primary(i, t);
                    (ticks(at), rank, rest(t), index(i))
                })
                .collect();
            keyed.sort_unstable();
            keyed.into_iter().map(|(.., i)| i).collect()
        }
    };
    *items = order.into_iter().map(|i| items[i as usize]).collect();
}

/// An instant as one integer that orders like it: iCalendar times have whole
/// seconds, but sub-second parts (from callers) are kept, in nanoseconds.
pub(crate) fn ticks(t: DateTime<Utc>) -> i128 {
    i128::from(t.timestamp()) * 1_000_000_000 + i128::from(t.timestamp_subsec_nanos())
}
