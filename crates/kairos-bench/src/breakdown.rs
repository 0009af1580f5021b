//! `--breakdown`: where the next-trigger query spends its time, measured through
//! the public API only (so it keeps working while the core changes inside).
//!
//! * the fixed cost of starting a recurrence iterator ([`recur::originals`]) for
//!   every master, with and without taking its first occurrence;
//! * `next_alarm` on sub-calendars of one rule shape or one kind of end
//!   (`COUNT`, `UNTIL`, open), as time per event;
//! * the final sort of `occurrences`/`alarms`, redone here on the same data.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::Result;
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use kairos_core::alarms::AlarmHit;
use kairos_core::model::Calendar;
use kairos_core::query::Occurrence;
use kairos_core::{Limits, alarms, recur};

use crate::events::Spec;
use crate::report::{fmt_dur, median};

fn time_n(runs: usize, mut f: impl FnMut()) -> Duration {
    let times: Vec<Duration> = (0..runs.max(1))
        .map(|_| {
            let t0 = Instant::now();
            f();
            t0.elapsed()
        })
        .collect();
    median(&times)
}

fn per_event(total: Duration, n: usize) -> String {
    let n = u32::try_from(n.max(1)).unwrap_or(u32::MAX);
    format!("{:>9}  ({}/event)", fmt_dur(total), fmt_dur(total / n))
}

/// Prints the breakdown. `cal.events[i]` must be the event of `specs[i]`.
///
/// # Errors
/// A query fails.
pub fn run(
    cal: &Calendar,
    specs: &[Spec],
    now: DateTime<Utc>,
    floating: Tz,
    limits: &Limits,
    runs: usize,
) -> Result<()> {
    let n = cal.events.len();
    println!("breakdown of next_alarm (median of {runs} runs each):");
    let from = now - chrono::Duration::days(3);
    let steps = limits.max_steps_per_event;
    let t = time_n(runs, || {
        for ev in &cal.events {
            std::hint::black_box(recur::originals(ev, from, floating, steps));
        }
    });
    println!(
        "  recur::originals() setup, all {n} masters:        {}",
        per_event(t, n)
    );
    let t = time_n(runs, || {
        for ev in &cal.events {
            std::hint::black_box(recur::originals(ev, from, floating, steps).next());
        }
    });
    println!(
        "  recur::originals() setup + first occurrence:        {}",
        per_event(t, n)
    );
    let whole = time_n(runs, || {
        std::hint::black_box(alarms::next_alarm(cal, now, floating, limits).ok());
    });
    println!(
        "  next_alarm, whole calendar:                          {}",
        per_event(whole, n)
    );

    // What-if: the series a cheap end bound (last occurrence of a COUNT/UNTIL
    // rule, known once per event) would skip, because they end before `now`
    // minus the longest alarm lead (1 day here) and the core's 2-day slack.
    let live: Vec<_> = cal
        .events
        .iter()
        .filter(|ev| recur::originals(ev, from, floating, steps).next().is_some())
        .cloned()
        .collect();
    let pruned = Calendar {
        name: cal.name.clone(),
        events: live,
        extra: Vec::new(),
    };
    let t = time_n(runs, || {
        std::hint::black_box(alarms::next_alarm(&pruned, now, floating, limits).ok());
    });
    let same = alarms::next_alarm(&pruned, now, floating, limits)?
        .map(|h| (h.trigger, h.occurrence.event.uid.clone()))
        == alarms::next_alarm(cal, now, floating, limits)?
            .map(|h| (h.trigger, h.occurrence.event.uid.clone()));
    println!(
        "  next_alarm without the {} series ended before now-3d: {}  (same answer: {same})",
        n - pruned.events.len(),
        per_event(t, pruned.events.len())
    );

    let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, s) in specs.iter().enumerate() {
        groups
            .entry(format!("shape {:?}", s.kind))
            .or_default()
            .push(i);
        let end = if s.rrule.contains("COUNT=") {
            "end COUNT"
        } else if s.until_utc.is_some() || s.until_local.is_some() {
            "end UNTIL"
        } else {
            "end open"
        };
        groups.entry(end.to_owned()).or_default().push(i);
    }
    for (name, idx) in &groups {
        let sub = Calendar {
            name: cal.name.clone(),
            events: idx.iter().map(|&i| cal.events[i].clone()).collect(),
            extra: Vec::new(),
        };
        let t = time_n(runs, || {
            std::hint::black_box(alarms::next_alarm(&sub, now, floating, limits).ok());
        });
        println!(
            "  next_alarm, {name:<20} {:>5} events:     {}",
            idx.len(),
            per_event(t, idx.len())
        );
    }
    Ok(())
}

type OccKey<'a> = (DateTime<Utc>, &'a str, Option<DateTime<Utc>>);
type HitKey<'a> = (DateTime<Utc>, &'a str, DateTime<Utc>, usize, u32);

fn occ_key<'a>(o: &'a Occurrence<'_>) -> OccKey<'a> {
    (
        o.start.instant,
        &o.event.uid,
        o.recurrence_id.map(|r| r.instant),
    )
}

fn hit_key<'a>(h: &'a AlarmHit<'_>) -> HitKey<'a> {
    (
        h.trigger,
        &h.occurrence.event.uid,
        h.occurrence.start.instant,
        h.index,
        h.repetition,
    )
}

/// Times the final sort of `occurrences`/`alarms` on input in the order the
/// core builds it (series after series: file order, which is UID order here),
/// with the core's comparator, stable as the core does it, and unstable.
pub fn sorts(occ: &[Occurrence<'_>], hits: &[AlarmHit<'_>], runs: usize) {
    println!("breakdown of the final sort (median of {runs} runs each):");
    let mut base = occ.to_vec();
    base.sort_by(|a, b| (&a.event.uid, a.start.instant).cmp(&(&b.event.uid, b.start.instant)));
    let stable = time_n(runs, || {
        let mut v = base.clone();
        v.sort_by(|a, b| occ_key(a).cmp(&occ_key(b)));
        std::hint::black_box(v);
    });
    let unstable = time_n(runs, || {
        let mut v = base.clone();
        v.sort_unstable_by(|a, b| occ_key(a).cmp(&occ_key(b)));
        std::hint::black_box(v);
    });
    let copy = time_n(runs, || {
        std::hint::black_box(base.clone());
    });
    println!(
        "  {} occurrences: copy {}, sort_by {}, sort_unstable_by {}",
        occ.len(),
        fmt_dur(copy),
        fmt_dur(stable.saturating_sub(copy)),
        fmt_dur(unstable.saturating_sub(copy))
    );
    let mut base = hits.to_vec();
    base.sort_by(|a, b| {
        (&a.occurrence.event.uid, a.occurrence.start.instant, a.index).cmp(&(
            &b.occurrence.event.uid,
            b.occurrence.start.instant,
            b.index,
        ))
    });
    let stable = time_n(runs, || {
        let mut v = base.clone();
        v.sort_by(|a, b| hit_key(a).cmp(&hit_key(b)));
        std::hint::black_box(v);
    });
    let unstable = time_n(runs, || {
        let mut v = base.clone();
        v.sort_unstable_by(|a, b| hit_key(a).cmp(&hit_key(b)));
        std::hint::black_box(v);
    });
    let copy = time_n(runs, || {
        std::hint::black_box(base.clone());
    });
    println!(
        "  {} alarm hits: copy {}, sort_by {}, sort_unstable_by {}",
        hits.len(),
        fmt_dur(copy),
        fmt_dur(stable.saturating_sub(copy)),
        fmt_dur(unstable.saturating_sub(copy))
    );
}
