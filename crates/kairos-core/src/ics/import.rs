//! iCalendar text → [`Calendar`]: every `VEVENT` with its `VALARM`s, time zones
//! resolved, rules validated. Unknown properties are kept verbatim.
//!
//! One reader serves both modes ([`parse_calendar`] strict,
//! [`parse_calendar_lenient`] lenient): each problem it can repair goes to the
//! [`Sink`], which in strict mode turns it back into the error strict reading
//! has always given.

use super::alarm::alarm;
use super::dates::{Reader, duration_of, end_of, err, matched, rule};
use super::lexer::{self, Component, Property};
use super::series::{Item, settle};
use super::todo;
use super::values;
use super::warning::{At, Sink, Warning};
use super::zones::Zones;
use crate::error::{Error, Limits};
use crate::model::{Calendar, End, Event, RawProperty, Todo};

/// Reads an iCalendar stream (one or more `VCALENDAR`s, merged), refusing it
/// at the first problem.
///
/// # Errors
/// The first problem found, naming its line and property.
pub fn parse_calendar(input: &[u8], limits: &Limits) -> Result<Calendar, Error> {
    parse_calendar_strict(input, limits).map(|(cal, _)| cal)
}

/// [`parse_calendar`], with the warnings strict reading gives without
/// refusing the file: choices the file leaves open (two differing copies of
/// one event and nothing to tell which is newer).
///
/// # Errors
/// The first problem found, naming its line and property.
pub fn parse_calendar_strict(
    input: &[u8],
    limits: &Limits,
) -> Result<(Calendar, Vec<Warning>), Error> {
    read(input, limits, Sink::strict())
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
        for c in vcal.children.iter().filter(|c| is_item(c)) {
            items.extend(event(c, &mut r)?);
        }
    }
    for c in loose.iter().filter(|c| is_item(c)) {
        items.extend(event(c, &mut r)?);
    }
    cal.events = settle(items, &mut r.sink);
    let mut warnings = r.sink.into_warnings();
    // In file order (they were found by pass: text, events, then copies).
    warnings.sort_by_key(|w| w.line);
    Ok((cal, warnings))
}

/// Is `c` a component Kairos reads (an event or a task)?
fn is_item(c: &Component) -> bool {
    c.name == "VEVENT" || c.name == "VTODO"
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

/// One `VEVENT` or `VTODO`, or `None` when lenient reading skipped it.
fn event(c: &Component, r: &mut Reader<'_>) -> Result<Option<Item>, Error> {
    let kind = c.name.as_str();
    let uid = match once(c, "UID", At::new(kind, None), r)?
        .map(|p| p.value.trim())
        .filter(|u| !u.is_empty())
    {
        Some(u) => u.to_owned(),
        None => {
            let uid = synthetic_uid(c);
            let at = At::new(kind, None);
            r.sink.note(
                c.line,
                at,
                || format!("{kind} has no UID"),
                &format!("given UID {uid} (a hash of its content)"),
            );
            uid
        }
    };
    let at = At::new(kind, Some(&uid));
    let task = kind == "VTODO";
    let skipped = if task {
        "task skipped"
    } else {
        "event skipped"
    };
    let (start, todo) = if task {
        let a = todo::anchor(c, r, at)?;
        (a.start, Some(a.todo))
    } else {
        let Some(start_p) = once(c, "DTSTART", at, r)? else {
            let e = Error::syntax(
                c.line,
                "VEVENT has no DTSTART (RFC 5545 requires one for a calendar event)",
            );
            return r.sink.repair(e, at, skipped).map(|()| None);
        };
        match r.when(start_p, at) {
            Ok(s) => (s, None),
            Err(e) => return r.sink.repair(e, at, skipped).map(|()| None),
        }
    };
    let undated = todo.as_ref().is_some_and(Todo::is_undated);
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
        todo,
    };
    let mut stamp = (None, None);
    let mut dtend = None;
    let mut duration = None;
    for p in &c.props {
        match p.name.as_str() {
            "UID" | "DTSTART" => {}
            "DUE" | "DURATION" if task => {}
            "DTEND" if task => ev.extra.push(raw(p)),
            "COMPLETED" | "PERCENT-COMPLETE" | "PRIORITY" if task => {
                if let Some(t) = ev.todo.as_mut() {
                    todo::property(p, t, r, at)?;
                }
            }
            "RRULE" | "RDATE" if undated => {
                let e = err(
                    p,
                    format!("{} needs a DTSTART or a DUE to repeat from", p.name),
                );
                r.sink.repair(e, at, "ignored: the task is undated")?;
            }
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
            "DURATION" => {
                if let Some(d) = duration_of(p, r, at)? {
                    duration = Some(d);
                }
            }
            "RRULE" | "EXRULE" => match rule(p, start, r, at) {
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
                Err(e) => return r.sink.repair(e, at, skipped).map(|()| None),
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
    if task {
        ev.end = todo::end(c, &mut ev, r, at)?;
    } else {
        ev.end = event_end(c, dtend, duration, r, at)?;
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

/// An event's end: `DTEND` or `DURATION` (lenient: `DTEND` wins when both
/// are given, as Thunderbird reads it).
fn event_end(
    c: &Component,
    dtend: Option<(&Property, End)>,
    duration: Option<End>,
    r: &mut Reader<'_>,
    at: At<'_>,
) -> Result<Option<End>, Error> {
    let end = match (dtend, duration) {
        (Some((_, end)), None) => Some(end),
        (None, d) => d,
        (Some((_, end)), Some(_)) => {
            let p = c
                .prop("DURATION")
                .or_else(|| c.props_named("DTEND").nth(1))
                .or_else(|| c.prop("DTSTART"));
            let e = match p {
                Some(p) => err(p, "an event may have one DTEND or one DURATION, not both"),
                None => Error::syntax(
                    c.line,
                    "an event may have one DTEND or one DURATION, not both",
                ),
            };
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
    Ok(end)
}
