//! Editing a series in the model, with no store in sight: the editor's form
//! to an `Event` and back, and "this / this and following / all" as pure
//! functions from the series' components to new components.
//!
//! Every event that leaves here went through [`normalise`]: written as
//! iCalendar text and read back by the core's importer, so what is stored
//! is exactly what a later read will see, and a bad `RRULE` is refused with
//! the importer's message naming the property.

use chrono::{DateTime, Duration, NaiveDateTime, Utc};
use chrono_tz::Tz;
use kairos_core::Limits;
use kairos_core::model::{Calendar, End, Event, When, Zone};
use kairos_core::time::add;

use crate::api::{ApiError, EventDraft};
use crate::convert::{
    MAX_ALARMS, alarm_of, date, event_zone, fmt_date, fmt_minute, shift, spec_of, wall, wall_in,
    zone,
};
use crate::error::ApiResult;
use crate::task_edit;

/// Longest title and location, in characters.
pub const MAX_TITLE: usize = 1_000;
/// Longest notes, in characters.
pub const MAX_NOTES: usize = 100_000;

/// Writes `ev` as text (with `rrule` as its only rule when given) and reads
/// it back through the core's importer.
pub fn normalise(ev: &Event, rrule: Option<&str>) -> ApiResult<Event> {
    let mut plain = ev.clone();
    plain.rrules.clear();
    let one = Calendar {
        name: None,
        events: vec![plain],
        extra: Vec::new(),
    };
    let mut text = kairos_core::ics::write_calendar(&one, chrono::DateTime::UNIX_EPOCH);
    let rules: Vec<String> = match rrule {
        Some(r) => vec![r.to_owned()],
        None => ev.rrules.iter().map(|r| r.source.clone()).collect(),
    };
    for r in &rules {
        if r.is_empty() || !r.chars().all(|c| c.is_ascii_graphic()) {
            return Err(ApiError::invalid(format!(
                "recurrence: {r:?} is not an RRULE value (e.g. FREQ=WEEKLY;BYDAY=MO)"
            )));
        }
    }
    if let Some(at) = text.find("END:VEVENT").or_else(|| text.find("END:VTODO")) {
        let lines: String = rules.iter().map(|r| format!("RRULE:{r}\r\n")).collect();
        text.insert_str(at, &lines);
    }
    let cal = kairos_core::ics::parse_calendar(text.as_bytes(), &Limits::default())
        .map_err(|e| ApiError::invalid(format!("event: {e}")))?;
    cal.events
        .into_iter()
        .next()
        .ok_or_else(|| ApiError::internal("normalise: the event vanished"))
}

/// Start and exclusive end of `ev` as wall times (dates at midnight).
pub fn span(ev: &Event, display: Tz) -> (NaiveDateTime, NaiveDateTime) {
    let start = ev.start.local();
    let end = match ev.end {
        Some(End::At(w)) => w.local(),
        Some(End::For(d)) => {
            let tz = event_zone(ev, display);
            let zone = if ev.start.is_date() {
                Zone::Tz(tz)
            } else {
                ev.start.zone()
            };
            let s = ev.start.instant(tz);
            wall_in(add(s, d, zone, tz), tz)
        }
        None if ev.start.is_date() => start + Duration::days(1),
        None => start,
    };
    (start, end.max(start))
}

/// The editor's form for `ev`, moved to `at` (an occurrence's start) if given.
pub fn draft_of(ev: &Event, at: Option<When>, rrule: Option<String>, display: Tz) -> EventDraft {
    let tz = event_zone(ev, display);
    let (s, e) = span(ev, display);
    let start = at.map_or(s, |w| w.local());
    let mut end = start + (e - s);
    let task = task_edit::mark_of(ev);
    // A task's form shows its due time where an event's shows its start.
    let start = if task.is_some() {
        let due = start + (task_edit::due_of(ev).local() - ev.start.local());
        end = due
            + if ev.start.is_date() {
                Duration::days(1)
            } else {
                Duration::zero()
            };
        due
    } else {
        start
    };
    let all_day = ev.start.is_date();
    EventDraft {
        calendar_id: 0,
        title: ev.summary.clone().unwrap_or_default(),
        all_day,
        start: if all_day {
            fmt_date(start.date())
        } else {
            fmt_minute(start)
        },
        end: if all_day {
            fmt_date((end - Duration::days(1)).date().max(start.date()))
        } else {
            fmt_minute(end)
        },
        tz: tz.name().to_owned(),
        location: ev.location.clone().unwrap_or_default(),
        notes: ev.description.clone().unwrap_or_default(),
        rrule,
        alarms: ev.alarms.iter().map(|a| spec_of(a, tz)).collect(),
        task,
    }
}

/// Start and (exclusive) end of a draft, validated.
pub fn draft_span(d: &EventDraft) -> ApiResult<(When, When)> {
    if d.task.is_some() {
        // A task: `start` is the due time; `end` is not read.
        let due = if d.all_day {
            When::Date(date(&d.start, "due")?)
        } else {
            let tz = zone(&d.tz, "time zone")?;
            When::DateTime {
                local: wall(&d.start, "due")?,
                zone: Zone::Tz(tz),
            }
        };
        return Ok((due, due));
    }
    if d.all_day {
        let s = date(&d.start, "start")?;
        let last = date(&d.end, "end")?;
        if last < s {
            return Err(ApiError::invalid("end: the last day is before the first"));
        }
        Ok((When::Date(s), When::Date(last + Duration::days(1))))
    } else {
        let tz = zone(&d.tz, "time zone")?;
        let s = wall(&d.start, "start")?;
        let e = wall(&d.end, "end")?;
        if e < s {
            return Err(ApiError::invalid("end: before the start"));
        }
        let z = Zone::Tz(tz);
        Ok((
            When::DateTime { local: s, zone: z },
            When::DateTime { local: e, zone: z },
        ))
    }
}

/// A component from the form. `base` (the component it replaces) lends what
/// the form does not show: `EXDATE`/`RDATE`s, X- properties, `SEQUENCE`.
pub fn event_of(
    d: &EventDraft,
    uid: &str,
    rid: Option<When>,
    base: Option<&Event>,
    now: DateTime<Utc>,
) -> ApiResult<Event> {
    if d.title.chars().count() > MAX_TITLE {
        return Err(ApiError::invalid(format!(
            "title: longer than {MAX_TITLE} characters"
        )));
    }
    if d.location.chars().count() > MAX_TITLE {
        return Err(ApiError::invalid(format!(
            "location: longer than {MAX_TITLE} characters"
        )));
    }
    if d.notes.chars().count() > MAX_NOTES {
        return Err(ApiError::invalid(format!(
            "notes: longer than {MAX_NOTES} characters"
        )));
    }
    if d.alarms.len() > MAX_ALARMS {
        return Err(ApiError::invalid(format!(
            "reminders: more than {MAX_ALARMS}"
        )));
    }
    let (start, end) = draft_span(d)?;
    let tz = if d.all_day {
        Tz::UTC
    } else {
        zone(&d.tz, "time zone")?
    };
    let mut alarms = d
        .alarms
        .iter()
        .map(|a| alarm_of(a, &d.title, tz))
        .collect::<ApiResult<Vec<_>>>()?;
    // A reminder the form left as it was keeps what the form does not
    // show: its UID (so its key, and what was delivered, stay) and its X-
    // properties (an escalation or working-day rule).
    if let Some(b) = base {
        for ((a, spec), old) in alarms.iter_mut().zip(&d.alarms).zip(&b.alarms) {
            if spec_of(old, tz) == *spec {
                a.uid.clone_from(&old.uid);
                a.extra.clone_from(&old.extra);
            }
        }
    }
    let keep = |f: fn(&Event) -> Vec<When>| base.map(f).unwrap_or_default();
    let mut ev = Event {
        uid: uid.to_owned(),
        recurrence_id: rid,
        this_and_future: false,
        summary: Some(d.title.trim().to_owned()).filter(|s| !s.is_empty()),
        description: Some(d.notes.clone()).filter(|s| !s.trim().is_empty()),
        location: Some(d.location.trim().to_owned()).filter(|s| !s.is_empty()),
        status: base.and_then(|b| b.status.clone()),
        sequence: base.map_or(0, |b| b.sequence + 1),
        start,
        end: Some(End::At(end)),
        rrules: Vec::new(),
        exrules: Vec::new(),
        rdates: keep(|b| b.rdates.clone()),
        rdate_periods: Vec::new(),
        exdates: keep(|b| b.exdates.clone()),
        alarms,
        extra: base.map(|b| b.extra.clone()).unwrap_or_default(),
        todo: None,
    };
    if let Some(b) = base {
        keep_times(&mut ev, b, tz);
    }
    if let Some(mark) = &d.task {
        task_edit::apply(&mut ev, mark, base, now);
    }
    let rrule = if rid.is_some() {
        None
    } else {
        d.rrule.as_deref().filter(|r| !r.is_empty())
    };
    if rrule.is_none() {
        let mut ev = ev;
        ev.rdates.clear();
        ev.exdates.clear();
        return normalise(&ev, None);
    }
    normalise(&ev, rrule)
}

/// Where the form left the times as they were, the component keeps how it
/// wrote them (UTC `…Z`, floating, no `DTEND`, a `DURATION`): the schedule
/// is the same, and so are its reminders' keys (a first edit in the app
/// must not make delivered reminders new ones).
fn keep_times(ev: &mut Event, base: &Event, tz: Tz) {
    let same_kind = base.start.is_date() == ev.start.is_date();
    let same_zone = ev.start.is_date() || event_zone(base, tz) == tz;
    if !(same_kind && same_zone && base.start.local() == ev.start.local()) {
        return;
    }
    let new_end = span(ev, tz).1;
    ev.start = base.start;
    if span(base, tz).1 == new_end {
        ev.end = base.end;
    }
}

/// The series without the occurrence `rid` (an `EXDATE`, and its override
/// removed).
pub fn without(comps: &[Event], rid: When) -> ApiResult<Vec<Event>> {
    let mut out = Vec::new();
    for c in comps {
        match c.recurrence_id {
            None => {
                let mut m = c.clone();
                m.exdates.push(rid);
                m.sequence += 1;
                out.push(normalise(&m, None)?);
            }
            Some(r) if r == rid => {}
            Some(_) => out.push(c.clone()),
        }
    }
    Ok(out)
}

/// The series ending just before occurrence `rid` (`UNTIL`); overrides at
/// or after it are dropped.
pub fn until_before(comps: &[Event], rid: When, floating: Tz) -> ApiResult<Vec<Event>> {
    let cut = rid.instant(floating);
    let mut out = Vec::new();
    for c in comps {
        match c.recurrence_id {
            None => {
                let until = match rid {
                    When::Date(d) => (d - Duration::days(1)).format("%Y%m%d").to_string(),
                    When::DateTime {
                        zone: Zone::Floating,
                        local,
                    } => (local - Duration::seconds(1))
                        .format("%Y%m%dT%H%M%S")
                        .to_string(),
                    When::DateTime { .. } => (cut - Duration::seconds(1))
                        .format("%Y%m%dT%H%M%SZ")
                        .to_string(),
                };
                let mut m = c.clone();
                m.rdates.retain(|w| w.instant(floating) < cut);
                m.sequence += 1;
                let rules: Vec<String> = m
                    .rrules
                    .iter()
                    .map(|r| {
                        let mut parts: Vec<&str> = r
                            .source
                            .split(';')
                            .filter(|p| {
                                let p = p.to_ascii_uppercase();
                                !p.starts_with("UNTIL=") && !p.starts_with("COUNT=")
                            })
                            .collect();
                        let u = format!("UNTIL={until}");
                        parts.push(&u);
                        parts.join(";")
                    })
                    .collect();
                let first = rules.first().cloned();
                out.push(normalise(&m, first.as_deref())?);
            }
            Some(r) if r.instant(floating) >= cut => {}
            Some(_) => out.push(c.clone()),
        }
    }
    Ok(out)
}

/// Moves a series' exception dates and overrides' `RECURRENCE-ID`s by the
/// same wall-clock amount its start moved, so they keep naming the same
/// occurrences.
pub fn shift_exceptions(comps: &mut [Event], by: Duration) {
    if by.is_zero() {
        return;
    }
    for c in comps {
        c.exdates = c.exdates.iter().map(|w| shift(*w, by)).collect();
        c.rdates = c.rdates.iter().map(|w| shift(*w, by)).collect();
        c.recurrence_id = c.recurrence_id.map(|w| shift(w, by));
    }
}

/// A new event's form: one hour from `start` in `tz`, with `alarms`.
#[must_use]
pub fn blank(start: NaiveDateTime, all_day: bool, tz: Tz) -> EventDraft {
    EventDraft {
        calendar_id: 0,
        title: String::new(),
        all_day,
        start: if all_day {
            fmt_date(start.date())
        } else {
            fmt_minute(start)
        },
        end: if all_day {
            fmt_date(start.date())
        } else {
            fmt_minute(start + Duration::hours(1))
        },
        tz: tz.name().to_owned(),
        location: String::new(),
        notes: String::new(),
        rrule: None,
        alarms: Vec::new(),
        task: None,
    }
}
