//! iCalendar text → [`Calendar`]: every `VEVENT` with its `VALARM`s, time zones
//! mapped to IANA, rules validated. Unknown properties are kept verbatim.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use chrono::Datelike;
use chrono_tz::Tz;

use super::lexer::{self, Component, Property};
use super::values;
use crate::error::{Error, Limits};
use crate::model::{Alarm, Calendar, End, Event, RawProperty, Related, Trigger, When, Zone};
use crate::recur::{Rule, Until};
use crate::time::resolve_local;

/// Reads an iCalendar stream (one or more `VCALENDAR`s, merged).
///
/// # Errors
/// The first problem found, naming its line and property.
pub fn parse_calendar(input: &[u8], limits: &Limits) -> Result<Calendar, Error> {
    let top = lexer::parse(input, limits)?;
    let mut cal = Calendar::default();
    let blocks: Vec<&Component> = top
        .iter()
        .flat_map(|c| c.children.iter())
        .filter(|c| c.name == "VTIMEZONE")
        .collect();
    let zones = crate::tz::resolve_blocks(&blocks)?;
    for vcal in &top {
        if vcal.name != "VCALENDAR" {
            return Err(Error::syntax(
                vcal.line,
                format!("expected BEGIN:VCALENDAR, found BEGIN:{}", vcal.name),
            ));
        }
        for p in &vcal.props {
            match p.name.as_str() {
                "X-WR-CALNAME" if cal.name.is_none() => cal.name = Some(values::text(&p.value)),
                "VERSION" | "PRODID" | "CALSCALE" | "METHOD" => {}
                _ => cal.extra.push(raw(p)),
            }
        }
        for c in vcal.children.iter().filter(|c| c.name == "VEVENT") {
            cal.events.push(event(c, &zones)?);
        }
    }
    Ok(cal)
}

/// Rebuilds the content line of a property, for keeping it verbatim.
pub(crate) fn raw(p: &Property) -> RawProperty {
    let mut line = p.name.clone();
    for param in &p.params {
        line.push(';');
        line.push_str(&param.name);
        line.push('=');
        let vals: Vec<String> = param
            .values
            .iter()
            .map(|v| {
                if v.contains([':', ';', ',']) {
                    format!("\"{v}\"")
                } else {
                    v.clone()
                }
            })
            .collect();
        line.push_str(&vals.join(","));
    }
    line.push(':');
    line.push_str(&p.value);
    RawProperty { line }
}

fn err(p: &Property, msg: impl Into<String>) -> Error {
    Error::property(p.line, &p.name, msg)
}

/// The zone named by a property's `TZID`, or `None` without one.
fn zone_param(p: &Property, zones: &HashMap<String, Tz>) -> Result<Option<Tz>, Error> {
    let Some(id) = p.param("TZID") else {
        return Ok(None);
    };
    zones
        .get(id.trim())
        .copied()
        .or_else(|| crate::tz::by_name(id))
        .map(Some)
        .ok_or_else(|| {
            err(
                p,
                format!(
                    "unknown time zone TZID={id:?}: not an IANA name, and no VTIMEZONE defines it"
                ),
            )
        })
}

/// One `DATE` or `DATE-TIME` value of property `p`.
fn when_value(p: &Property, v: &str, zones: &HashMap<String, Tz>) -> Result<When, Error> {
    let is_date = p
        .param("VALUE")
        .is_some_and(|t| t.eq_ignore_ascii_case("DATE"))
        || v.trim().len() == 8;
    if is_date {
        return values::date(v).map(When::Date).map_err(|m| err(p, m));
    }
    let (local, utc) = values::date_time(v).map_err(|m| err(p, m))?;
    let zone = if utc {
        Zone::Utc
    } else {
        zone_param(p, zones)?.map_or(Zone::Floating, Zone::Tz)
    };
    Ok(When::DateTime { local, zone })
}

fn when(p: &Property, zones: &HashMap<String, Tz>) -> Result<When, Error> {
    when_value(p, &p.value, zones)
}

/// Every value of a list property (`RDATE`, `EXDATE`); periods keep their start.
fn when_list(p: &Property, zones: &HashMap<String, Tz>) -> Result<Vec<When>, Error> {
    values::split_list(&p.value)
        .into_iter()
        .map(|v| when_value(p, v.split_once('/').map_or(v, |(start, _)| start), zones))
        .collect()
}

/// The `start/end` and `start/duration` values of an `RDATE;VALUE=PERIOD`.
fn periods(p: &Property, zones: &HashMap<String, Tz>) -> Result<Vec<(When, End)>, Error> {
    let mut out = Vec::new();
    for v in values::split_list(&p.value) {
        let Some((start, end)) = v.split_once('/') else {
            continue;
        };
        let start = when_value(p, start, zones)?;
        let end = if end.trim_start().starts_with(['P', 'p', '+', '-']) {
            End::For(values::duration(end).map_err(|m| err(p, m))?)
        } else {
            End::At(when_value(p, end, zones)?)
        };
        out.push((start, end));
    }
    Ok(out)
}

fn once<'a>(c: &'a Component, name: &'a str) -> Result<Option<&'a Property>, Error> {
    let mut it = c.props_named(name);
    let first = it.next();
    if let Some(second) = it.next() {
        return Err(err(
            second,
            format!("{name} appears more than once in this {}", c.name),
        ));
    }
    Ok(first)
}

/// A `UID` for events that lack one: stable for the same event text.
fn synthetic_uid(c: &Component) -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for p in &c.props {
        (&p.name, &p.value).hash(&mut h);
    }
    format!("kairos-nouid-{:016x}", h.finish())
}

fn rule(p: &Property, start: When) -> Result<Rule, Error> {
    let until_of = |u: &str| -> Result<Until, String> {
        let zone = start.zone();
        if let Ok(d) = values::date(u) {
            // A date UNTIL on a timed event: through the end of that day.
            let end = if start.is_date() {
                d.and_time(chrono::NaiveTime::MIN)
            } else {
                d.and_hms_opt(23, 59, 59).unwrap_or_default()
            };
            return Ok(Until::Local(end));
        }
        let (local, utc) = values::date_time(u).map_err(|m| format!("UNTIL: {m}"))?;
        Ok(match (utc, zone) {
            (true, Zone::Floating) | (_, Zone::Utc) if start.is_date() => Until::Local(local),
            (true, _) => Until::Instant(local.and_utc()),
            (false, Zone::Tz(tz)) => Until::Instant(resolve_local(local, Zone::Tz(tz), Tz::UTC)),
            (false, _) => Until::Local(local),
        })
    };
    Rule::parse(&p.value, start.local(), until_of).map_err(|m| err(p, m))
}

fn event(c: &Component, zones: &HashMap<String, Tz>) -> Result<Event, Error> {
    let start_p = once(c, "DTSTART")?.ok_or_else(|| {
        Error::syntax(
            c.line,
            "VEVENT has no DTSTART (RFC 5545 requires one for a calendar event)",
        )
    })?;
    let start = when(start_p, zones)?;
    let mut ev = Event {
        uid: once(c, "UID")?
            .map(|p| p.value.trim().to_owned())
            .filter(|u| !u.is_empty())
            .unwrap_or_else(|| synthetic_uid(c)),
        recurrence_id: None,
        this_and_future: false,
        summary: None,
        description: None,
        location: None,
        status: None,
        sequence: 0,
        start,
        end: None,
        rrules: Vec::new(),
        exrules: Vec::new(),
        rdates: Vec::new(),
        rdate_periods: Vec::new(),
        exdates: Vec::new(),
        alarms: Vec::new(),
        extra: Vec::new(),
    };
    for p in &c.props {
        match p.name.as_str() {
            "UID" | "DTSTART" => {}
            "SUMMARY" => ev.summary = Some(values::text(&p.value)),
            "DESCRIPTION" => ev.description = Some(values::text(&p.value)),
            "LOCATION" => ev.location = Some(values::text(&p.value)),
            "STATUS" => ev.status = Some(p.value.trim().to_ascii_uppercase()),
            "SEQUENCE" => {
                ev.sequence = p
                    .value
                    .trim()
                    .parse()
                    .map_err(|_| err(p, format!("{:?} is not an integer", p.value)))?
            }
            "DTEND" => {
                let end = when(p, zones)?;
                if end.is_date() != start.is_date() {
                    return Err(err(
                        p,
                        "DTEND must have the same value type (DATE or DATE-TIME) as DTSTART",
                    ));
                }
                if end.instant(Tz::UTC) < start.instant(Tz::UTC) && end.zone() == start.zone() {
                    return Err(err(p, "DTEND is before DTSTART"));
                }
                ev.end = Some(End::At(end));
            }
            "DURATION" => {
                let d = values::duration(&p.value).map_err(|m| err(p, m))?;
                if d.days < 0 || d.secs < 0 {
                    return Err(err(p, "a negative DURATION is not allowed for an event"));
                }
                ev.end = Some(End::For(d));
            }
            "RRULE" => ev.rrules.push(rule(p, start)?),
            "EXRULE" => ev.exrules.push(rule(p, start)?),
            "RDATE" => {
                ev.rdates.extend(when_list(p, zones)?);
                ev.rdate_periods.extend(periods(p, zones)?);
            }
            "EXDATE" => ev.exdates.extend(when_list(p, zones)?),
            "RECURRENCE-ID" => {
                ev.recurrence_id = Some(when(p, zones)?);
                ev.this_and_future = p
                    .param("RANGE")
                    .is_some_and(|r| r.eq_ignore_ascii_case("THISANDFUTURE"));
            }
            _ => ev.extra.push(raw(p)),
        }
    }
    if c.props_named("DTEND").count() > 1
        || (c.prop("DTEND").is_some() && c.prop("DURATION").is_some())
    {
        let p = c
            .prop("DURATION")
            .or_else(|| c.props_named("DTEND").nth(1))
            .unwrap_or(start_p);
        return Err(err(
            p,
            "an event may have one DTEND or one DURATION, not both",
        ));
    }
    for a in c.children.iter().filter(|a| a.name == "VALARM") {
        ev.alarms.push(alarm(a, zones)?);
    }
    Ok(ev)
}

fn alarm(c: &Component, zones: &HashMap<String, Tz>) -> Result<Alarm, Error> {
    let trig = once(c, "TRIGGER")?.ok_or_else(|| Error::syntax(c.line, "VALARM has no TRIGGER"))?;
    let absolute = trig
        .param("VALUE")
        .is_some_and(|v| v.eq_ignore_ascii_case("DATE-TIME"));
    let trigger = if absolute
        || (values::duration(&trig.value).is_err() && values::date_time(&trig.value).is_ok())
    {
        match when(trig, zones)? {
            When::Date(_) => return Err(err(trig, "an absolute TRIGGER must be a DATE-TIME")),
            // It is kept (and written back) in UTC, which a zone's offset can
            // push outside the years 0000–9999 that DATE-TIME can write.
            w if !(0..=9999).contains(&w.instant(Tz::UTC).year()) => {
                return Err(err(
                    trig,
                    "the TRIGGER falls outside the years 0000-9999 in UTC",
                ));
            }
            w => Trigger::Absolute(w.instant(Tz::UTC)),
        }
    } else {
        let related = match trig
            .param("RELATED")
            .map(str::to_ascii_uppercase)
            .as_deref()
        {
            None | Some("START") => Related::Start,
            Some("END") => Related::End,
            Some(other) => {
                return Err(err(
                    trig,
                    format!("RELATED={other} is neither START nor END"),
                ));
            }
        };
        Trigger::Relative {
            offset: values::duration(&trig.value).map_err(|m| err(trig, m))?,
            related,
        }
    };
    let mut a = Alarm {
        uid: None,
        action: "DISPLAY".into(),
        trigger,
        repeat: 0,
        interval: None,
        description: None,
        summary: None,
        acknowledged: None,
        snooze_of: None,
        extra: Vec::new(),
    };
    let mut saw_action = false;
    for p in &c.props {
        match p.name.as_str() {
            "TRIGGER" => {}
            "ACTION" => {
                a.action = p.value.trim().to_ascii_uppercase();
                saw_action = true;
            }
            "UID" => a.uid = Some(p.value.trim().to_owned()),
            "DESCRIPTION" => a.description = Some(values::text(&p.value)),
            "SUMMARY" => a.summary = Some(values::text(&p.value)),
            "REPEAT" => {
                a.repeat = p
                    .value
                    .trim()
                    .parse()
                    .map_err(|_| err(p, format!("{:?} is not a repeat count", p.value)))?;
            }
            "DURATION" => {
                let d = values::duration(&p.value).map_err(|m| err(p, m))?;
                if d.is_non_positive() {
                    return Err(err(
                        p,
                        "the interval between alarm repetitions must be positive",
                    ));
                }
                a.interval = Some(d);
            }
            "ACKNOWLEDGED" => {
                a.acknowledged = Some(values::utc_date_time(&p.value).map_err(|m| err(p, m))?)
            }
            "RELATED-TO"
                if p.param("RELTYPE")
                    .is_some_and(|t| t.eq_ignore_ascii_case("SNOOZE")) =>
            {
                a.snooze_of = Some(p.value.trim().to_owned());
            }
            _ => a.extra.push(raw(p)),
        }
    }
    if !saw_action {
        return Err(Error::syntax(c.line, "VALARM has no ACTION"));
    }
    match (a.repeat, a.interval) {
        (0, _) => {}
        (n, None) => {
            let p = c.prop("REPEAT").unwrap_or(trig);
            return Err(err(
                p,
                format!("REPEAT:{n} needs a DURATION between repetitions"),
            ));
        }
        (n, Some(_)) if n > Limits::default().max_alarm_repeat => {
            let p = c.prop("REPEAT").unwrap_or(trig);
            return Err(err(
                p,
                format!(
                    "REPEAT:{n} is more than the limit of {}",
                    Limits::default().max_alarm_repeat
                ),
            ));
        }
        _ => {}
    }
    Ok(a)
}
