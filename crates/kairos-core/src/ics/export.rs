//! [`Calendar`] → iCalendar text. Writes what import reads, so our own data
//! round-trips; unknown properties go back out as they came in.
//!
//! Zones are written as `TZID=<IANA name>` without `VTIMEZONE` blocks: chrono-tz
//! does not expose the transition rules a block would need. Every importer we
//! target resolves IANA names (RFC 7809 lets a server omit VTIMEZONE for them).
//!
//! Times in a custom zone (a file's own `VTIMEZONE` that matches no IANA
//! zone) are written as the UTC instants they denote, not with their
//! `VTIMEZONE`: the engine stores each event as its `VEVENT` block alone and
//! reads it back strictly, where a `TZID` without its block would be an
//! error. Single events and listed dates keep their exact instants; a
//! recurring series then repeats in UTC (callers warn: see
//! [`custom_zones`]).

use std::fmt::Write as _;

use chrono::{DateTime, Utc};

use super::values::escape_text;
use crate::model::{Alarm, Calendar, CustomTz, End, Event, Related, Todo, Trigger, When, Zone};
use crate::time::Dur;

/// RFC 5545 §3.1: lines longer than 75 octets are folded, never inside a
/// UTF-8 sequence.
fn push_folded(out: &mut String, line: &str) {
    let mut width = 0;
    for ch in line.chars() {
        let n = ch.len_utf8();
        if width + n > 75 {
            out.push_str("\r\n ");
            width = 1;
        }
        out.push(ch);
        width += n;
    }
    out.push_str("\r\n");
}

fn when_prop(name: &str, w: &When) -> String {
    match *w {
        When::Date(d) => format!("{name};VALUE=DATE:{}", d.format("%Y%m%d")),
        When::DateTime { local, zone } => {
            let t = local.format("%Y%m%dT%H%M%S");
            match zone {
                Zone::Utc => format!("{name}:{t}Z"),
                Zone::Floating => format!("{name}:{t}"),
                Zone::Tz(tz) => format!("{name};TZID={}:{t}", tz.name()),
                Zone::Custom(c) => {
                    format!("{name}:{}", c.resolve(local).format("%Y%m%dT%H%M%SZ"))
                }
            }
        }
    }
}

/// The custom zones (see the module doc) `cal`'s event starts are in, once
/// each, in order of first use: export writes their times in UTC.
#[must_use]
pub fn custom_zones(cal: &Calendar) -> Vec<CustomTz> {
    let mut out = Vec::new();
    for e in &cal.events {
        if let Zone::Custom(c) = e.start.zone()
            && !out.contains(&c)
        {
            out.push(c);
        }
    }
    out
}

/// `[-]P…` for a [`Dur`].
#[must_use]
pub fn duration(d: Dur) -> String {
    let neg = d.days < 0 || d.secs < 0;
    let (days, secs) = (d.days.unsigned_abs(), d.secs.unsigned_abs());
    let mut s = String::from(if neg { "-P" } else { "P" });
    if days > 0 {
        let _ = write!(s, "{days}D");
    }
    if secs > 0 || days == 0 {
        s.push('T');
        let (h, m, sec) = (secs / 3600, secs % 3600 / 60, secs % 60);
        if h > 0 {
            let _ = write!(s, "{h}H");
        }
        if m > 0 {
            let _ = write!(s, "{m}M");
        }
        if sec > 0 || (h == 0 && m == 0) {
            let _ = write!(s, "{sec}S");
        }
    }
    s
}

fn utc(t: DateTime<Utc>) -> String {
    t.format("%Y%m%dT%H%M%SZ").to_string()
}

fn text_prop(out: &mut String, name: &str, v: Option<&String>) {
    if let Some(v) = v {
        push_folded(out, &format!("{name}:{}", escape_text(v)));
    }
}

fn alarm(out: &mut String, a: &Alarm) {
    push_folded(out, "BEGIN:VALARM");
    if let Some(uid) = &a.uid {
        push_folded(out, &format!("UID:{uid}"));
    }
    push_folded(out, &format!("ACTION:{}", a.action));
    match a.trigger {
        Trigger::Absolute(t) => push_folded(out, &format!("TRIGGER;VALUE=DATE-TIME:{}", utc(t))),
        Trigger::Relative {
            offset,
            related: Related::Start,
        } => push_folded(out, &format!("TRIGGER:{}", duration(offset))),
        Trigger::Relative {
            offset,
            related: Related::End,
        } => {
            push_folded(out, &format!("TRIGGER;RELATED=END:{}", duration(offset)));
        }
    }
    if let Some(i) = a.interval.filter(|_| a.repeat > 0) {
        push_folded(out, &format!("REPEAT:{}", a.repeat));
        push_folded(out, &format!("DURATION:{}", duration(i)));
    }
    text_prop(out, "DESCRIPTION", a.description.as_ref());
    text_prop(out, "SUMMARY", a.summary.as_ref());
    if let Some(t) = a.acknowledged {
        push_folded(out, &format!("ACKNOWLEDGED:{}", utc(t)));
    }
    if let Some(of) = &a.snooze_of {
        push_folded(out, &format!("RELATED-TO;RELTYPE=SNOOZE:{of}"));
    }
    for x in &a.extra {
        push_folded(out, &x.line);
    }
    push_folded(out, "END:VALARM");
}

/// `DTSTART` and `DTEND`/`DURATION`, or a task's `DTSTART`/`DUE`/`DURATION`
/// as [`Todo`] anchors them.
fn times(out: &mut String, e: &Event) {
    let end_name = if e.todo.is_some() { "DUE" } else { "DTEND" };
    match &e.todo {
        Some(t) if t.is_undated() => return,
        Some(t) if !t.has_start => {
            push_folded(out, &when_prop("DUE", &e.start));
            return;
        }
        _ => push_folded(out, &when_prop("DTSTART", &e.start)),
    }
    match &e.end {
        Some(End::At(w)) => push_folded(out, &when_prop(end_name, w)),
        Some(End::For(d)) => push_folded(out, &format!("DURATION:{}", duration(*d))),
        None => {}
    }
}

/// `COMPLETED`, `PERCENT-COMPLETE`, `PRIORITY`.
fn progress(out: &mut String, t: &Todo) {
    if let Some(c) = t.completed {
        push_folded(out, &format!("COMPLETED:{}", utc(c)));
    }
    if let Some(p) = t.percent {
        push_folded(out, &format!("PERCENT-COMPLETE:{p}"));
    }
    if let Some(p) = t.priority {
        push_folded(out, &format!("PRIORITY:{p}"));
    }
}

fn event(out: &mut String, e: &Event, stamp: DateTime<Utc>) {
    let kind = if e.todo.is_some() { "VTODO" } else { "VEVENT" };
    push_folded(out, &format!("BEGIN:{kind}"));
    push_folded(out, &format!("UID:{}", e.uid));
    if !e.extra.iter().any(|x| x.line.starts_with("DTSTAMP")) {
        push_folded(out, &format!("DTSTAMP:{}", utc(stamp)));
    }
    times(out, e);
    if let Some(rid) = &e.recurrence_id {
        let p = when_prop("RECURRENCE-ID", rid);
        let p = if e.this_and_future {
            p.replacen("RECURRENCE-ID", "RECURRENCE-ID;RANGE=THISANDFUTURE", 1)
        } else {
            p
        };
        push_folded(out, &p);
    }
    for r in &e.rrules {
        push_folded(out, &format!("RRULE:{}", r.source));
    }
    for r in &e.exrules {
        push_folded(out, &format!("EXRULE:{}", r.source));
    }
    for d in &e.rdates {
        match e.rdate_periods.iter().find(|(start, _)| start == d) {
            Some((start, end)) => {
                let end = match end {
                    End::At(w) => when_prop("X", w)
                        .rsplit(':')
                        .next()
                        .unwrap_or_default()
                        .to_owned(),
                    End::For(dur) => duration(*dur),
                };
                let start = when_prop("RDATE", start).replacen("RDATE", "RDATE;VALUE=PERIOD", 1);
                push_folded(out, &format!("{start}/{end}"));
            }
            None => push_folded(out, &when_prop("RDATE", d)),
        }
    }
    for d in &e.exdates {
        push_folded(out, &when_prop("EXDATE", d));
    }
    text_prop(out, "SUMMARY", e.summary.as_ref());
    text_prop(out, "DESCRIPTION", e.description.as_ref());
    text_prop(out, "LOCATION", e.location.as_ref());
    if let Some(s) = &e.status {
        push_folded(out, &format!("STATUS:{s}"));
    }
    if let Some(t) = &e.todo {
        progress(out, t);
    }
    if e.sequence != 0 {
        push_folded(out, &format!("SEQUENCE:{}", e.sequence));
    }
    for x in &e.extra {
        push_folded(out, &x.line);
    }
    for a in &e.alarms {
        alarm(out, a);
    }
    push_folded(out, &format!("END:{kind}"));
}

/// Writes `cal` as one `VCALENDAR`. `stamp` fills `DTSTAMP` where the event
/// kept none (the core reads no clock).
#[must_use]
pub fn write_calendar(cal: &Calendar, stamp: DateTime<Utc>) -> String {
    let mut out = String::new();
    push_folded(&mut out, "BEGIN:VCALENDAR");
    push_folded(&mut out, "VERSION:2.0");
    push_folded(&mut out, "PRODID:-//Kairos//Kairos Calendar//EN");
    if let Some(name) = &cal.name {
        push_folded(&mut out, &format!("X-WR-CALNAME:{}", escape_text(name)));
    }
    for x in &cal.extra {
        push_folded(&mut out, &x.line);
    }
    for e in &cal.events {
        event(&mut out, e, stamp);
    }
    push_folded(&mut out, "END:VCALENDAR");
    out
}
