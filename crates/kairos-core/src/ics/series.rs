//! What holds across the events of one file, applied once all are read:
//! several copies of one event keep only the newest, and an override's
//! `RECURRENCE-ID` takes its series' value type.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use chrono::{DateTime, NaiveDateTime, Utc};
use chrono_tz::Tz;

use super::dates::coerce;
use super::warning::{At, Sink};
use crate::model::{Event, When};

/// An event as read, with what deciding between copies of it needs.
pub(crate) struct Item {
    pub event: Event,
    /// Line of its `BEGIN:VEVENT`.
    pub line: usize,
    /// `LAST-MODIFIED` and `DTSTAMP`, when given.
    pub stamp: (Option<NaiveDateTime>, Option<NaiveDateTime>),
}

type Key<'a> = (&'a str, Option<(DateTime<Utc>, bool)>);

fn key(ev: &Event) -> Key<'_> {
    (
        &ev.uid,
        ev.recurrence_id.map(|w| (w.instant(Tz::UTC), w.is_date())),
    )
}

/// The events to keep, in file order.
pub(crate) fn settle(items: Vec<Item>, sink: &mut Sink) -> Vec<Event> {
    let keep = newest(&items, sink);
    let mut items: Vec<Item> = items
        .into_iter()
        .zip(keep)
        .filter_map(|(item, keep)| keep.then_some(item))
        .collect();
    match_series_type(&mut items, sink);
    items.into_iter().map(|item| item.event).collect()
}

/// Which items survive: of several copies of one event (same UID and
/// `RECURRENCE-ID`: a feed that lists an event once per update, a mailbox
/// export with every invitation), the highest `SEQUENCE`; at equal
/// `SEQUENCE` the later `LAST-MODIFIED`, then `DTSTAMP`; else the last one.
/// This is how Google, Outlook and Apple apply updates (RFC 5546 §2.1.5).
/// When nothing decides and the copies differ, the later one is kept and
/// strict reading warns too (it does not refuse: the file is valid).
fn newest(items: &[Item], sink: &mut Sink) -> Vec<bool> {
    let mut keep = vec![true; items.len()];
    let mut best: HashMap<Key<'_>, usize> = HashMap::with_capacity(items.len());
    let rank = |i: usize| {
        let it = &items[i];
        (it.event.sequence, it.stamp.0, it.stamp.1, i)
    };
    for (i, item) in items.iter().enumerate() {
        let mut slot = match best.entry(key(&item.event)) {
            Entry::Vacant(v) => {
                v.insert(i);
                continue;
            }
            Entry::Occupied(o) => o,
        };
        let j = *slot.get();
        let (win, lose) = if rank(i) > rank(j) { (i, j) } else { (j, i) };
        slot.insert(win);
        keep[lose] = false;
        let (w, l) = (&items[win], &items[lose]);
        let at = At::new(kind(&l.event), Some(&l.event.uid));
        let (rw, rl) = (rank(win), rank(lose));
        let undecided = (rw.0, rw.1, rw.2) == (rl.0, rl.1, rl.2);
        if undecided && w.event != l.event {
            // Nothing says which copy is newer and they differ: the rule
            // still picks one (the later), and both modes say so.
            sink.warn(
                l.line,
                at,
                format!(
                    "another copy of this event (line {}) differs from this one and nothing \
                     tells which is newer (same SEQUENCE {}, no later LAST-MODIFIED or DTSTAMP)",
                    w.line, w.event.sequence
                ),
                "this copy ignored: the later copy in the file is kept",
            );
            continue;
        }
        sink.note(
            l.line,
            at,
            || {
                format!(
                    "another copy of this event (line {}, SEQUENCE {}) supersedes this one (SEQUENCE {})",
                    w.line, w.event.sequence, l.event.sequence
                )
            },
            "this copy ignored",
        );
    }
    keep
}

/// The component an event was read from, for warnings.
fn kind(ev: &Event) -> &'static str {
    if ev.todo.is_some() { "VTODO" } else { "VEVENT" }
}

/// Overrides whose `RECURRENCE-ID` is a `DATE-TIME` on an all-day series (or
/// a `DATE` on a timed one) are matched by date, as Google, Apple and
/// Outlook write and read them.
fn match_series_type(items: &mut [Item], sink: &mut Sink) {
    if items.iter().all(|i| i.event.recurrence_id.is_none()) {
        return;
    }
    let changes: Vec<(usize, When)> = {
        let masters: HashMap<&str, When> = items
            .iter()
            .map(|i| &i.event)
            .filter(|e| e.recurrence_id.is_none())
            .map(|e| (e.uid.as_str(), e.start))
            .collect();
        items
            .iter()
            .enumerate()
            .filter_map(|(n, i)| {
                let rid = i.event.recurrence_id?;
                let start = *masters.get(i.event.uid.as_str())?;
                (rid.is_date() != start.is_date()).then(|| (n, coerce(rid, start, false)))
            })
            .collect()
    };
    for (n, rid) in changes {
        let Item { event, line, .. } = &mut items[n];
        event.recurrence_id = Some(rid);
        let kind = if rid.is_date() { "DATE" } else { "DATE-TIME" };
        sink.note(
            *line,
            At::new("VEVENT", Some(&event.uid)),
            || format!("RECURRENCE-ID: value type differs from its series' DTSTART ({kind})"),
            "matched by date",
        );
    }
}
