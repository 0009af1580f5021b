//! What a `VTODO` (RFC 5545 §3.6.2) reads differently from a `VEVENT`:
//! `DTSTART` is optional, `DUE` takes the place of `DTEND`, and
//! `COMPLETED`, `PERCENT-COMPLETE` and `PRIORITY` say how far along it is.
//! How a task is anchored in time is documented on [`Todo`].

use chrono::{DateTime, Utc};

use super::dates::{Reader, duration_of, end_of, err};
use super::import::once;
use super::lexer::{Component, Property};
use super::values;
use super::warning::At;
use crate::error::Error;
use crate::model::{End, Event, Todo, UNDATED, When};

/// A task's start for the model, and what it knows so far.
pub(super) struct Anchor {
    pub start: When,
    pub todo: Todo,
}

/// The value of the date property `name`, if present and readable
/// (lenient: an unreadable one is dropped with a warning).
fn optional_when(
    c: &Component,
    name: &'static str,
    r: &mut Reader<'_>,
    at: At<'_>,
) -> Result<Option<When>, Error> {
    let Some(p) = once(c, name, at, r)? else {
        return Ok(None);
    };
    match r.when(p, at) {
        Ok(w) => Ok(Some(w)),
        Err(e) => {
            let action = format!("{name} ignored");
            r.sink.repair(e, at, &action).map(|()| None)
        }
    }
}

/// `DTSTART`, else `DUE`, else undated.
pub(super) fn anchor(c: &Component, r: &mut Reader<'_>, at: At<'_>) -> Result<Anchor, Error> {
    let start = optional_when(c, "DTSTART", r, at)?;
    let due = optional_when(c, "DUE", r, at)?;
    let todo = Todo {
        has_start: start.is_some(),
        has_due: due.is_some(),
        ..Todo::default()
    };
    Ok(Anchor {
        start: start.or(due).unwrap_or(UNDATED),
        todo,
    })
}

/// The task's end (see [`Todo`]): `DUE` when it has a `DTSTART`, else
/// `DURATION` from `DTSTART`; nothing when the start *is* the due time.
pub(super) fn end(
    c: &Component,
    ev: &mut Event,
    r: &mut Reader<'_>,
    at: At<'_>,
) -> Result<Option<End>, Error> {
    let has_start = ev.todo.as_ref().is_some_and(|t| t.has_start);
    let due = c.prop("DUE");
    let duration = once(c, "DURATION", at, r)?;
    if let (Some(_), Some(d)) = (due, duration) {
        let e = err(d, "a task may have one DUE or one DURATION, not both");
        r.sink.repair(e, at, "DUE used, DURATION ignored")?;
    }
    if !has_start {
        if let (None, Some(d)) = (due, duration) {
            let e = err(d, "a task's DURATION needs a DTSTART to count from");
            r.sink.repair(e, at, "DURATION ignored")?;
        }
        return Ok(None);
    }
    if let Some(p) = due {
        let Ok(w) = r.when(p, at) else {
            // Already reported by `anchor`.
            return Ok(None);
        };
        return end_of(p, w, ev.start, r, at).map(Some);
    }
    let Some(p) = duration else {
        return Ok(None);
    };
    let Some(end) = duration_of(p, r, at)? else {
        return Ok(None);
    };
    if let Some(t) = ev.todo.as_mut() {
        t.has_due = true;
    }
    Ok(Some(end))
}

/// `COMPLETED`, `PERCENT-COMPLETE` or `PRIORITY` into `t`.
pub(super) fn property(
    p: &Property,
    t: &mut Todo,
    r: &mut Reader<'_>,
    at: At<'_>,
) -> Result<(), Error> {
    match p.name.as_str() {
        "COMPLETED" => {
            t.completed = Some(match completed(&p.value) {
                Ok(when) => when,
                Err(m) => {
                    let e = err(p, m);
                    // A task someone marked done must not start ringing.
                    r.sink
                        .repair(e, at, "read as completed at an unknown time (1970-01-01)")?;
                    DateTime::UNIX_EPOCH
                }
            });
        }
        "PERCENT-COMPLETE" => match p.value.trim().parse::<u8>() {
            Ok(n) if n <= 100 => t.percent = Some(n),
            _ => {
                let e = err(p, format!("{:?} is not a percentage (0-100)", p.value));
                r.sink.repair(e, at, "PERCENT-COMPLETE ignored")?;
            }
        },
        "PRIORITY" => match p.value.trim().parse::<u8>() {
            Ok(0) => t.priority = None,
            Ok(n) if n <= 9 => t.priority = Some(n),
            _ => {
                let e = err(p, format!("{:?} is not a priority (0-9)", p.value));
                r.sink.repair(e, at, "PRIORITY ignored")?;
            }
        },
        _ => {}
    }
    Ok(())
}

/// `COMPLETED` is a UTC date-time (§3.8.2.1); a floating time or a date
/// (both seen in the wild) is read as UTC.
fn completed(v: &str) -> Result<DateTime<Utc>, String> {
    if let Ok((local, _)) = values::date_time(v) {
        return Ok(local.and_utc());
    }
    values::date(v)
        .map(|d| d.and_time(chrono::NaiveTime::MIN).and_utc())
        .map_err(|_| format!("COMPLETED: {v:?} is not a date-time"))
}
