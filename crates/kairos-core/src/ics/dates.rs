//! Property values that are dates, times and rules, read in their zones, and
//! the coercions lenient reading applies when producers mix `DATE` and
//! `DATE-TIME` within one event.

use chrono::{Duration, NaiveTime};
use chrono_tz::Tz;

use super::lexer::Property;
use super::values;
use super::warning::{At, Sink};
use super::zones::Zones;
use crate::error::Error;
use crate::model::{End, When, Zone};
use crate::recur::{Rule, Until};
use crate::time::resolve_local;

/// What reads values: the file's zones and the warning sink.
pub(crate) struct Reader<'a> {
    pub zones: Zones<'a>,
    pub sink: Sink,
}

pub(crate) fn err(p: &Property, msg: impl Into<String>) -> Error {
    Error::property(p.line, &p.name, msg)
}

impl Reader<'_> {
    /// One `DATE` or `DATE-TIME` value of property `p`.
    ///
    /// The value is read as what it is: a `DATE-TIME` written under
    /// `VALUE=DATE` is refused (lenient: read as the `DATE-TIME` it is), and a
    /// `DATE` under `VALUE=DATE-TIME` is read as a `DATE` (lenient: noted).
    pub(crate) fn when_value(&mut self, p: &Property, v: &str, at: At<'_>) -> Result<When, Error> {
        let declared = p.param("VALUE");
        let says = |t: &str| declared.is_some_and(|d| d.eq_ignore_ascii_case(t));
        let looks_date = v.trim().len() == 8;
        if looks_date {
            if says("DATE-TIME") {
                self.sink.note(
                    p.line,
                    at,
                    || format!("{}: VALUE=DATE-TIME, but {:?} is a DATE", p.name, v.trim()),
                    "read as the DATE it is",
                );
            }
            return values::date(v).map(When::Date).map_err(|m| err(p, m));
        }
        if says("DATE") {
            if values::date_time(v).is_err() {
                return values::date(v).map(When::Date).map_err(|m| err(p, m));
            }
            let e = err(p, format!("VALUE=DATE, but {:?} is a DATE-TIME", v.trim()));
            self.sink.repair(e, at, "read as the DATE-TIME it is")?;
        }
        let (local, utc) = values::date_time(v).map_err(|m| err(p, m))?;
        let zone = if utc {
            Zone::Utc
        } else {
            self.zones
                .of(p, at, &mut self.sink)?
                .unwrap_or(Zone::Floating)
        };
        Ok(When::DateTime { local, zone })
    }

    pub(crate) fn when(&mut self, p: &Property, at: At<'_>) -> Result<When, Error> {
        self.when_value(p, &p.value, at)
    }

    /// Every value of a list property (`RDATE`, `EXDATE`); periods keep
    /// their start. A bad value is refused (lenient: that value is skipped).
    pub(crate) fn when_list(&mut self, p: &Property, at: At<'_>) -> Result<Vec<When>, Error> {
        let mut out = Vec::new();
        for v in values::split_list(&p.value) {
            match self.when_value(p, v.split_once('/').map_or(v, |(start, _)| start), at) {
                Ok(w) => out.push(w),
                Err(e) => self.sink.repair(e, at, "this value ignored")?,
            }
        }
        Ok(out)
    }

    /// The `start/end` and `start/duration` values of an `RDATE;VALUE=PERIOD`.
    pub(crate) fn periods(&mut self, p: &Property, at: At<'_>) -> Result<Vec<(When, End)>, Error> {
        let mut out = Vec::new();
        for v in values::split_list(&p.value) {
            let Some((start, end)) = v.split_once('/') else {
                continue;
            };
            let period = self.when_value(p, start, at).and_then(|start| {
                let end = if end.trim_start().starts_with(['P', 'p', '+', '-']) {
                    End::For(values::duration(end).map_err(|m| err(p, m))?)
                } else {
                    End::At(self.when_value(p, end, at)?)
                };
                Ok((start, end))
            });
            match period {
                Ok(period) => out.push(period),
                // The start is kept as a plain RDATE (when it parsed).
                Err(e) => self.sink.repair(e, at, "this period's own end ignored")?,
            }
        }
        Ok(out)
    }
}

/// An `RRULE`/`EXRULE` of an event starting at `start`, each bad part
/// dropped (lenient) or refused (strict) through the sink (see
/// `recur::parts`). `Err`: a rule nothing can be made of.
pub(crate) fn rule(
    p: &Property,
    start: When,
    r: &mut Reader<'_>,
    at: At<'_>,
) -> Result<Rule, Error> {
    let until_of = |u: &str| -> Result<Until, String> {
        let zone = start.zone();
        if let Ok(d) = values::date(u) {
            // A date UNTIL on a timed event: through the end of that day.
            let end = if start.is_date() {
                d.and_time(NaiveTime::MIN)
            } else {
                d.and_hms_opt(23, 59, 59).unwrap_or_default()
            };
            return Ok(Until::Local(end));
        }
        let (local, utc) = values::date_time(u).map_err(|m| format!("UNTIL: {m}"))?;
        Ok(match (utc, zone) {
            (true, Zone::Floating) | (_, Zone::Utc) if start.is_date() => Until::Local(local),
            (true, _) => Until::Instant(local.and_utc()),
            (false, Zone::Floating | Zone::Utc) => Until::Local(local),
            (false, zone) => Until::Instant(resolve_local(local, zone, Tz::UTC)),
        })
    };
    let (rule, dropped) = Rule::parse(&p.value, start.local(), until_of).map_err(|m| err(p, m))?;
    for d in dropped {
        r.sink.repair(err(p, d.problem), at, &d.action)?;
    }
    if rule.count.is_none() || rule.until.is_none() {
        return Ok(rule);
    }
    let later = crate::recur::later_end(&rule, start);
    let action = format!(
        "{later} dropped: {} ends the series first (python-dateutil applies both)",
        if later == "UNTIL" { "COUNT" } else { "UNTIL" }
    );
    r.sink.repair(err(p, crate::recur::BOTH), at, &action)?;
    Ok(rule.without(later, start.local()))
}

/// `w` with the value type of `like` (an event's `DTSTART`), as the major
/// clients read mixed events: a `DATE-TIME` becomes its local date (an end
/// that is not at midnight covers its whole day); a `DATE` becomes that day
/// at `like`'s time of day (an end: midnight) in `like`'s zone.
pub(crate) fn coerce(w: When, like: When, is_end: bool) -> When {
    match (like, w) {
        (When::Date(_), When::DateTime { local, .. }) => {
            let d = local.date();
            When::Date(if is_end && local.time() != NaiveTime::MIN {
                d.checked_add_signed(Duration::days(1)).unwrap_or(d)
            } else {
                d
            })
        }
        (When::DateTime { local, zone }, When::Date(d)) => When::DateTime {
            local: d.and_time(if is_end { NaiveTime::MIN } else { local.time() }),
            zone,
        },
        _ => w,
    }
}

/// Does `w`'s wall-clock time fall in a DST gap of its zone?
pub(crate) fn in_gap(w: When) -> bool {
    match w {
        When::DateTime {
            local,
            zone: Zone::Tz(tz),
        } => {
            use chrono::TimeZone as _;
            matches!(tz.from_local_datetime(&local), chrono::LocalResult::None)
        }
        When::DateTime {
            local,
            zone: Zone::Custom(c),
        } => c.in_gap(local),
        _ => false,
    }
}

/// A `DTEND` (or a task's `DUE`) checked against `DTSTART`: the same value type (lenient:
/// coerced to DTSTART's) and not before it (lenient: zero length).
pub(super) fn end_of(
    p: &Property,
    end: crate::model::When,
    start: crate::model::When,
    r: &mut Reader<'_>,
    at: At<'_>,
) -> Result<End, Error> {
    let mut end = end;
    if end.is_date() != start.is_date() {
        let e = err(
            p,
            format!(
                "{} must have the same value type (DATE or DATE-TIME) as DTSTART",
                p.name
            ),
        );
        r.sink.repair(e, at, "converted to DTSTART's type")?;
        end = coerce(end, start, true);
    }
    if in_gap(end) {
        r.sink.note(
            p.line,
            at,
            || format!("{}: the time falls in a daylight-saving gap", p.name),
            "read with the offset before the gap (RFC 5545 §3.3.5)",
        );
    }
    let utc = chrono_tz::Tz::UTC;
    if end.zone() == start.zone() && end.instant(utc) < start.instant(utc) {
        let e = err(p, format!("{} is before DTSTART", p.name));
        r.sink.repair(e, at, "treated as zero length")?;
        return Ok(End::At(start));
    }
    Ok(End::At(end))
}

/// The `DURATION` of an event or a task (one reading for both): a negative
/// one is refused (lenient: zero length), an unreadable one too (lenient:
/// ignored, `None`).
pub(super) fn duration_of(
    p: &Property,
    r: &mut Reader<'_>,
    at: At<'_>,
) -> Result<Option<End>, Error> {
    match values::duration(&p.value) {
        Ok(d) if d.days < 0 || d.secs < 0 => {
            let what = if at.component == "VTODO" {
                "a task"
            } else {
                "an event"
            };
            let e = err(p, format!("a negative DURATION is not allowed for {what}"));
            r.sink.repair(e, at, "treated as zero length")?;
            Ok(Some(End::For(crate::time::Dur::default())))
        }
        Ok(d) => Ok(Some(End::For(d))),
        Err(m) => r
            .sink
            .repair(err(p, m), at, "DURATION ignored")
            .map(|()| None),
    }
}

/// `RDATE`/`EXDATE` values with DTSTART's value type: producers write
/// `DATE-TIME` exceptions on all-day series (and the reverse); like the major
/// clients, Kairos matches them by date.
pub(super) fn matched(
    p: &Property,
    dates: Vec<crate::model::When>,
    start: crate::model::When,
    r: &mut Reader<'_>,
    at: At<'_>,
) -> Vec<crate::model::When> {
    if dates.iter().all(|w| w.is_date() == start.is_date()) {
        return dates;
    }
    let kind = if start.is_date() { "DATE" } else { "DATE-TIME" };
    r.sink.note(
        p.line,
        at,
        || format!("{}: value type differs from DTSTART's ({kind})", p.name),
        "matched by date",
    );
    dates.into_iter().map(|w| coerce(w, start, false)).collect()
}
