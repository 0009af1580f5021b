//! RFC 9074 acknowledgements to the server: a reminder dismissed in Kairos
//! (here, or on another device over Kairos sync) gets `ACKNOWLEDGED:<utc>`
//! on the matching `VALARM` of the series' stored copy; the hash then
//! differs from the one recorded, and the sync's write-back step `PUT`s it
//! with `If-Match` like any local edit (a `412` re-applies the marks on the
//! server's fresh copy when they are the only change here: `sync::reack`).
//!
//! What counts: instances `acknowledged` by a dismissal (`dismissed by …`
//! in their history), not those hidden on this device only, nor those
//! acknowledged because the server said so (`dismissed by CalDAV`). The
//! time written is the dismissal's, or the trigger's when it was dismissed
//! before it came due (RFC 9074 covers triggers at or before the time).
//! An alarm whose stored copy already carries an `ACKNOWLEDGED` at or
//! after the trigger is done: nothing is written twice.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use kairos_core::model::{Alarm, alarm_key};
use kairos_store::{CalendarId, State, Store};

use crate::error::Result;
use crate::local::{LocalSeries, RemoteObject};

/// One alarm of one series to mark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    /// The series' `UID`.
    pub uid: String,
    /// The alarm: its `UID`, else `#N` (as reminder keys name it).
    pub alarm: String,
    /// The time to write.
    pub at: DateTime<Utc>,
}

fn alarm_id(a: &Alarm, n: usize) -> String {
    alarm_key(a.uid.as_deref(), n)
}

fn by_kairos(reason: &str) -> bool {
    reason.starts_with("dismissed by ") && reason != "dismissed by CalDAV"
}

/// The alarms of `series` (calendar `local`) dismissed in Kairos and not
/// yet acknowledged on their stored copy.
///
/// # Errors
/// The database.
pub fn pending(
    store: &Store,
    local: CalendarId,
    series: &BTreeMap<String, LocalSeries>,
) -> Result<Vec<Mark>> {
    let mut out: BTreeMap<(String, String), DateTime<Utc>> = BTreeMap::new();
    for (uid, l) in series {
        let insts = store.read(|r| r.instances_of_event(local, uid))?;
        if !insts.iter().any(|i| i.state == State::Acknowledged) {
            continue;
        }
        let obj = RemoteObject::read(&l.text);
        let comps = obj.series.get(uid).map_or(&[][..], Vec::as_slice);
        for i in insts.iter().filter(|i| i.state == State::Acknowledged) {
            let done = comps.iter().any(|e| {
                e.alarms.iter().enumerate().any(|(n, a)| {
                    alarm_id(a, n) == i.alarm && a.acknowledged.is_some_and(|t| t >= i.trigger_at)
                })
            });
            if done {
                continue;
            }
            let history = store.read(|r| r.audit_of(&i.key))?;
            let Some(last) = history
                .iter()
                .rev()
                .find(|a| a.to == Some(State::Acknowledged))
            else {
                continue;
            };
            if !by_kairos(&last.reason) {
                continue;
            }
            let at = last.at.max(i.trigger_at);
            let e = out.entry((uid.clone(), i.alarm.clone())).or_insert(at);
            *e = (*e).max(at);
        }
    }
    Ok(out
        .into_iter()
        .map(|((uid, alarm), at)| Mark { uid, alarm, at })
        .collect())
}

/// `text` with `ACKNOWLEDGED:<at>` on alarm `alarm` (its `UID`, or `#N`:
/// the N-th `VALARM` of each component) in place of any it had.
#[must_use]
pub fn mark_text(text: &str, alarm: &str, at: DateTime<Utc>) -> String {
    let stamp = format!("ACKNOWLEDGED:{}", at.format("%Y%m%dT%H%M%SZ"));
    let mut out = String::with_capacity(text.len() + 40);
    let mut block: Option<Vec<&str>> = None;
    let mut n = 0usize;
    for line in text.split("\r\n").flat_map(|l| l.split('\n')) {
        let upper = line.to_ascii_uppercase();
        if upper == "BEGIN:VEVENT" || upper == "BEGIN:VTODO" {
            n = 0;
        }
        if upper == "BEGIN:VALARM" {
            block = Some(vec![line]);
            continue;
        }
        if let Some(b) = block.as_mut() {
            if upper == "END:VALARM" {
                let uid = b.iter().find_map(|l| l.strip_prefix("UID:").map(str::trim));
                let hit = alarm_key(uid, n) == alarm;
                for l in b.iter() {
                    if hit && l.to_ascii_uppercase().starts_with("ACKNOWLEDGED") {
                        continue;
                    }
                    out.push_str(l);
                    out.push_str("\r\n");
                }
                if hit {
                    out.push_str(&stamp);
                    out.push_str("\r\n");
                }
                out.push_str(line);
                out.push_str("\r\n");
                block = None;
                n += 1;
            } else {
                b.push(line);
            }
            continue;
        }
        if !line.is_empty() {
            out.push_str(line);
            out.push_str("\r\n");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn marks_the_nth_alarm_of_each_component_and_replaces_an_older_ack() {
        let text = "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:e\r\nBEGIN:VALARM\r\nTRIGGER:-PT5M\r\n\
                    END:VALARM\r\nBEGIN:VALARM\r\nTRIGGER:-PT1M\r\nACKNOWLEDGED:20200101T000000Z\r\n\
                    END:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n";
        let at = Utc.with_ymd_and_hms(2026, 3, 1, 9, 50, 0).unwrap();
        let out = mark_text(text, "#1", at);
        assert_eq!(out.matches("ACKNOWLEDGED").count(), 1, "{out}");
        assert!(
            out.contains("TRIGGER:-PT1M\r\nACKNOWLEDGED:20260301T095000Z\r\nEND:VALARM"),
            "{out}"
        );
        assert!(out.contains("TRIGGER:-PT5M\r\nEND:VALARM"), "{out}");
    }

    #[test]
    fn only_dismissals_made_in_kairos_count() {
        assert!(by_kairos("dismissed by here"));
        assert!(by_kairos("dismissed by laptop-1"));
        assert!(!by_kairos("dismissed by CalDAV"));
        assert!(!by_kairos("dismissed on this device only"));
    }
}
