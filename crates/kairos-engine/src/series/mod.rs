//! The one place where the engine turns a series into its stored and wire
//! forms and back. Everything else passes the core's typed model
//! ([`Event`], [`Calendar`]).
//!
//! - Stored: each component is the core's typed model as versioned JSON
//!   (`typed`: [`encode`] / [`decode`]); materialising reads it back with
//!   no iCalendar parsing. Rows written before schema 9 hold iCalendar
//!   text: [`convert_legacy`] turns them into the typed form in place, and
//!   until it has (or for a row it could not read) [`decode`] still reads
//!   them as text (`legacy`).
//! - Wire and CalDAV: iCalendar text, written from the typed form
//!   ([`wire_text`], [`component_text`]) exactly as the rows used to hold
//!   it, so older peers and CalDAV hashes see no change; read with
//!   [`from_wire`].

mod legacy;
mod typed;

use chrono::{DateTime, Utc};
use kairos_core::Limits;
use kairos_core::model::{Calendar, End, Event, When, Zone};
use kairos_store::{Form, StoredEvent};

use crate::error::EngineError;
pub use legacy::{Converted, Refused, convert_legacy};

/// One component in its stored (typed) form.
pub(crate) fn encode(ev: &Event) -> String {
    typed::to_stored(ev)
}

/// `ev` as every replica holds it: what its wire text reads back as, so
/// that this device plans the same occurrences and reminder keys as its
/// peers (and as the text path did before schema 9). That is `ev` itself
/// except in three cases, each shown by the corpus test in `tests`:
/// - an alarm's `DURATION` without a `REPEAT` is not written, so it goes;
/// - times in a custom zone (a file's own `VTIMEZONE`) are carried as UTC
///   instants (older peers read no `VTIMEZONE` on the wire);
/// - a carriage return inside a text value does not survive the text.
///
/// The last two are rare (a lenient import's custom zone, text pasted with
/// Windows line ends) and take the text round trip, once, when written.
pub(crate) fn settle(mut ev: Event) -> Event {
    for a in ev.alarms.iter_mut().filter(|a| a.repeat == 0) {
        a.interval = None;
    }
    if !has_custom_zone(&ev) && !has_carriage_return(&ev) {
        return ev;
    }
    match from_wire(&ics_block(&ev)).map(|mut v| (v.len(), v.pop())) {
        Ok((1, Some(read))) => read,
        // Our own export always reads back as one component (the core's
        // round-trip invariant, fuzzed); keep the event as it came if not.
        _ => ev,
    }
}

fn has_carriage_return(ev: &Event) -> bool {
    let cr = |s: &String| s.contains('\r');
    let texts = [&ev.summary, &ev.description, &ev.location, &ev.status];
    cr(&ev.uid)
        || texts.into_iter().flatten().any(cr)
        || ev.extra.iter().any(|x| cr(&x.line))
        || ev.alarms.iter().any(|a| {
            cr(&a.action)
                || [&a.uid, &a.description, &a.summary, &a.snooze_of]
                    .into_iter()
                    .flatten()
                    .any(cr)
                || a.extra.iter().any(|x| cr(&x.line))
        })
}

fn has_custom_zone(ev: &Event) -> bool {
    let custom = |w: &When| matches!(w.zone(), Zone::Custom(_));
    let custom_end = |e: &End| matches!(e, End::At(w) if custom(w));
    custom(&ev.start)
        || ev.end.as_ref().is_some_and(custom_end)
        || ev.recurrence_id.as_ref().is_some_and(custom)
        || ev.rdates.iter().chain(&ev.exdates).any(custom)
        || ev
            .rdate_periods
            .iter()
            .any(|(s, e)| custom(s) || custom_end(e))
}

fn unreadable(calendar: &str, uid: &str, message: String) -> EngineError {
    EngineError::Stored {
        calendar: calendar.to_owned(),
        uid: uid.to_owned(),
        message,
    }
}

/// The stored components `rows` of calendar `name`, read back in row order:
/// typed rows strictly, rows still in text by the old path.
///
/// # Errors
/// A stored component that does not read back (named by its calendar and
/// UID).
pub(crate) fn decode(
    rows: &[StoredEvent],
    name: &str,
    limits: &Limits,
) -> Result<Calendar, EngineError> {
    let mut events = Vec::with_capacity(rows.len());
    let mut text_rows = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        match row.form {
            Form::Typed => events
                .push(typed::from_stored(&row.body).map_err(|m| unreadable(name, &row.uid, m))?),
            Form::Ics => text_rows.push(i),
        }
    }
    if !text_rows.is_empty() {
        let texts: Vec<&StoredEvent> = text_rows.iter().map(|&i| &rows[i]).collect();
        let read = legacy::read(&texts, limits).map_err(|source| EngineError::Calendar {
            calendar: name.to_owned(),
            uid: "(calendar)".into(),
            source,
        })?;
        if read.len() != texts.len() {
            return Err(unreadable(
                name,
                "(calendar)",
                format!(
                    "{} stored text components read back as {}",
                    texts.len(),
                    read.len()
                ),
            ));
        }
        // Back into row order (the text rows were read in theirs).
        for (&i, ev) in text_rows.iter().zip(read) {
            events.insert(i, ev);
        }
    }
    Ok(Calendar {
        name: None,
        events,
        extra: Vec::new(),
    })
}

/// The stored components `rows` of calendar `name`, as the core's model:
/// how the app and the other crates read what the engine stored.
///
/// # Errors
/// A stored component that does not read back (named by its calendar and
/// UID).
pub fn read_calendar(rows: &[StoredEvent], name: &str) -> Result<Calendar, EngineError> {
    decode(rows, name, &Limits::default())
}

/// One stored component as its `VEVENT` (or `VTODO`) block of iCalendar
/// text: what CalDAV uploads and hashes, byte for byte what rows held
/// before schema 9.
///
/// # Errors
/// A typed row that does not read back (named by calendar `name` and UID).
pub fn component_text(row: &StoredEvent, name: &str) -> Result<String, EngineError> {
    match row.form {
        Form::Typed => typed::from_stored(&row.body)
            .map(|ev| ics_block(&ev))
            .map_err(|m| unreadable(name, &row.uid, m)),
        Form::Ics => Ok(row.body.clone()),
    }
}

/// One component as a `VEVENT` (or a task's `VTODO`) block of iCalendar
/// text.
fn ics_block(ev: &Event) -> String {
    let one = Calendar {
        name: None,
        events: vec![ev.clone()],
        extra: Vec::new(),
    };
    // DTSTAMP is kept from the source when it has one; otherwise a fixed
    // stamp, so that writing the same event again gives the same text.
    let text = kairos_core::ics::write_calendar(&one, DateTime::<Utc>::UNIX_EPOCH);
    let kind = if ev.todo.is_some() { "VTODO" } else { "VEVENT" };
    let start = text.find(&format!("BEGIN:{kind}")).unwrap_or(0);
    let end = text
        .rfind(&format!("END:{kind}"))
        .map_or(text.len(), |i| i + "END:\r\n".len() + kind.len());
    text[start..end.min(text.len())].to_owned()
}

/// The key a component's row has beside its `UID`: `""` for a master,
/// else its `RECURRENCE-ID` as [`rid_text`] writes it.
pub(crate) fn rid_key(ev: &Event) -> String {
    ev.recurrence_id.as_ref().map(rid_text).unwrap_or_default()
}

/// A `RECURRENCE-ID` as the store keys it: `YYYYMMDD`, or the local time
/// with its zone (`Europe/Berlin:20260310T090000`, `…Z`, or floating).
fn rid_text(w: &When) -> String {
    match w {
        When::Date(d) => d.format("%Y%m%d").to_string(),
        When::DateTime { local, zone } => {
            let t = local.format("%Y%m%dT%H%M%S");
            match zone {
                Zone::Utc => format!("{t}Z"),
                Zone::Floating => t.to_string(),
                Zone::Tz(tz) => format!("{}:{t}", tz.name()),
                // Stored as UTC, as kairos_core's export writes it.
                Zone::Custom(c) => format!("{}Z", c.resolve(*local).format("%Y%m%dT%H%M%S")),
            }
        }
    }
}

/// The stored components of one series (of calendar `name`) as one op's
/// `ics` text (the sync wire's form: the components' blocks in a row).
///
/// # Errors
/// A typed row that does not read back.
pub(crate) fn wire_text<'a>(
    components: impl Iterator<Item = &'a StoredEvent>,
    name: &str,
) -> Result<String, EngineError> {
    let mut out = String::new();
    for c in components {
        out.push_str(component_text(c, name)?.trim_end());
        out.push_str("\r\n");
    }
    Ok(out)
}

/// [`wire_text`] of the components `comps` of one series as they are being
/// stored (the same text, in the store's order, master first), without
/// reading them back.
pub(crate) fn wire_text_of(comps: &[Event]) -> String {
    let mut keyed: Vec<(String, &Event)> = comps.iter().map(|e| (rid_key(e), e)).collect();
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = String::new();
    for (_, ev) in keyed {
        out.push_str(ics_block(ev).trim_end());
        out.push_str("\r\n");
    }
    out
}

/// The components an op's `ics` text holds.
///
/// # Errors
/// Text that does not read as iCalendar components.
pub(crate) fn from_wire(ics: &str) -> Result<Vec<Event>, kairos_core::Error> {
    let text = format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Kairos//sync//EN\r\n{}\r\nEND:VCALENDAR\r\n",
        ics.trim_end()
    );
    kairos_core::ics::parse_calendar(text.as_bytes(), &Limits::default()).map(|c| {
        c.events
            .into_iter()
            .map(|e| legacy::unstamp(e, &text))
            .collect()
    })
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_legacy;
