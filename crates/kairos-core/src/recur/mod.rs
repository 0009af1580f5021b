//! Recurrence: the original start of every occurrence of a series (RFC 5545
//! §3.8.5: `DTSTART`, `RRULE`, `RDATE`, `EXDATE`, `EXRULE`), produced lazily in
//! order from any instant, so no query ever materialises an unbounded series.

mod parts;
mod rule;

use std::collections::HashSet;
use std::iter::Peekable;

use chrono::{DateTime, Duration, NaiveDate, Utc};
use chrono_tz::Tz;

pub use parts::Dropped;
pub(crate) use rule::{BOTH, naive_rule_iter};
pub use rule::{Rule, Until};

use crate::model::{Event, When, Zone};
use crate::time::{local_of, resolve_local};

type Stream = Peekable<Box<dyn Iterator<Item = DateTime<Utc>> + Send>>;

/// Original occurrence starts of one master event, ascending and unique, each at
/// or after the `from` given to [`originals`].
pub struct Originals {
    sources: Vec<Stream>,
    excluded: HashSet<DateTime<Utc>>,
    excluded_dates: HashSet<NaiveDate>,
    exrules: Vec<Stream>,
    /// The series' zone, in which excluded dates are matched.
    zone: Zone,
    floating: Tz,
    last: Option<DateTime<Utc>>,
    from: DateTime<Utc>,
    steps: usize,
    max_steps: usize,
    /// Set when the step budget ran out before the series did: the caller must
    /// report it, since the answer would otherwise be silently incomplete.
    pub over_budget: bool,
}

/// The wall-clock candidates of each rule, as instants in the event's zone.
fn rule_stream(
    start: When,
    rule: &Rule,
    from_local: chrono::NaiveDateTime,
    floating: Tz,
) -> Stream {
    let dtstart = start.local();
    let zone = start.zone();
    let mut candidates = rule.iter_from(dtstart, from_local).peekable();
    let count = rule.count.map(|c| {
        // RFC 5545 §3.3.10: "The DTSTART property value always counts as the
        // first occurrence." When the rule itself does not produce DTSTART,
        // DTSTART (added by `originals`) takes one of the COUNT places.
        let produces_start = candidates.peek() == Some(&dtstart);
        if produces_start {
            c as usize
        } else {
            (c as usize).saturating_sub(1)
        }
    });
    let until = rule.until;
    let bounded = candidates
        .take(count.unwrap_or(usize::MAX))
        .take_while(move |t| match until {
            Some(Until::Local(u)) => *t <= u,
            Some(Until::Instant(u)) => resolve_local(*t, zone, floating) <= u,
            None => true,
        });
    let it: Box<dyn Iterator<Item = DateTime<Utc>> + Send> =
        Box::new(bounded.map(move |t| resolve_local(t, zone, floating)));
    it.peekable()
}

/// Occurrences walked at most to tell whether `COUNT` or `UNTIL` ends a
/// rule given both; past it, `UNTIL` is taken to.
const BOTH_WALK: usize = 100_000;

/// Of a rule given both `COUNT` and `UNTIL` (which RFC 5545 forbids), the
/// part that ends it later, so that dropping it leaves the set
/// python-dateutil gives (it applies both). Equal: `UNTIL` (the set is the
/// same either way).
#[must_use]
pub(crate) fn later_end(rule: &Rule, start: When) -> &'static str {
    let Some(count) = rule.count else {
        return "COUNT";
    };
    let floating = Tz::UTC;
    let from = start.local() - Duration::days(2);
    let full = rule_stream(start, &rule.without("UNTIL", start.local()), from, floating)
        .take(BOTH_WALK)
        .count();
    let both = rule_stream(start, rule, from, floating)
        .take(BOTH_WALK)
        .count();
    if full == BOTH_WALK && count as usize > BOTH_WALK {
        return "COUNT";
    }
    if both < full { "COUNT" } else { "UNTIL" }
}

/// Starts (instants) of every original occurrence of `ev` at or after `from`.
/// Floating and all-day values are read in `floating`.
#[must_use]
pub fn originals(ev: &Event, from: DateTime<Utc>, floating: Tz, max_steps: usize) -> Originals {
    let zone = ev.start.zone();
    // Local lower bound, two days early so that no zone offset can make us skip.
    let from_local = local_of(from, zone, floating) - Duration::days(2);
    let mut sources: Vec<Stream> = ev
        .rrules
        .iter()
        .map(|r| rule_stream(ev.start, r, from_local, floating))
        .collect();
    let mut fixed: Vec<DateTime<Utc>> = ev.rdates.iter().map(|w| w.instant(floating)).collect();
    fixed.push(ev.start.instant(floating));
    fixed.sort_unstable();
    let fixed: Box<dyn Iterator<Item = DateTime<Utc>> + Send> = Box::new(fixed.into_iter());
    sources.push(fixed.peekable());
    let all_day = ev.start.is_date();
    let mut excluded = HashSet::new();
    let mut excluded_dates = HashSet::new();
    for ex in &ev.exdates {
        match ex {
            When::Date(d) => {
                excluded_dates.insert(*d);
            }
            w if all_day => {
                excluded_dates.insert(w.local().date());
            }
            w => {
                excluded.insert(w.instant(floating));
            }
        }
    }
    let exrules = ev
        .exrules
        .iter()
        .map(|r| rule_stream(ev.start, r, from_local, floating))
        .collect();
    Originals {
        sources,
        excluded,
        excluded_dates,
        exrules,
        zone,
        floating,
        last: None,
        from,
        steps: 0,
        max_steps,
        over_budget: false,
    }
}

impl Originals {
    fn is_excluded(&mut self, t: DateTime<Utc>) -> bool {
        if self.excluded.contains(&t) {
            return true;
        }
        if !self.excluded_dates.is_empty() {
            let date = local_of(t, self.zone, self.floating).date();
            if self.excluded_dates.contains(&date) {
                return true;
            }
        }
        self.exrules.iter_mut().any(|ex| {
            while ex.next_if(|x| *x < t).is_some() {}
            ex.peek() == Some(&t)
        })
    }
}

impl Iterator for Originals {
    type Item = DateTime<Utc>;

    fn next(&mut self) -> Option<DateTime<Utc>> {
        loop {
            if self.steps >= self.max_steps {
                self.over_budget = true;
                return None;
            }
            self.steps += 1;
            let (idx, _) = self
                .sources
                .iter_mut()
                .enumerate()
                .filter_map(|(i, s)| s.peek().map(|t| (i, *t)))
                .min_by_key(|(_, t)| *t)?;
            let t = self.sources[idx].next()?;
            if self.last.is_some_and(|l| t <= l) || t < self.from || self.is_excluded(t) {
                continue;
            }
            self.last = Some(t);
            return Some(t);
        }
    }
}
