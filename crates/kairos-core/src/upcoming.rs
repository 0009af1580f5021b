//! "What goes off next?" — once, or again and again as time moves on.
//!
//! [`next_alarm`] answers it from scratch, searching every series. [`Upcoming`]
//! keeps each series' next trigger in a min-heap, so that after one build a
//! query costs O(log n) and moving forward recomputes only the series whose
//! trigger was passed: the shape of a delay queue.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;

use crate::alarms::{AlarmHit, order, series_alarms};
use crate::error::{Error, Limits};
use crate::model::Calendar;
use crate::order::{ticks, uid_ranks};
use crate::query::{Series, series};
use crate::workdays::WorkTime;

/// How far ahead a series is searched before it is taken to have no more
/// alarms: beyond any calendar a person keeps.
const NEXT_HORIZON_DAYS: i64 = 400 * 366;

/// The first trigger of `s` at or after `after` and before `limit`.
///
/// Searched in windows that grow eightfold (8 days, 64 days, …), so a busy
/// series costs one short window.
fn series_next<'a>(
    s: &Series<'a>,
    after: DateTime<Utc>,
    limit: DateTime<Utc>,
    floating: Tz,
    limits: &Limits,
    found: &mut Vec<AlarmHit<'a>>,
) -> Result<Option<AlarmHit<'a>>, Error> {
    let mut span = Duration::days(8);
    loop {
        let to = (after + span).min(limit);
        found.clear();
        series_alarms(s, after, to, floating, limits, &WorkTime::default(), found)?;
        if let Some(h) = found.drain(..).min_by(|a, b| order(a).cmp(&order(b))) {
            return Ok(Some(h));
        }
        if to >= limit {
            return Ok(None);
        }
        span = span * 8;
    }
}

/// The first alarm trigger at or after `after`, over the whole calendar.
///
/// No series is searched past the best trigger found so far.
///
/// # Errors
/// An expansion beyond `limits`.
pub fn next_alarm<'a>(
    cal: &'a Calendar,
    after: DateTime<Utc>,
    floating: Tz,
    limits: &Limits,
) -> Result<Option<AlarmHit<'a>>, Error> {
    let horizon = after + Duration::days(NEXT_HORIZON_DAYS);
    let mut best: Option<AlarmHit<'a>> = None;
    let mut found = Vec::new();
    for s in series(cal) {
        let limit = best
            .as_ref()
            .map_or(horizon, |b| b.trigger + Duration::seconds(1));
        let hit = series_next(&s, after, limit, floating, limits, &mut found)?;
        if let Some(h) = hit.filter(|h| best.as_ref().is_none_or(|b| order(h) < order(b))) {
            best = Some(h);
        }
    }
    Ok(best)
}

/// Every series' next trigger, ordered; see the module doc.
pub struct Upcoming<'a> {
    series: Vec<Series<'a>>,
    ranks: Vec<u32>,
    /// The next hit of each series at or after `cursor` (`None`: no more).
    next: Vec<Option<AlarmHit<'a>>>,
    /// `(trigger, uid rank, series)` of every series that has a next hit.
    heap: BinaryHeap<Reverse<(i128, u32, usize)>>,
    cursor: DateTime<Utc>,
    floating: Tz,
    limits: Limits,
    found: Vec<AlarmHit<'a>>,
}

impl<'a> Upcoming<'a> {
    /// Finds every series' first trigger at or after `from`.
    ///
    /// # Errors
    /// An expansion beyond `limits`.
    pub fn new(
        cal: &'a Calendar,
        from: DateTime<Utc>,
        floating: Tz,
        limits: &Limits,
    ) -> Result<Self, Error> {
        let series = series(cal);
        let ranks = uid_ranks(&series);
        let mut up = Self {
            next: vec![None; series.len()],
            series,
            ranks,
            heap: BinaryHeap::new(),
            cursor: from,
            floating,
            limits: *limits,
            found: Vec::new(),
        };
        for i in 0..up.series.len() {
            up.refresh(i, from)?;
        }
        Ok(up)
    }

    fn refresh(&mut self, i: usize, after: DateTime<Utc>) -> Result<(), Error> {
        let limit = after + Duration::days(NEXT_HORIZON_DAYS);
        let hit = series_next(
            &self.series[i],
            after,
            limit,
            self.floating,
            &self.limits,
            &mut self.found,
        )?;
        if let Some(h) = &hit {
            self.heap
                .push(Reverse((ticks(h.trigger), self.ranks[i], i)));
        }
        self.next[i] = hit;
        Ok(())
    }

    /// The first trigger at or after `after`. Moving `after` forward
    /// recomputes only the series whose next trigger was passed; moving it
    /// back rebuilds everything.
    ///
    /// # Errors
    /// An expansion beyond `limits`.
    pub fn next_after(&mut self, after: DateTime<Utc>) -> Result<Option<AlarmHit<'a>>, Error> {
        if after < self.cursor {
            self.heap.clear();
            for i in 0..self.series.len() {
                self.refresh(i, after)?;
            }
        }
        self.cursor = after;
        let after_ticks = ticks(after);
        while let Some(&Reverse((t, _, i))) = self.heap.peek() {
            if t >= after_ticks {
                break;
            }
            self.heap.pop();
            self.refresh(i, after)?;
        }
        Ok(self
            .heap
            .peek()
            .and_then(|Reverse((_, _, i))| self.next[*i]))
    }
}
