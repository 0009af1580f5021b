//! The views' window query: every occurrence of every visible calendar
//! whose start lies in a range of wall times in the display zone, and, for
//! the month grid, at most a few of them per day with the rest counted.

use std::collections::BTreeMap;

use chrono::{Duration, NaiveDate, NaiveTime};
use kairos_core::Limits;

use crate::App;
use crate::api::{ApiError, DayMore, EventRef, OccurrenceView, Occurrences, RangeQuery};
use crate::convert::{fmt_date, fmt_wall, instant, wall, wall_in};
use crate::error::ApiResult;

/// Widest range one query may ask for.
pub const MAX_RANGE_DAYS: i64 = 400;
/// Longest occurrence shown when it starts before the range.
pub const MAX_SPAN_DAYS: i64 = 14;
/// Largest `per_day` cap: a month cell never shows more, and the bound keeps
/// a capped answer small whatever the UI asks.
pub const MAX_PER_DAY: u32 = 100;

/// Where an occurrence counts for the per-day cap.
struct Slot {
    /// Its first day in the display zone (not before the range's first day).
    day: NaiveDate,
    /// All-day, or running past the end of its first day: kept first, as
    /// the month grid draws these as bars across the top of the cells.
    long: bool,
}

impl App {
    /// The occurrences starting in `[from, to)`, sorted by start then title;
    /// with `per_day`, at most that many per day and the rest counted.
    ///
    /// # Errors
    /// A malformed or too wide range, a `per_day` outside 1–100; a limit of
    /// the core (named).
    pub fn occurrences(&self, q: &RangeQuery) -> ApiResult<Occurrences> {
        let tz = self.display_tz();
        let (from, to) = (wall(&q.from, "from")?, wall(&q.to, "to")?);
        if to <= from || to - from > Duration::days(MAX_RANGE_DAYS) {
            return Err(ApiError::invalid(format!(
                "range: `to` must be after `from` and at most {MAX_RANGE_DAYS} days later"
            )));
        }
        if let Some(n) = q.per_day
            && !(1..=MAX_PER_DAY).contains(&n)
        {
            return Err(ApiError::invalid(format!(
                "per_day: {n} is not between 1 and {MAX_PER_DAY}"
            )));
        }
        // Occurrences that start before the window but end inside it are
        // shown too (up to MAX_SPAN_DAYS long).
        let (f, t) = (
            instant(from, tz) - Duration::days(MAX_SPAN_DAYS),
            instant(to, tz),
        );
        let limits = Limits::default();
        let mut out = Vec::new();
        for cal in self.list_calendars()?.into_iter().filter(|c| c.visible) {
            // A chunk of series at a time: the whole calendar decoded at
            // once is the peak the process would keep (chunks.rs).
            self.for_each_chunk(cal.id, |parsed| {
                let occ = kairos_core::query::occurrences(parsed, f, t, tz, &limits)
                    .map_err(|e| ApiError::invalid(format!("calendar {:?}: {e}", cal.name)))?;
                for o in occ {
                    let ev = o.event;
                    // A task shows at its due time, on its due day.
                    let (o_start, o_end) = match (&ev.todo, o.end) {
                        (Some(_), Some(due)) => (due, None),
                        (Some(_), None) => (o.start, None),
                        (None, end) => (o.start, end),
                    };
                    let all_day = o_start.date.is_some();
                    let (start, end, day, long) = if let Some(d) = o_start.date {
                        let last = o_end.and_then(|e| e.date).unwrap_or(d + Duration::days(1));
                        let last = last.max(d + Duration::days(1));
                        if last <= from.date() {
                            continue;
                        }
                        (fmt_date(d), fmt_date(last), d, true)
                    } else {
                        let s = wall_in(o_start.instant, tz);
                        let e = o_end.map_or(s, |e| wall_in(e.instant, tz)).max(s);
                        if e <= from && s < from {
                            continue;
                        }
                        let next_midnight = (s.date() + Duration::days(1)).and_time(NaiveTime::MIN);
                        (fmt_wall(s), fmt_wall(e), s.date(), e > next_midnight)
                    };
                    let slot = Slot {
                        day: day.max(from.date()),
                        long,
                    };
                    out.push((
                        slot,
                        OccurrenceView {
                            event: EventRef {
                                calendar_id: cal.id,
                                uid: ev.uid.clone(),
                                recurrence_id: o.recurrence_id.map(|m| {
                                    m.date.map_or_else(
                                        || {
                                            m.instant
                                                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                                        },
                                        fmt_date,
                                    )
                                }),
                            },
                            title: ev.summary.clone().unwrap_or_else(|| "(no title)".into()),
                            start,
                            end,
                            all_day,
                            color: cal.color.clone(),
                            location: ev.location.clone(),
                            recurring: o.recurrence_id.is_some(),
                            has_alarms: !ev.alarms.is_empty(),
                            task: crate::task_edit::mark_of(ev),
                        },
                    ));
                }
                Ok(())
            })?;
        }
        let (mut items, more) = match q.per_day {
            // Bounded to 1..=MAX_PER_DAY above, so the cast is lossless.
            Some(n) => cap_per_day(out, n as usize),
            None => (out.into_iter().map(|(_, o)| o).collect(), Vec::new()),
        };
        // Identity last: the chunks' order must not show in the answer.
        items.sort_by(|a, b| {
            (
                &a.start,
                &a.title,
                a.event.calendar_id,
                &a.event.uid,
                &a.event.recurrence_id,
            )
                .cmp(&(
                    &b.start,
                    &b.title,
                    b.event.calendar_id,
                    &b.event.uid,
                    &b.event.recurrence_id,
                ))
        });
        Ok(Occurrences { items, more })
    }
}

/// The order occurrences are kept in on one day (`false` sorts first).
type Rank<'a> = (
    NaiveDate,
    bool,
    &'a str,
    &'a str,
    i64,
    &'a str,
    Option<&'a str>,
);

fn rank<'a>(s: &Slot, o: &'a OccurrenceView) -> Rank<'a> {
    let e = &o.event;
    let rid = e.recurrence_id.as_deref();
    (
        s.day,
        !s.long,
        &o.start,
        &o.title,
        e.calendar_id,
        &e.uid,
        rid,
    )
}

/// Keeps at most `n` occurrences per day — long ones first, then by start,
/// title and identity, so the choice is the same on every call — and counts
/// the rest per day (days in date order, only those with some left out).
fn cap_per_day(
    mut all: Vec<(Slot, OccurrenceView)>,
    n: usize,
) -> (Vec<OccurrenceView>, Vec<DayMore>) {
    all.sort_by(|(sa, a), (sb, b)| rank(sa, a).cmp(&rank(sb, b)));
    let mut kept = Vec::new();
    let mut more = BTreeMap::<NaiveDate, u32>::new();
    let mut day: Option<(NaiveDate, usize)> = None;
    for (slot, o) in all {
        let seen = match day {
            Some((d, k)) if d == slot.day => k,
            _ => 0,
        };
        day = Some((slot.day, seen + 1));
        if seen < n {
            kept.push(o);
        } else {
            *more.entry(slot.day).or_default() += 1;
        }
    }
    let more = more
        .into_iter()
        .map(|(d, count)| DayMore {
            date: fmt_date(d),
            count,
        })
        .collect();
    (kept, more)
}
