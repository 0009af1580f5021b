//! Rows written before schema 9 hold a component's iCalendar text: read
//! them the old way, and convert them in place to the typed form.

use std::collections::BTreeMap;

use kairos_core::Limits;
use kairos_core::model::Event;
use kairos_store::{CalendarId, Store, StoredEvent};

use crate::error::EngineError;

/// The `DTSTAMP` Kairos wrote into every stored block whose event had none.
const OUR_STAMP: &str = "DTSTAMP:19700101T000000Z";

/// `ev` read from `source`, text Kairos wrote, without the fixed `DTSTAMP`
/// the writer adds to an event that has none, when that is where it came
/// from (the block without it writes `source`'s very text): then the typed
/// form equals the event before it was written, and writing it again gives
/// the same bytes (and every hash of them). A `DTSTAMP` the event itself
/// carried (the app's editor keeps one, written among the other
/// properties) stays.
pub(super) fn unstamp(mut ev: Event, source: &str) -> Event {
    if ev.extra.first().is_none_or(|x| x.line != OUR_STAMP) {
        return ev;
    }
    let stamp = ev.extra.remove(0);
    if source.contains(super::ics_block(&ev).trim_end()) {
        return ev;
    }
    ev.extra.insert(0, stamp);
    ev
}

/// Text rows read back together, as one calendar (strictly: the store holds
/// only what Kairos wrote).
///
/// # Errors
/// Text that no longer reads.
pub(super) fn read(
    rows: &[&StoredEvent],
    limits: &Limits,
) -> Result<Vec<Event>, kairos_core::Error> {
    let mut text =
        String::from("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Kairos//engine//EN\r\n");
    for e in rows {
        text.push_str(e.body.trim_end());
        text.push_str("\r\n");
    }
    text.push_str("END:VCALENDAR\r\n");
    kairos_core::ics::parse_calendar(text.as_bytes(), limits)
        .map(|c| c.events.into_iter().map(|e| unstamp(e, &text)).collect())
}

/// What [`convert_legacy`] did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Converted {
    /// Components now in the typed form.
    pub converted: usize,
    /// Components left as text (still read by the old path), with why.
    pub refused: Vec<Refused>,
}

/// A stored component [`convert_legacy`] could not convert.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// Its calendar's name.
    pub calendar: String,
    /// Its `UID`.
    pub uid: String,
    /// `""` for a master, else its `RECURRENCE-ID` as the store keys it.
    pub recurrence_id: String,
    /// Why it stays text.
    pub reason: String,
}

/// Converts every component still held as iCalendar text (rows written
/// before schema 9) into the typed form, in place, series by series: the
/// same event, version and time of last change, so reminder keys do not
/// move and nothing is scheduled again. A series whose text does not read
/// (or does not read back as exactly its rows) stays text, is read by the
/// old path as before, and is listed in [`Converted::refused`]; nothing is
/// dropped. Cheap when there is nothing to convert (one query on a
/// partial index).
///
/// # Errors
/// Store failures (then nothing is converted).
pub fn convert_legacy(store: &mut Store) -> Result<Converted, EngineError> {
    let rows = store.read(|r| r.legacy_events())?;
    let mut out = Converted::default();
    if rows.is_empty() {
        return Ok(out);
    }
    let names: BTreeMap<CalendarId, String> = store
        .calendars()?
        .into_iter()
        .map(|c| (c.id, c.name))
        .collect();
    let mut series: BTreeMap<(CalendarId, &str), Vec<&StoredEvent>> = BTreeMap::new();
    for r in &rows {
        series.entry((r.calendar, &r.uid)).or_default().push(r);
    }
    let mut typed = Vec::new();
    for ((cal, uid), group) in series {
        let name = names.get(&cal).map_or("", String::as_str);
        match one_series(&group) {
            Ok(bodies) => typed.extend(bodies),
            Err(reason) => out.refused.extend(group.iter().map(|r| Refused {
                calendar: name.to_owned(),
                uid: uid.to_owned(),
                recurrence_id: r.recurrence_id.clone(),
                reason: reason.clone(),
            })),
        }
    }
    out.converted = store.write(|tx| -> Result<usize, EngineError> {
        let mut n = 0;
        for (row, body) in &typed {
            n += usize::from(tx.convert_event(row.calendar, &row.uid, &row.recurrence_id, body)?);
        }
        Ok(n)
    })?;
    Ok(out)
}

/// The typed form of each row of one series, or why there is none.
fn one_series<'a>(group: &[&'a StoredEvent]) -> Result<Vec<(&'a StoredEvent, String)>, String> {
    let read = read(group, &Limits::default()).map_err(|e| e.to_string())?;
    if read.len() != group.len() {
        return Err(format!(
            "{} stored components read back as {}",
            group.len(),
            read.len()
        ));
    }
    let mut out = Vec::with_capacity(group.len());
    for (row, ev) in group.iter().zip(read) {
        if ev.uid != row.uid || super::rid_key(&ev) != row.recurrence_id {
            return Err(format!(
                "the row for {:?} {:?} reads back as {:?} {:?}",
                row.uid,
                row.recurrence_id,
                ev.uid,
                super::rid_key(&ev)
            ));
        }
        let body = super::encode(&ev);
        // Strict: the typed form must read back as this very event.
        match super::typed::from_stored(&body) {
            Ok(back) if back == ev => out.push((*row, body)),
            Ok(_) => return Err("the typed form does not read back as the event".into()),
            Err(m) => return Err(format!("the typed form does not read back: {m}")),
        }
    }
    Ok(out)
}
