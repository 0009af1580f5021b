//! One `RRULE`, compiled for lazy expansion in wall-clock time.
//!
//! The `rrule` crate does the BY* arithmetic, but only ever in UTC: we hand it
//! the event's *wall-clock* `DTSTART` dressed as UTC, so no DST change can reach
//! it, and resolve each wall-clock result in the event's zone ourselves (RFC 5545
//! §3.3.5). This sidesteps the crate's DST bugs (its issue #115, rejected
//! DTSTARTs inside gaps, lost occurrences where DST changes at midnight).
//!
//! To answer "what happens in 2030" for a rule that started in 1990 without
//! walking 40 years, a rule with no `COUNT` is re-anchored: its start moves by a
//! whole number of periods (`INTERVAL` × FREQ unit) to just before the query,
//! with every BY* part that `DTSTART` implied written out explicitly so that the
//! moved rule produces exactly the original set from there on.

use chrono::{DateTime, Datelike, Duration, Months, NaiveDate, NaiveDateTime, Timelike, Utc};
use rrule::{Frequency, RRule, Tz as RTz, Unvalidated};

use super::parts::{self, Dropped};

/// Why a rule may not have both `COUNT` and `UNTIL`.
pub(crate) const BOTH: &str = "COUNT and UNTIL must not both be given (RFC 5545 §3.3.10)";

/// How a rule's `UNTIL` bounds it (inclusive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Until {
    /// `UNTIL=…Z` for a zoned start: compare instants.
    Instant(DateTime<Utc>),
    /// `UNTIL` as a local date-time or a date (end of that day): compare wall clock.
    Local(NaiveDateTime),
}

/// A validated rule, ready to iterate from any point.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The value as written, for export.
    pub source: String,
    /// Rule parts without `UNTIL` (which we apply, in the right time scale).
    parts: Vec<(String, String)>,
    freq: Frequency,
    interval: u32,
    /// `COUNT`, if any (such rules are never re-anchored).
    pub count: Option<u32>,
    /// `UNTIL`, if any.
    pub until: Option<Until>,
    /// The rule as the `rrule` crate takes it, parsed once (parsing its text
    /// form on every query was a sixth of `next_alarm`'s time).
    plain: Prepared,
    /// The same with the parts `DTSTART` implies pinned, for re-anchoring
    /// MONTHLY/YEARLY rules; `None` where they are never re-anchored.
    pinned: Option<Prepared>,
}

/// Parts for the `rrule` crate plus the filters we apply to its output.
#[derive(Debug, Clone)]
struct Prepared {
    rule: RRule<Unvalidated>,
    hours: Vec<u32>,
    minutes: Vec<u32>,
}

impl PartialEq for Rule {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source && self.until == other.until
    }
}

impl Eq for Rule {}

fn freq_of(s: &str) -> Result<Frequency, String> {
    Ok(match s {
        "SECONDLY" => Frequency::Secondly,
        "MINUTELY" => Frequency::Minutely,
        "HOURLY" => Frequency::Hourly,
        "DAILY" => Frequency::Daily,
        "WEEKLY" => Frequency::Weekly,
        "MONTHLY" => Frequency::Monthly,
        "YEARLY" => Frequency::Yearly,
        other => {
            return Err(format!(
                "unknown FREQ {other:?} (expected SECONDLY … YEARLY)"
            ));
        }
    })
}

impl Rule {
    /// Parses and validates an `RRULE` value, dropping each bad part (see
    /// `parts` for which, and what is left); the caller reports what was
    /// dropped (strict reading refuses the first). `until_of` interprets the
    /// raw `UNTIL` value in the event's time scale. A rule may come back
    /// with both `COUNT` and `UNTIL`: the caller keeps one (see
    /// `Rule::without`).
    ///
    /// # Errors
    /// A rule nothing can be made of (no `FREQ`, an unknown one), naming
    /// the part at fault.
    pub fn parse(
        value: &str,
        dtstart: NaiveDateTime,
        until_of: impl FnOnce(&str) -> Result<Until, String>,
    ) -> Result<(Self, Vec<Dropped>), String> {
        let mut split = parts::split(value);
        let get = |p: &parts::Parts, k: &str| {
            p.parts
                .iter()
                .find(|(pk, _)| pk == k)
                .map(|(_, v)| v.clone())
        };
        let freq = freq_of(&get(&split, "FREQ").ok_or("the rule has no FREQ")?)?;
        let until = match split.until.as_deref().map(until_of).transpose() {
            Ok(u) => u,
            Err(m) => {
                split.dropped.push(Dropped {
                    problem: m,
                    action: "UNTIL dropped, the rest of the rule kept".into(),
                    empty_part: false,
                });
                split.until = None;
                None
            }
        };
        // Validate the rule as written (all parts), so iteration never fails
        // later; a part this FREQ forbids goes (the last such first).
        let at = dtstart.and_utc().with_timezone(&RTz::UTC);
        if let Err(e) = Self::parse_parts(&split.parts)?.build(at) {
            let fix = split.parts.iter().rev().map(|(k, _)| k).find(|k| {
                k.starts_with("BY") && {
                    let rest: Vec<_> = split
                        .parts
                        .iter()
                        .filter(|(pk, _)| pk != *k)
                        .cloned()
                        .collect();
                    Self::parse_parts(&rest).is_ok_and(|r| r.build(at).is_ok())
                }
            });
            let Some(k) = fix.cloned() else {
                return Err(format!("{e}"));
            };
            split.dropped.push(Dropped {
                problem: format!("{k}: {e}"),
                action: format!("{k} dropped, the rest of the rule kept"),
                empty_part: false,
            });
            split.remove(&k);
        }
        let count = get(&split, "COUNT").and_then(|c| c.parse::<u32>().ok());
        let interval = get(&split, "INTERVAL")
            .and_then(|i| i.parse::<u32>().ok())
            .unwrap_or(1);
        let source = if split.dropped.is_empty() {
            value.trim().to_owned()
        } else {
            split.text()
        };
        let plain = Self::prepare(freq, &split.parts)?;
        let mut rule = Self {
            source,
            parts: split.parts,
            freq,
            interval,
            count,
            until,
            plain,
            pinned: None,
        };
        if count.is_none() && matches!(freq, Frequency::Monthly | Frequency::Yearly) {
            rule.pinned = Self::prepare(freq, &rule.pinned(dtstart)).ok();
        }
        Ok((rule, split.dropped))
    }

    /// This rule without its `COUNT` or its `UNTIL` (`name`), for a rule
    /// given both.
    pub(crate) fn without(&self, name: &str, dtstart: NaiveDateTime) -> Self {
        let mut rule = self.clone();
        rule.parts.retain(|(k, _)| k != name);
        rule.source = self
            .source
            .split(';')
            .filter(|p| {
                let k = p.split_once('=').map_or(*p, |(k, _)| k);
                !p.trim().is_empty() && !k.trim().eq_ignore_ascii_case(name)
            })
            .collect::<Vec<_>>()
            .join(";");
        if name == "COUNT" {
            rule.count = None;
            if matches!(self.freq, Frequency::Monthly | Frequency::Yearly) {
                rule.pinned = Self::prepare(self.freq, &rule.pinned(dtstart)).ok();
            }
        } else {
            rule.until = None;
        }
        rule
    }

    fn parse_parts(parts: &[(String, String)]) -> Result<RRule<Unvalidated>, String> {
        let text: Vec<String> = parts.iter().map(|(k, v)| format!("{k}={v}")).collect();
        text.join(";").parse().map_err(|e| format!("{e}"))
    }

    fn prepare(freq: Frequency, parts: &[(String, String)]) -> Result<Prepared, String> {
        let (kept, hours, minutes) = Self::split_parts(freq, parts);
        Ok(Prepared {
            rule: Self::parse_parts(&kept)?,
            hours,
            minutes,
        })
    }

    /// The parts handed to the `rrule` crate, and the hour/minute filters we
    /// apply to its output ourselves.
    ///
    /// `COUNT` is always ours (it must count what survives our filters). And
    /// rrule 0.14 skips occurrences when a MINUTELY/SECONDLY rule combines a
    /// day filter with `BYHOUR` (or SECONDLY with `BYMINUTE`): from
    /// 2020-01-31, `FREQ=MINUTELY;BYMONTHDAY=15;BYHOUR=9;BYMINUTE=0` yields
    /// 2020-08-15 first, not 2020-02-15 (python-dateutil agrees with the
    /// latter). Those parts are filters (RFC 5545 §3.3.10 table: "Limit") at
    /// these frequencies, so applying them afterwards gives the same set.
    fn split_parts(
        freq: Frequency,
        parts: &[(String, String)],
    ) -> (Vec<(String, String)>, Vec<u32>, Vec<u32>) {
        let sub_hourly = matches!(freq, Frequency::Minutely | Frequency::Secondly);
        let ours = |k: &str| {
            k == "COUNT"
                || (sub_hourly && k == "BYHOUR")
                || (freq == Frequency::Secondly && k == "BYMINUTE")
        };
        let list = |k: &str| -> Vec<u32> {
            parts
                .iter()
                .filter(|(pk, _)| pk == k && ours(k))
                .flat_map(|(_, v)| v.split(',').filter_map(|n| n.trim().parse().ok()))
                .collect()
        };
        let kept = parts.iter().filter(|(k, _)| !ours(k)).cloned().collect();
        (kept, list("BYHOUR"), list("BYMINUTE"))
    }

    /// The BY* parts `DTSTART` implies (RFC 5545 §3.3.10 "information not
    /// contained in the rule … is derived from DTSTART"), made explicit.
    fn pinned(&self, dtstart: NaiveDateTime) -> Vec<(String, String)> {
        let mut parts = self.parts.clone();
        let has = |k: &str| self.parts.iter().any(|(pk, _)| pk == k);
        let mut pin = |k: &str, v: u32| {
            if !has(k) {
                parts.push((k.to_owned(), v.to_string()));
            }
        };
        pin("BYHOUR", dtstart.hour());
        pin("BYMINUTE", dtstart.minute());
        pin("BYSECOND", dtstart.second());
        let dated = ["BYWEEKNO", "BYYEARDAY", "BYMONTHDAY", "BYDAY"]
            .iter()
            .any(|k| has(k));
        if !dated {
            if self.freq == Frequency::Yearly {
                pin("BYMONTH", dtstart.month());
            }
            pin("BYMONTHDAY", dtstart.day());
        }
        parts
    }

    /// Wall-clock candidates in order, starting no later than `from` (they may
    /// begin a little before it). `dtstart` is the event's own start.
    pub(crate) fn iter_from(
        &self,
        dtstart: NaiveDateTime,
        from: NaiveDateTime,
    ) -> Box<dyn Iterator<Item = NaiveDateTime> + Send> {
        let anchored = if self.count.is_none() {
            self.anchor(dtstart, from)
        } else {
            None
        };
        let (start, prepared) = match anchored {
            Some((start, true)) => (start, self.pinned.as_ref().unwrap_or(&self.plain)),
            Some((start, false)) => (start, &self.plain),
            None => (dtstart, &self.plain),
        };
        let (hours, minutes) = (prepared.hours.clone(), prepared.minutes.clone());
        match prepared
            .rule
            .clone()
            .build(start.and_utc().with_timezone(&RTz::UTC))
        {
            // `limit()` ends a rule that can never match (BYMONTH=2;BYMONTHDAY=30)
            // after the crate's bounded search instead of looping forever.
            Ok(set) => Box::new(
                set.limit()
                    .into_iter()
                    .map(|t| t.naive_utc())
                    .filter(move |t| {
                        (hours.is_empty() || hours.contains(&t.hour()))
                            && (minutes.is_empty() || minutes.contains(&t.minute()))
                    }),
            ),
            // Validated in `parse`; an anchored rule that fails is simply not used.
            Err(_) => Box::new(std::iter::empty()),
        }
    }

    /// A start moved by whole periods to before `from`, with the implied parts
    /// pinned; `None` when it would not move forward.
    fn anchor(&self, dtstart: NaiveDateTime, from: NaiveDateTime) -> Option<(NaiveDateTime, bool)> {
        // Stay at least one period before `from` so the first period is whole.
        let gap = from.signed_duration_since(dtstart);
        let step = i64::from(self.interval);
        let periods = |unit_secs: i64| (gap.num_seconds() / unit_secs / step - 1) * step;
        let moved = match self.freq {
            Frequency::Secondly => dtstart + Duration::seconds(periods(1).max(0)),
            Frequency::Minutely => dtstart + Duration::minutes(periods(60).max(0)),
            Frequency::Hourly => dtstart + Duration::hours(periods(3600).max(0)),
            Frequency::Daily => dtstart + Duration::days(periods(86_400).max(0)),
            Frequency::Weekly => dtstart + Duration::weeks(periods(7 * 86_400).max(0)),
            Frequency::Monthly | Frequency::Yearly => {
                let months_per = if self.freq == Frequency::Yearly {
                    12
                } else {
                    1
                };
                let months = i64::from(from.year() - dtstart.year()) * 12 + i64::from(from.month())
                    - i64::from(dtstart.month());
                let k = (months / months_per / step - 1) * step;
                if k <= 0 {
                    return None;
                }
                let first = NaiveDate::from_ymd_opt(dtstart.year(), dtstart.month(), 1)?;
                let first = if self.freq == Frequency::Yearly {
                    first.with_month(1)?
                } else {
                    first
                };
                let shifted =
                    first.checked_add_months(Months::new(u32::try_from(k * months_per).ok()?))?;
                // Only with the implied parts pinned may the start move to a
                // month's first day.
                return self
                    .pinned
                    .is_some()
                    .then(|| (shifted.and_time(chrono::NaiveTime::MIN), true));
            }
        };
        (moved > dtstart).then_some((moved, false))
    }
}

/// Iterates a bare `RRULE` from a wall-clock start, for `VTIMEZONE` observances
/// (whose `UNTIL` we apply loosely: callers stop at their own horizon),
/// starting no later than `from` (re-anchored there: an Exchange observance
/// that starts in 1601 or 0001 does not walk the centuries before it).
pub(crate) fn naive_rule_iter(
    value: &str,
    dtstart: NaiveDateTime,
    from: NaiveDateTime,
) -> Result<impl Iterator<Item = NaiveDateTime>, String> {
    let (rule, dropped) = Rule::parse(value, dtstart, |u| {
        crate::ics::values::date_time(u)
            .map(|(t, _)| Until::Local(t))
            .or_else(|_| {
                crate::ics::values::date(u)
                    .map(|d| Until::Local(d.and_hms_opt(23, 59, 59).unwrap_or_default()))
                    .map_err(|m| format!("UNTIL: {m}"))
            })
    })?;
    // An observance's rule is read as strictly as ever (an empty part was
    // always passed over).
    if let Some(d) = dropped.into_iter().find(|d| !d.empty_part) {
        return Err(d.problem);
    }
    if rule.count.is_some() && rule.until.is_some() {
        return Err(BOTH.into());
    }
    let until = rule.until;
    Ok(rule
        .iter_from(dtstart, from.max(dtstart))
        .take_while(move |t| match until {
            Some(Until::Local(u)) => *t <= u,
            Some(Until::Instant(u)) => t.and_utc() <= u,
            None => true,
        }))
}
