//! Working days (issue #11 §3): a calendar's working week and holidays, and
//! the alarm rules that use them.
//!
//! A rule lives on a `VALARM` as an X- property, so it round-trips and other
//! clients see only the alarm's plain `TRIGGER`:
//! - `X-KAIROS-WORKDAYS:v=1;before=N;at=HH:MM` — N working days before the
//!   alarm's anchor date (a task's due date, an event's start date), at
//!   HH:MM local time in the anchor's zone (floating: the display zone);
//! - `X-KAIROS-WORKDAYS:v=1;shift=previous|next` — the plain trigger, but if
//!   its local date is not a working day, the previous/next working day at
//!   the same local time (a time in a DST gap follows RFC 5545 §3.3.5).
//!
//! A rule of an unknown version or that does not parse is ignored: the alarm
//! goes off at its plain trigger (the importer warns). So is a rule that
//! finds no working day within [`MAX_SEARCH_DAYS`].

use std::collections::BTreeSet;

use chrono::{DateTime, Datelike, Duration, NaiveDate, NaiveTime, Utc};
use chrono_tz::Tz;

use crate::error::{Error, Limits};
use crate::model::{Alarm, Calendar};
use crate::query::{Occurrence, occurrences};
use crate::time::{local_of, resolve_local};

/// The property name.
pub const PROPERTY: &str = "X-KAIROS-WORKDAYS";

/// The rule version this code reads (`v=1`).
pub const VERSION: u32 = 1;

/// How many days a rule walks looking for a working day before it gives up
/// (and the plain trigger is used). Also the largest `before=N`.
pub const MAX_SEARCH_DAYS: u32 = 366;

/// How far a rule can move a trigger from its occurrence, at most: the
/// search, plus a day for the time of day and a day for zone offsets.
#[must_use]
pub fn max_move() -> Duration {
    Duration::days(i64::from(MAX_SEARCH_DAYS) + 2)
}

/// Which way `shift` moves a trigger that falls on a non-working day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// To the last working day before.
    Previous,
    /// To the first working day after.
    Next,
}

/// One alarm's working-day rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkRule {
    /// `before=N;at=HH:MM`.
    Before {
        /// Working days before the anchor date (0: the anchor date itself
        /// if it is a working day, else the working day before it).
        days: u32,
        /// Local time of day.
        at: NaiveTime,
    },
    /// `shift=previous|next`.
    Shift(Direction),
}

/// Reads a rule's value (`v=1;before=2;at=09:00`). The error says what is
/// wrong with it, for a warning.
///
/// # Errors
/// An unknown version, an unknown or repeated part, a missing or bad value.
pub fn parse(value: &str) -> Result<WorkRule, String> {
    // The version first: a later version may have parts this one lacks.
    let version = value.split(';').find_map(|p| {
        p.split_once('=')
            .filter(|(k, _)| k.trim().eq_ignore_ascii_case("v"))
            .map(|(_, v)| v.trim())
    });
    match version {
        None => return Err("no version (v=1)".into()),
        Some(v) if v.parse::<u32>() == Ok(VERSION) => {}
        Some(v) => {
            return Err(format!(
                "version v={v} is not known (this Kairos reads v=1)"
            ));
        }
    }
    let (mut version, mut before, mut at, mut shift) = (None, None, None, None);
    for part in value.trim().split(';') {
        let Some((k, v)) = part.split_once('=') else {
            return Err(format!("{part:?} is not KEY=VALUE"));
        };
        let (k, v) = (k.trim().to_ascii_lowercase(), v.trim());
        let slot = match k.as_str() {
            "v" => &mut version,
            "before" => &mut before,
            "at" => &mut at,
            "shift" => &mut shift,
            _ => {
                return Err(format!(
                    "unknown part {k:?} (expected v, before, at, shift)"
                ));
            }
        };
        if slot.replace(v).is_some() {
            return Err(format!("{k} is given twice"));
        }
    }
    match (before, at, shift) {
        (Some(n), Some(at), None) => {
            let days = n
                .parse::<u32>()
                .ok()
                .filter(|d| *d <= MAX_SEARCH_DAYS)
                .ok_or_else(|| {
                    format!("before={n} is not a number of days from 0 to {MAX_SEARCH_DAYS}")
                })?;
            let at = NaiveTime::parse_from_str(at, "%H:%M")
                .map_err(|_| format!("at={at} is not a time HH:MM"))?;
            Ok(WorkRule::Before { days, at })
        }
        (None, None, Some(s)) => match s.to_ascii_lowercase().as_str() {
            "previous" => Ok(WorkRule::Shift(Direction::Previous)),
            "next" => Ok(WorkRule::Shift(Direction::Next)),
            _ => Err(format!("shift={s} is neither previous nor next")),
        },
        (Some(_), None, _) => Err("before=N needs at=HH:MM".into()),
        (None, Some(_), _) => Err("at=HH:MM needs before=N".into()),
        (Some(_), Some(_), Some(_)) => Err("before and shift cannot be combined".into()),
        (None, None, None) => Err("neither before=N nor shift=previous|next".into()),
    }
}

/// The rule text of `alarm` (the value of its first `X-KAIROS-WORKDAYS`).
#[must_use]
pub fn rule_text(alarm: &Alarm) -> Option<&str> {
    alarm.extra.iter().find_map(|p| p.value_if(PROPERTY))
}

/// The alarm's rule: `None` without one, `Some(Err)` for one that is ignored.
#[must_use]
pub fn rule_of(alarm: &Alarm) -> Option<Result<WorkRule, String>> {
    rule_text(alarm).map(parse)
}

/// A calendar's working time: which weekdays are worked, and which dates are
/// holidays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkTime {
    /// Working weekdays, Monday = bit 0 … Sunday = bit 6.
    pub week: u8,
    /// Dates that are not worked whatever their weekday.
    pub holidays: BTreeSet<NaiveDate>,
}

/// Monday to Friday.
pub const MON_FRI: u8 = 0b001_1111;

/// The weekday names of a week bitset, in order (Monday first).
pub const DAY_NAMES: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

impl Default for WorkTime {
    /// Monday to Friday, no holidays.
    fn default() -> Self {
        Self {
            week: MON_FRI,
            holidays: BTreeSet::new(),
        }
    }
}

impl WorkTime {
    /// Is `date` a working day?
    #[must_use]
    pub fn is_working(&self, date: NaiveDate) -> bool {
        let bit = date.weekday().num_days_from_monday();
        self.week & (1 << bit) != 0 && !self.holidays.contains(&date)
    }

    /// The working day `n` working days before `date` (`n = 0`: `date` if
    /// it is one, else the working day before). `None` when the search
    /// passes [`MAX_SEARCH_DAYS`].
    #[must_use]
    pub fn n_before(&self, date: NaiveDate, n: u32) -> Option<NaiveDate> {
        let mut left = n;
        let mut d = date;
        if n > 0 || !self.is_working(d) {
            if n == 0 {
                left = 1;
            }
            for _ in 0..MAX_SEARCH_DAYS {
                d = d.pred_opt()?;
                if self.is_working(d) {
                    left -= 1;
                    if left == 0 {
                        return Some(d);
                    }
                }
            }
            return None;
        }
        Some(d)
    }

    /// `date` if it is a working day, else the nearest working day in
    /// direction `dir`; `None` beyond [`MAX_SEARCH_DAYS`].
    #[must_use]
    pub fn shift(&self, date: NaiveDate, dir: Direction) -> Option<NaiveDate> {
        let mut d = date;
        for _ in 0..=MAX_SEARCH_DAYS {
            if self.is_working(d) {
                return Some(d);
            }
            d = match dir {
                Direction::Previous => d.pred_opt()?,
                Direction::Next => d.succ_opt()?,
            };
        }
        None
    }
}

const FULL_NAMES: [&str; 7] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// A week bitset from names (`mon,tue,wed` or `monday,…`; case-insensitive;
/// `mon-fri` ranges are not read).
///
/// # Errors
/// A name that is not a weekday (named), or no day at all.
pub fn parse_week(names: &str) -> Result<u8, String> {
    let mut week = 0u8;
    for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let lower = name.to_ascii_lowercase();
        let Some(i) = DAY_NAMES
            .iter()
            .zip(FULL_NAMES)
            .position(|(d, full)| lower == *d || lower == full)
        else {
            return Err(format!(
                "{name:?} is not a weekday (use mon, tue, wed, thu, fri, sat, sun)"
            ));
        };
        week |= 1 << i;
    }
    if week == 0 {
        return Err("a working week needs at least one day".into());
    }
    Ok(week)
}

/// `mon,tue,wed,thu,fri` for a week bitset.
#[must_use]
pub fn week_names(week: u8) -> String {
    (0..7)
        .filter(|i| week & (1 << i) != 0)
        .map(|i| DAY_NAMES[i])
        .collect::<Vec<_>>()
        .join(",")
}

/// The holidays a holiday feed declares in `[from, to)`: every date covered
/// by an all-day occurrence (a multi-day event covers each of its days).
/// Timed events are not holidays.
///
/// # Errors
/// The core's expansion limits.
pub fn holidays(
    feed: &Calendar,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    limits: &Limits,
) -> Result<BTreeSet<NaiveDate>, Error> {
    let mut out = BTreeSet::new();
    for occ in occurrences(feed, from, to, Tz::UTC, limits)? {
        let Some(first) = occ.start.date else {
            continue;
        };
        let last = occ
            .end
            .and_then(|e| e.date)
            .and_then(|d| d.pred_opt())
            .unwrap_or(first)
            .max(first);
        // Bounded: a "holiday" longer than the search is not one.
        for d in first.iter_days().take(MAX_SEARCH_DAYS as usize) {
            if d > last {
                break;
            }
            out.insert(d);
        }
    }
    Ok(out)
}

/// `plain` (the alarm's trigger for `occ`) moved by the alarm's rule, if it
/// has one that applies; else `plain`.
pub(crate) fn moved(
    occ: &Occurrence<'_>,
    alarm: &Alarm,
    plain: DateTime<Utc>,
    floating: Tz,
    work: &WorkTime,
) -> DateTime<Utc> {
    let Some(Ok(rule)) = rule_of(alarm) else {
        return plain;
    };
    // A task is anchored at its due time (`end` when it has a start too).
    let anchor = if occ.event.todo.is_some() {
        occ.end.unwrap_or(occ.start)
    } else {
        occ.start
    };
    let zone = anchor.zone;
    match rule {
        WorkRule::Before { days, at } => {
            let date = anchor
                .date
                .unwrap_or_else(|| local_of(anchor.instant, zone, floating).date());
            work.n_before(date, days)
                .map_or(plain, |d| resolve_local(d.and_time(at), zone, floating))
        }
        WorkRule::Shift(dir) => {
            let local = local_of(plain, zone, floating);
            match work.shift(local.date(), dir) {
                Some(d) if d != local.date() => {
                    resolve_local(d.and_time(local.time()), zone, floating)
                }
                _ => plain,
            }
        }
    }
}
