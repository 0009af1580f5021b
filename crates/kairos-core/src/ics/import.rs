//! iCalendar text → [`Calendar`]: every `VEVENT` with its `VALARM`s, time zones
//! resolved, rules validated. Unknown properties are kept verbatim.
//!
//! One reader serves both modes ([`parse_calendar`] strict,
//! [`parse_calendar_lenient`] lenient): each problem it can repair goes to the
//! [`Sink`], which in strict mode turns it back into the error strict reading
//! has always given.

use super::alarm::alarm;
use super::dates::{Reader, coerce, err, in_gap, rule};
use super::lexer::{self, Component, Property};
use super::series::{Item, settle};
use super::values;
use super::warning::{At, Sink, Warning};
use super::zones::Zones;
use crate::error::{Error, Limits};
use crate::model::{Calendar, End, Event, RawProperty};
use crate::time::Dur;

/// Reads an iCalendar stream (one or more `VCALENDAR`s, merged), refusing it
/// at the first problem.
///
/// # Errors
/// The first problem found, naming its line and property.
pub fn parse_calendar(input: &[u8], limits: &Limits) -> Result<Calendar, Error> {
    read(input, limits, Sink::strict()).map(|(cal, _)| cal)
}

/// Reads an iCalendar stream keeping everything it can: a broken event, alarm
/// or property is skipped or repaired, each with a [`Warning`] saying what was
/// wrong and what was done; everything else is imported.
///
/// # Errors
/// Only input that cannot be read at all: no `BEGIN:VCALENDAR` (not
/// iCalendar), or past one of the [`Limits`].
pub fn parse_calendar_lenient(
    input: &[u8],
    limits: &Limits,
) -> Result<(Calendar, Vec<Warning>), Error> {
    read(input, limits, Sink::lenient())
}

fn read(input: &[u8], limits: &Limits, mut sink: Sink) -> Result<(Calendar, Vec<Warning>), Error> {
    let top = lexer::parse_with(input, limits, &mut sink)?;
    let mut cal = Calendar::default();
    // Lenient reading takes components found outside any VCALENDAR as if
    // they were inside one.
    let mut loose: Vec<&Component> = Vec::new();
    for c in &top {
        if c.name != "VCALENDAR" {
            let e = Error::syntax(
                c.line,
                format!("expected BEGIN:VCALENDAR, found BEGIN:{}", c.name),
            );
            sink.repair(e, At::CALENDAR, "read as if inside a VCALENDAR")?;
            loose.push(c);
        }
    }
    let calendars = || top.iter().filter(|c| c.name == "VCALENDAR");
    let zones = Zones::new(
        calendars()
            .flat_map(|c| c.children.iter())
            .chain(loose.iter().copied()),
    );
    let mut r = Reader { zones, sink };
    let mut items = Vec::new();
    for vcal in calendars() {
        for p in &vcal.props {
            match p.name.as_str() {
                "X-WR-CALNAME" if cal.name.is_none() => cal.name = Some(values::text(&p.value)),
                "VERSION" | "PRODID" | "CALSCALE" | "METHOD" => {}
                _ => cal.extra.push(raw(p)),
            }
        }
        for c in vcal.children.iter().filter(|c| c.name == "VEVENT") {
            items.extend(event(c, &mut r)?);
        }
    }
    for c in loose.iter().filter(|c| c.name == "VEVENT") {
        items.extend(event(c, &mut r)?);
    }
    cal.events = settle(items, &mut r.sink);
    let mut warnings = r.sink.into_warnings();
    // In file order (they were found by pass: text, events, then copies).
    warnings.sort_by_key(|w| w.line);
    Ok((cal, warnings))
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

/// The property `name` that may appear once; a second one is refused
/// (lenient: the first is used).
pub(crate) fn once<'a>(
    c: &'a Component,
    name: &'a str,
    at: At<'_>,
    r: &mut Reader<'_>,
) -> Result<Option<&'a Property>, Error> {
    let mut it = c.props_named(name);
    let first = it.next();
    if let Some(second) = it.next() {
        let e = err(
            second,
            format!("{name} appears more than once in this {}", c.name),
        );
        r.sink.repair(e, at, "the first one is used")?;
    }
    Ok(first)
}

/// A `UID` for events that lack one: FNV-1a over the event's properties
/// except `DTSTAMP` (which many feeds set to the time of each download), so
/// the same event gets the same UID every time it is read.
fn synthetic_uid(c: &Component) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    };
    for p in c.props.iter().filter(|p| p.name != "DTSTAMP") {
        eat(p.name.as_bytes());
        eat(b":");
        eat(p.value.as_bytes());
        eat(b"\n");
    }
    format!("kairos-nouid-{h:016x}")
}

/// One `VEVENT`, or `None` when lenient reading skipped it.
fn event(c: &Component, r: &mut Reader<'_>) -> Result<Option<Item>, Error> {
    let uid = match once(c, "UID", At::new("VEVENT", None), r)?
        .map(|p| p.value.trim())
        .filter(|u| !u.is_empty())
    {
        Some(u) => u.to_owned(),
        None => {
            let uid = synthetic_uid(c);
            let at = At::new("VEVENT", None);
            r.sink.note(
                c.line,
                at,
                || "VEVENT has no UID".into(),
                &format!("given UID {uid} (a hash of its content)"),
            );
            uid
        }
    };
    let at = At::new("VEVENT", Some(&uid));
    const SKIPPED: &str = "event skipped";
    let Some(start_p) = once(c, "DTSTART", at, r)? else {
        let e = Error::syntax(
            c.line,
            "VEVENT has no DTSTART (RFC 5545 requires one for a calendar event)",
        );
        return r.sink.repair(e, at, SKIPPED).map(|()| None);
    };
    let start = match r.when(start_p, at) {
        Ok(s) => s,
        Err(e) => return r.sink.repair(e, at, SKIPPED).map(|()| None),
    };
    let mut ev = Event {
        uid: uid.clone(),
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
    let mut stamp = (None, None);
    let mut dtend = None;
    let mut duration = None;
    for p in &c.props {
        match p.name.as_str() {
            "UID" | "DTSTART" => {}
            "SUMMARY" => ev.summary = Some(values::text(&p.value)),
            "DESCRIPTION" => ev.description = Some(values::text(&p.value)),
            "LOCATION" => ev.location = Some(values::text(&p.value)),
            "STATUS" => ev.status = Some(p.value.trim().to_ascii_uppercase()),
            "SEQUENCE" => match p.value.trim().parse() {
                Ok(n) => ev.sequence = n,
                Err(_) => {
                    let e = err(p, format!("{:?} is not an integer", p.value));
                    r.sink.repair(e, at, "read as 0")?;
                }
            },
            "DTEND" if dtend.is_some() => {}
            "DTEND" => match r.when(p, at) {
                Ok(end) => dtend = Some((p, end_of(p, end, start, r, at)?)),
                Err(e) => r.sink.repair(e, at, "DTEND ignored")?,
            },
            "DURATION" => match values::duration(&p.value) {
                Ok(d) if d.days < 0 || d.secs < 0 => {
                    let e = err(p, "a negative DURATION is not allowed for an event");
                    r.sink.repair(e, at, "treated as zero length")?;
                    duration = Some(End::For(Dur::default()));
                }
                Ok(d) => duration = Some(End::For(d)),
                Err(m) => r.sink.repair(err(p, m), at, "DURATION ignored")?,
            },
            "RRULE" | "EXRULE" => match rule(p, start) {
                Ok(rule) if p.name == "RRULE" => ev.rrules.push(rule),
                Ok(rule) => ev.exrules.push(rule),
                Err(e) => r.sink.repair(e, at, "this rule ignored")?,
            },
            "RDATE" => {
                let dates = r.when_list(p, at)?;
                ev.rdates.extend(matched(p, dates, start, r, at));
                ev.rdate_periods.extend(r.periods(p, at)?);
            }
            "EXDATE" => {
                let dates = r.when_list(p, at)?;
                ev.exdates.extend(matched(p, dates, start, r, at));
            }
            "RECURRENCE-ID" => match r.when(p, at) {
                Ok(rid) => {
                    ev.recurrence_id = Some(rid);
                    ev.this_and_future = p
                        .param("RANGE")
                        .is_some_and(|r| r.eq_ignore_ascii_case("THISANDFUTURE"));
                }
                // Without it, this override would pose as a second series.
                Err(e) => return r.sink.repair(e, at, SKIPPED).map(|()| None),
            },
            "DTSTAMP" | "LAST-MODIFIED" => {
                let t = values::date_time(&p.value).ok().map(|(t, _)| t);
                if p.name == "DTSTAMP" {
                    stamp.1 = t;
                } else {
                    stamp.0 = t;
                }
                ev.extra.push(raw(p));
            }
            _ => ev.extra.push(raw(p)),
        }
    }
    ev.end = match (dtend, duration) {
        (Some((_, end)), None) => Some(end),
        (None, d) => d,
        (Some((_, end)), Some(_)) => {
            let p = c
                .prop("DURATION")
                .or_else(|| c.props_named("DTEND").nth(1))
                .unwrap_or(start_p);
            let e = err(p, "an event may have one DTEND or one DURATION, not both");
            r.sink.repair(e, at, "DTEND used, DURATION ignored")?;
            Some(end)
        }
    };
    if let (Some(second), None) = (c.props_named("DTEND").nth(1), duration) {
        let e = err(
            second,
            "an event may have one DTEND or one DURATION, not both",
        );
        r.sink.repair(e, at, "the first DTEND is used")?;
    }
    for a in c.children.iter().filter(|a| a.name == "VALARM") {
        ev.alarms.extend(alarm(a, r, &uid)?);
    }
    Ok(Some(Item {
        event: ev,
        line: c.line,
        stamp,
    }))
}

/// A `DTEND` checked against `DTSTART`: the same value type (lenient:
/// coerced to DTSTART's) and not before it (lenient: zero length).
fn end_of(
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
            "DTEND must have the same value type (DATE or DATE-TIME) as DTSTART",
        );
        r.sink.repair(e, at, "converted to DTSTART's type")?;
        end = coerce(end, start, true);
    }
    if in_gap(end) {
        r.sink.note(
            p.line,
            at,
            || "DTEND: the time falls in a daylight-saving gap".into(),
            "read with the offset before the gap (RFC 5545 §3.3.5)",
        );
    }
    let utc = chrono_tz::Tz::UTC;
    if end.zone() == start.zone() && end.instant(utc) < start.instant(utc) {
        let e = err(p, "DTEND is before DTSTART");
        r.sink.repair(e, at, "treated as zero length")?;
        return Ok(End::At(start));
    }
    Ok(End::At(end))
}

/// `RDATE`/`EXDATE` values with DTSTART's value type: producers write
/// `DATE-TIME` exceptions on all-day series (and the reverse); like the major
/// clients, Kairos matches them by date.
fn matched(
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
