//! Alarm triggers (RFC 5545 §3.6.6, §3.8.6.3): every trigger instant of every
//! alarm of every occurrence in a window, each with a stable instance key.

use std::fmt;

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;

use crate::error::{Error, Limits};
use crate::model::{Alarm, Calendar, Related, Trigger};
use crate::query::{
    Occurrence, Series, check_window, collect_by_series, series_occurrences, too_many,
};
use crate::time::{Dur, add};
use crate::workdays::{self, WorkTime};

/// Identifies one reminder instance for ever: the same alarm of the same
/// occurrence always gets the same key, whatever else changes in the file.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InstanceKey {
    /// Calendar name (or id) the event belongs to.
    pub calendar: String,
    /// Event `UID`.
    pub uid: String,
    /// Original start of the occurrence (`RECURRENCE-ID`): UTC `…Z`, or a date.
    pub occurrence: String,
    /// Alarm `UID`, or `#N` for the N-th `VALARM` (0-based) when it has none.
    pub alarm: String,
    /// 0 for the trigger itself, k for its k-th `REPEAT`.
    pub repetition: u32,
}

fn escape(s: &str) -> String {
    s.replace('%', "%25").replace('/', "%2F")
}

impl fmt::Display for InstanceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{}/{}/{}",
            escape(&self.calendar),
            escape(&self.uid),
            self.occurrence,
            escape(&self.alarm)
        )?;
        if self.repetition > 0 {
            write!(f, "/{}", self.repetition)?;
        }
        Ok(())
    }
}

/// One trigger of one alarm of one occurrence.
#[derive(Debug, Clone, Copy)]
pub struct AlarmHit<'a> {
    /// The occurrence it belongs to.
    pub occurrence: Occurrence<'a>,
    /// Position of the alarm among the component's `VALARM`s.
    pub index: usize,
    /// The alarm.
    pub alarm: &'a Alarm,
    /// 0 for the trigger, k for the k-th repetition.
    pub repetition: u32,
    /// When it goes off.
    pub trigger: DateTime<Utc>,
}

impl AlarmHit<'_> {
    /// The instance key within `calendar`.
    #[must_use]
    pub fn key(&self, calendar: &str) -> InstanceKey {
        let occ = self
            .occurrence
            .recurrence_id
            .unwrap_or(self.occurrence.start);
        let occurrence = match occ.date {
            Some(d) => d.format("%Y-%m-%d").to_string(),
            None => occ.instant.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        };
        InstanceKey {
            calendar: calendar.to_owned(),
            uid: self.occurrence.event.uid.clone(),
            occurrence,
            alarm: crate::model::alarm_key(self.alarm.uid.as_deref(), self.index),
            repetition: self.repetition,
        }
    }
}

/// Every trigger instant of `alarm` for `occ`, first the trigger, then repeats.
pub fn triggers(occ: &Occurrence<'_>, alarm: &Alarm, floating: Tz) -> Vec<DateTime<Utc>> {
    let base = match alarm.trigger {
        Trigger::Absolute(t) => t,
        Trigger::Relative {
            offset,
            related: Related::Start,
        } => add(occ.start.instant, offset, occ.start.zone, floating),
        Trigger::Relative {
            offset,
            related: Related::End,
        } => {
            // No end given: an all-day event lasts a day, a timed one no time
            // (RFC 5545 §3.6.1).
            let end = occ.end.map_or_else(
                || {
                    if occ.all_day() {
                        add(
                            occ.start.instant,
                            Dur { days: 1, secs: 0 },
                            occ.start.zone,
                            floating,
                        )
                    } else {
                        occ.start.instant
                    }
                },
                |e| e.instant,
            );
            add(end, offset, occ.start.zone, floating)
        }
    };
    let mut out = vec![base];
    if let Some(step) = alarm.interval {
        let zone = occ.start.zone;
        out.extend((1..=alarm.repeat).map(|k| add(base, step.times(i64::from(k)), zone, floating)));
    }
    out
}

/// [`triggers`] with the alarm's working-day rule applied: the rule moves
/// the first trigger and the repetitions keep their spacing after it.
#[must_use]
pub fn triggers_with(
    occ: &Occurrence<'_>,
    alarm: &Alarm,
    floating: Tz,
    work: &WorkTime,
) -> Vec<DateTime<Utc>> {
    let mut out = triggers(occ, alarm, floating);
    if let Some(&plain) = out.first() {
        let base = workdays::moved(occ, alarm, plain, floating, work);
        if base != plain {
            let delta = base - plain;
            for t in &mut out {
                *t = t.checked_add_signed(delta).unwrap_or(*t);
            }
        }
    }
    out
}

/// How far before/after an occurrence's start its relative alarms may go off.
fn reach(s: &Series<'_>) -> (Duration, Duration) {
    let (mut lo, mut hi) = (Duration::zero(), Duration::zero());
    for ev in s.master.iter().chain(s.overrides.iter()) {
        let len = match ev.end {
            Some(crate::model::End::For(d)) => d.approx(),
            Some(crate::model::End::At(w)) => w.instant(Tz::UTC) - ev.start.instant(Tz::UTC),
            None => Duration::days(1),
        };
        for a in &ev.alarms {
            if let Trigger::Relative { offset, related } = a.trigger {
                let base = offset.approx()
                    + if related == Related::End {
                        len
                    } else {
                        Duration::zero()
                    };
                let span = a
                    .interval
                    .map_or(Duration::zero(), |i| i.times(i64::from(a.repeat)).approx());
                lo = lo.min(base).min(base + span);
                hi = hi.max(base).max(base + span);
            }
        }
    }
    // Nominal days and zone offsets can stretch a day by a few hours.
    (lo - Duration::days(2), hi + Duration::days(2))
}

/// Every alarm trigger in `[from, to)`, sorted by trigger, then UID, with
/// the default working time (Monday to Friday, no holidays) for alarms
/// that carry a working-day rule (see [`alarms_with`]).
///
/// Absolute triggers belong to the component that carries them and go off once,
/// not once per occurrence (§3.8.6.3).
///
/// # Errors
/// An inverted window, or a result or expansion beyond `limits`.
pub fn alarms<'a>(
    cal: &'a Calendar,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    floating: Tz,
    limits: &Limits,
) -> Result<Vec<AlarmHit<'a>>, Error> {
    alarms_with(cal, from, to, floating, limits, &WorkTime::default())
}

/// [`alarms`] with the calendar's working time: a trigger an alarm's
/// [`workdays`] rule moves is in the window when its *moved* instant is.
///
/// # Errors
/// An inverted window, or a result or expansion beyond `limits`.
pub fn alarms_with<'a>(
    cal: &'a Calendar,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    floating: Tz,
    limits: &Limits,
    work: &WorkTime,
) -> Result<Vec<AlarmHit<'a>>, Error> {
    check_window(from, to)?;
    let (mut out, rank_of) = collect_by_series(cal, limits, |s, out| {
        series_alarms(s, from, to, floating, limits, work, out)
    })?;
    // Same order as `order`, with the UID replaced by its rank.
    crate::order::sort_by_time_and_rank(
        &mut out,
        |i, h| (h.trigger, rank_of[i]),
        |h| (h.occurrence.start.instant, h.index, h.repetition),
    );
    Ok(out)
}

/// The sort key of a hit: trigger, then UID, then which occurrence and alarm.
pub(crate) fn order<'h>(
    h: &'h AlarmHit<'_>,
) -> (DateTime<Utc>, &'h str, DateTime<Utc>, usize, u32) {
    (
        h.trigger,
        &h.occurrence.event.uid,
        h.occurrence.start.instant,
        h.index,
        h.repetition,
    )
}

/// Pushes the triggers of one series that fall in `[from, to)`.
pub(crate) fn series_alarms<'a>(
    s: &Series<'a>,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    floating: Tz,
    limits: &Limits,
    work: &WorkTime,
    out: &mut Vec<AlarmHit<'a>>,
) -> Result<(), Error> {
    if s.master
        .iter()
        .chain(s.overrides.iter())
        .all(|e| e.alarms.is_empty() || e.is_closed_task())
    {
        // Nothing can go off: do not pay for (or fail on) expanding the series.
        return Ok(());
    }
    let (mut lo, mut hi) = reach(s);
    // A working-day rule can move a trigger by up to `max_move` either way.
    if s.master
        .iter()
        .chain(s.overrides.iter())
        .any(|e| e.alarms.iter().any(|a| workdays::rule_text(a).is_some()))
    {
        lo -= workdays::max_move();
        hi += workdays::max_move();
    }
    // `REPEAT` × `DURATION` can reach millions of years, past what chrono can
    // represent; no occurrence is that far out (DTSTART is in years 0–9999,
    // overrides move it by less than 10,000 years), so widen by at most this.
    let far = Duration::days(100_000 * 366);
    let (lo, hi) = (lo.max(-far), hi.min(far));
    let mut occs = Vec::new();
    series_occurrences(s, from - hi, to - lo, floating, limits, &mut occs)?;
    let first_new = out.len();
    // The master's absolute alarms first, so that a copy on an override is the
    // one dropped below.
    if let Some(master) = s.master {
        let first = crate::query::first_occurrence(master, floating);
        push_hits(
            &first,
            from,
            to,
            floating,
            work,
            |a| matches!(a.trigger, Trigger::Absolute(_)),
            out,
        );
    }
    for occ in &occs {
        // An absolute alarm goes off once (§3.8.6.3): with the occurrence of
        // the component that carries it — a master's first occurrence (below),
        // an override's own — not with every occurrence that inherits it.
        let own = occ.event.recurrence_id.is_some()
            && occ.recurrence_id.map(|r| r.instant)
                == occ.event.recurrence_id.map(|w| w.instant(floating));
        let wanted = |a: &Alarm| own || !matches!(a.trigger, Trigger::Absolute(_));
        push_hits(occ, from, to, floating, work, wanted, out);
        // Each occurrence can add `REPEAT` + 1 hits per alarm: check as we go,
        // not once per series, or memory runs out before the check is reached.
        if out.len() > limits.max_results {
            return Err(too_many(limits));
        }
    }
    // Overrides often carry a verbatim copy of the master's absolute alarm:
    // the same instant, action and text is one reminder, not several.
    // Only this series' hits: the rest of `out` was deduplicated already, and
    // walking it again per series made `alarms()` quadratic.
    let mut seen = std::collections::HashSet::new();
    let mine = out.split_off(first_new);
    out.extend(mine.into_iter().filter(|h| {
        !matches!(h.alarm.trigger, Trigger::Absolute(_))
            || seen.insert((
                h.trigger,
                h.repetition,
                h.alarm.action.clone(),
                h.alarm.description.clone(),
            ))
    }));
    Ok(())
}

pub use crate::upcoming::{Upcoming, next_alarm};

fn push_hits<'a>(
    occ: &Occurrence<'a>,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    floating: Tz,
    work: &WorkTime,
    wanted: impl Fn(&Alarm) -> bool,
    out: &mut Vec<AlarmHit<'a>>,
) {
    // A task that is done or cancelled (this occurrence, or the whole
    // series) rings no more.
    if occ.event.is_closed_task() {
        return;
    }
    for (index, alarm) in occ
        .event
        .alarms
        .iter()
        .enumerate()
        // A snooze alarm (RFC 9074) is when another alarm goes off again,
        // which the engine's snooze carries: no reminder of its own.
        .filter(|(_, a)| wanted(a) && !a.is_snooze())
    {
        for (repetition, trigger) in (0u32..).zip(triggers_with(occ, alarm, floating, work)) {
            if trigger >= from && trigger < to {
                out.push(AlarmHit {
                    occurrence: *occ,
                    index,
                    alarm,
                    repetition,
                    trigger,
                });
            }
        }
    }
}
