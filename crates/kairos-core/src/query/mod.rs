//! Window queries over a calendar: the occurrences whose start lies in
//! `[from, to)`, with overrides (`RECURRENCE-ID`, incl. `RANGE=THISANDFUTURE`)
//! applied.

use std::collections::HashMap;

use chrono::{DateTime, Duration, NaiveDate, Utc};
use chrono_tz::Tz;

mod length;

use length::{Length, end_at, end_for, length_of};

use crate::error::{Error, Limits};
use crate::model::{Calendar, End, Event, When, Zone};
use crate::recur::originals;
use crate::time::{add, local_of, resolve_local, rfc3339};

/// A point in time together with how it should be shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Moment {
    /// The instant (an all-day date is its midnight in the floating zone).
    pub instant: DateTime<Utc>,
    /// The zone the value was written in.
    pub zone: Zone,
    /// For all-day values, the date itself.
    pub date: Option<NaiveDate>,
}

impl Moment {
    /// `YYYY-MM-DD` for dates, RFC 3339 with the zone's offset otherwise.
    #[must_use]
    pub fn display(&self, floating: Tz) -> String {
        match self.date {
            Some(d) => d.format("%Y-%m-%d").to_string(),
            None => rfc3339(self.instant, self.zone, floating),
        }
    }

    fn of_date(d: NaiveDate, floating: Tz) -> Self {
        Self {
            instant: When::Date(d).instant(floating),
            zone: Zone::Floating,
            date: Some(d),
        }
    }
}

/// One occurrence of an event.
#[derive(Debug, Clone, Copy)]
pub struct Occurrence<'a> {
    /// The component whose summary, alarms, etc. apply: the override if there
    /// is one, otherwise the master.
    pub event: &'a Event,
    /// The original start, for occurrences of recurring series.
    pub recurrence_id: Option<Moment>,
    /// Actual start.
    pub start: Moment,
    /// Actual end, when the event gives one (`DTEND` or `DURATION`).
    pub end: Option<Moment>,
}

impl Occurrence<'_> {
    /// Is this an all-day occurrence?
    #[must_use]
    pub fn all_day(&self) -> bool {
        self.start.date.is_some()
    }
}

/// A master event and the components that override its occurrences.
pub(crate) struct Series<'a> {
    pub master: Option<&'a Event>,
    pub overrides: Vec<&'a Event>,
}

/// Groups a calendar's events by UID. Overrides without a master stand alone.
/// Undated tasks are in no series: they have no occurrences.
pub(crate) fn series(cal: &Calendar) -> Vec<Series<'_>> {
    let mut out: Vec<Series<'_>> = Vec::new();
    let mut by_uid: HashMap<&str, usize> = HashMap::new();
    let dated = cal.events.iter().filter(|e| !e.is_undated_task());
    for ev in dated.clone().filter(|e| e.recurrence_id.is_none()) {
        by_uid.entry(&ev.uid).or_insert(out.len());
        out.push(Series {
            master: Some(ev),
            overrides: Vec::new(),
        });
    }
    for ev in dated.filter(|e| e.recurrence_id.is_some()) {
        match by_uid.get(ev.uid.as_str()) {
            Some(&i) => out[i].overrides.push(ev),
            None => out.push(Series {
                master: None,
                overrides: vec![ev],
            }),
        }
    }
    out
}

/// The start of an event component as a [`Moment`].
pub(crate) fn start_of(ev: &Event, floating: Tz) -> Moment {
    match ev.start {
        When::Date(d) => Moment::of_date(d, floating),
        w => Moment {
            instant: w.instant(floating),
            zone: w.zone(),
            date: None,
        },
    }
}

/// `t` moved by `shift` on the wall clock of `zone`: a series moved from
/// Sunday 10:00 to Saturday 11:00 stays at 11:00 across DST (§3.8.4.4
/// "rescheduled by the same time difference", read as people read clocks).
fn shifted(t: DateTime<Utc>, shift: Duration, zone: Zone, floating: Tz) -> DateTime<Utc> {
    if shift.is_zero() {
        return t;
    }
    let local = local_of(t, zone, floating);
    local
        .checked_add_signed(shift)
        .map_or(t, |l| resolve_local(l, zone, floating))
}

fn occurrence_of<'a>(
    master: &Event,
    data: &'a Event,
    orig: DateTime<Utc>,
    (shift, len): (Duration, Length),
    floating: Tz,
) -> Occurrence<'a> {
    let rid = match master.start {
        When::Date(_) => Moment::of_date(orig.with_timezone(&floating).date_naive(), floating),
        w => Moment {
            instant: orig,
            zone: w.zone(),
            date: None,
        },
    };
    let start = match (data.start, rid.date) {
        (When::Date(_), Some(d)) => Moment::of_date(d + Duration::days(shift.num_days()), floating),
        (When::Date(_), None) => Moment::of_date(
            (orig + shift).with_timezone(&floating).date_naive(),
            floating,
        ),
        (w, _) => Moment {
            instant: shifted(orig, shift, master.start.zone(), floating),
            zone: w.zone(),
            date: None,
        },
    };
    // An `RDATE;VALUE=PERIOD` instance has the length its period gives.
    let period = std::ptr::eq(master, data)
        .then(|| {
            master
                .rdate_periods
                .iter()
                .find(|(p, _)| p.instant(floating) == orig)
        })
        .flatten();
    if let Some((_, end)) = period {
        let end = match *end {
            End::At(w) => Moment {
                instant: w.instant(floating),
                zone: w.zone(),
                date: w.is_date().then(|| w.local().date()),
            },
            End::For(d) => Moment {
                instant: add(start.instant, d, start.zone, floating),
                zone: start.zone,
                date: None,
            },
        };
        return Occurrence {
            event: data,
            recurrence_id: Some(rid),
            start,
            end: Some(end),
        };
    }
    Occurrence {
        event: data,
        recurrence_id: Some(rid),
        start,
        end: end_at(len, start, floating),
    }
}

/// An override standing as its own occurrence.
fn override_occurrence(ov: &Event, floating: Tz) -> Occurrence<'_> {
    let start = start_of(ov, floating);
    let rid = ov.recurrence_id.map(|w| match w {
        When::Date(d) => Moment::of_date(d, floating),
        w => Moment {
            instant: w.instant(floating),
            zone: w.zone(),
            date: None,
        },
    });
    Occurrence {
        event: ov,
        recurrence_id: rid,
        start,
        end: end_for(ov, start, floating),
    }
}

/// The first occurrence of a master (its `DTSTART`), to which absolute alarms
/// belong.
pub(crate) fn first_occurrence(master: &Event, floating: Tz) -> Occurrence<'_> {
    let occ = override_occurrence(master, floating);
    Occurrence {
        recurrence_id: master.is_recurring().then_some(occ.start),
        ..occ
    }
}

fn is_cancelled(ev: &Event) -> bool {
    ev.status.as_deref() == Some("CANCELLED")
}

/// Pushes every occurrence of `s` starting in `[from, to)` onto `out`.
pub(crate) fn series_occurrences<'a>(
    s: &Series<'a>,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    floating: Tz,
    limits: &Limits,
    out: &mut Vec<Occurrence<'a>>,
) -> Result<(), Error> {
    let mut exact: HashMap<DateTime<Utc>, &Event> = HashMap::new();
    let mut future: Vec<(DateTime<Utc>, Duration, &Event, Length)> = Vec::new();
    for ov in &s.overrides {
        let Some(rid) = ov.recurrence_id else {
            continue;
        };
        let rid = rid.instant(floating);
        exact.insert(rid, ov);
        if ov.this_and_future {
            // The shift is measured on the series' wall clock (see `shifted`).
            let zone = s.master.map_or(ov.start.zone(), |m| m.start.zone());
            let wall = |t: DateTime<Utc>| local_of(t, zone, floating);
            let shift = wall(start_of(ov, floating).instant) - wall(rid);
            future.push((rid, shift, ov, length_of(ov, floating)));
        }
        let occ = override_occurrence(ov, floating);
        if !is_cancelled(ov) && occ.start.instant >= from && occ.start.instant < to {
            out.push(occ);
        }
    }
    future.sort_by_key(|(rid, ..)| *rid);
    let Some(master) = s.master else {
        return Ok(());
    };
    if !master.is_recurring() {
        let occ = Occurrence {
            recurrence_id: None,
            ..override_occurrence(master, floating)
        };
        if occ.start.instant >= from && occ.start.instant < to {
            out.push(occ);
        }
        return Ok(());
    }
    let reach = future
        .iter()
        .map(|(_, d, ..)| d.num_seconds().abs())
        .max()
        .unwrap_or(0);
    let reach = Duration::seconds(reach);
    let master_len = length_of(master, floating);
    let mut it = originals(master, from - reach, floating, limits.max_steps_per_event);
    for orig in it.by_ref() {
        if orig >= to + reach {
            break;
        }
        if exact.contains_key(&orig) {
            continue; // already pushed as its override
        }
        let idx = future.partition_point(|(rid, ..)| *rid <= orig);
        let (data, how) = match idx.checked_sub(1).map(|i| future[i]) {
            Some((_, shift, ov, len)) => (ov, (shift, len)),
            None => (master, (Duration::zero(), master_len)),
        };
        if is_cancelled(data) && data.recurrence_id.is_some() {
            continue;
        }
        let occ = occurrence_of(master, data, orig, how, floating);
        if occ.start.instant >= from && occ.start.instant < to {
            out.push(occ);
            if out.len() > limits.max_results {
                return Err(too_many(limits));
            }
        }
    }
    if it.over_budget {
        return Err(Error::Limit(format!(
            "event {:?}: its rule needs more than {} steps to get through the window; narrow the window",
            master.uid, limits.max_steps_per_event
        )));
    }
    Ok(())
}

/// Runs `push` for every series of `cal`, enforcing the result limit, and
/// returns the results with the UID rank of the series each came from (the
/// sort key that stands in for comparing UIDs).
pub(crate) fn collect_by_series<'a, T>(
    cal: &'a Calendar,
    limits: &Limits,
    mut push: impl FnMut(&Series<'a>, &mut Vec<T>) -> Result<(), Error>,
) -> Result<(Vec<T>, Vec<u32>), Error> {
    let all = series(cal);
    let ranks = crate::order::uid_ranks(&all);
    let mut out = Vec::new();
    let mut rank_of = Vec::new();
    for (s, &rank) in all.iter().zip(&ranks) {
        push(s, &mut out)?;
        if out.len() > limits.max_results {
            return Err(too_many(limits));
        }
        rank_of.resize(out.len(), rank);
    }
    Ok((out, rank_of))
}

pub(crate) fn too_many(limits: &Limits) -> Error {
    Error::Limit(format!(
        "more than {} results in the window; narrow --from/--to",
        limits.max_results
    ))
}

pub(crate) fn check_window(from: DateTime<Utc>, to: DateTime<Utc>) -> Result<(), Error> {
    if from >= to {
        return Err(Error::Query(format!(
            "the window start {from} is not before its end {to}"
        )));
    }
    Ok(())
}

/// Every occurrence of every event whose start lies in `[from, to)`, sorted by
/// start instant, then UID. Floating times and dates are read in `floating`.
///
/// # Errors
/// An inverted window, or a result or expansion beyond `limits`.
pub fn occurrences<'a>(
    cal: &'a Calendar,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    floating: Tz,
    limits: &Limits,
) -> Result<Vec<Occurrence<'a>>, Error> {
    check_window(from, to)?;
    let (mut out, rank_of) = collect_by_series(cal, limits, |s, out| {
        series_occurrences(s, from, to, floating, limits, out)
    })?;
    // (start, uid, original start) identifies an occurrence.
    crate::order::sort_by_time_and_rank(
        &mut out,
        |i, o| (o.start.instant, rank_of[i]),
        |o| o.recurrence_id.map(|r| r.instant),
    );
    Ok(out)
}
