//! Property: one corruption in a valid calendar costs at most the item it
//! is in (issue #20). A generated file of events and tasks (zones, rules,
//! alarms, parameters) gets one random corruption — a line deleted or
//! duplicated, an `END` misspelt, a parameter broken, a bad `RRULE` part —
//! and lenient reading must keep every item the corruption did not touch
//! exactly as the clean file reads it, with the same occurrences (and the
//! item with a bad rule part keeps its occurrences too).

use chrono_tz::Tz;
use kairos_core::model::{Calendar, Event};
use kairos_core::{Limits, ics, query};
use proptest::prelude::*;

use super::support::t;

/// One generated item: its lines (without `BEGIN`/`END`) and its kind.
#[derive(Debug, Clone)]
struct Item {
    task: bool,
    lines: Vec<String>,
    alarm: bool,
}

fn item(n: usize) -> impl Strategy<Value = Item> {
    let zone = prop_oneof![
        Just(";TZID=Europe/Berlin"),
        Just(";TZID=America/New_York"),
        Just(""),
    ];
    let rule = prop_oneof![
        Just(None),
        Just(Some("FREQ=DAILY;COUNT=5")),
        Just(Some("FREQ=WEEKLY;BYDAY=MO,WE;COUNT=6")),
        Just(Some("FREQ=MONTHLY;BYMONTHDAY=15;UNTIL=20261231T000000Z")),
    ];
    (any::<bool>(), zone, rule, 1u32..28, 6u32..20, any::<bool>()).prop_map(
        move |(task, zone, rule, day, hour, alarm)| {
            let z = if zone.is_empty() { "Z" } else { "" };
            let when = format!("{zone}:202603{day:02}T{hour:02}0000{z}");
            let mut lines = vec![
                format!("UID:item-{n}@example.com"),
                "DTSTAMP:20260101T000000Z".to_owned(),
                if task {
                    format!("DUE{when}")
                } else {
                    format!("DTSTART{when}")
                },
                format!("SUMMARY:Item {n}"),
                format!("ATTENDEE;CN=\"Person {n}\";ROLE=REQ-PARTICIPANT:mailto:p{n}@example.com"),
            ];
            if !task {
                lines.push("DURATION:PT1H".to_owned());
            }
            if let Some(r) = rule {
                lines.push(format!("RRULE:{r}"));
            }
            lines.push(format!("DESCRIPTION:Notes for item {n}"));
            Item { task, lines, alarm }
        },
    )
}

/// The file's lines, each with the index of the item it belongs to.
fn render(items: &[Item]) -> Vec<(Option<usize>, String)> {
    let mut out = vec![
        (None, "BEGIN:VCALENDAR".to_owned()),
        (None, "VERSION:2.0".to_owned()),
        (None, "PRODID:-//Kairos tests//corruption//EN".to_owned()),
    ];
    for (i, it) in items.iter().enumerate() {
        let kind = if it.task { "VTODO" } else { "VEVENT" };
        out.push((Some(i), format!("BEGIN:{kind}")));
        for l in &it.lines {
            out.push((Some(i), l.clone()));
        }
        if it.alarm {
            for l in [
                "BEGIN:VALARM",
                "ACTION:DISPLAY",
                "TRIGGER;RELATED=START:-PT15M",
                "DESCRIPTION:Reminder",
                "END:VALARM",
            ] {
                out.push((Some(i), l.to_owned()));
            }
        }
        out.push((Some(i), format!("END:{kind}")));
    }
    out.push((None, "END:VCALENDAR".to_owned()));
    out
}

#[derive(Debug, Clone, Copy)]
enum Corruption {
    Delete,
    Duplicate,
    MisspellEnd,
    BreakParam,
    BadRulePart,
}

/// Applies `c` at the line picked by `pick` (among the lines it can apply
/// to); returns the item touched (`None`: a calendar line), or `None` when
/// no line fits.
fn corrupt(
    lines: &mut Vec<(Option<usize>, String)>,
    c: Corruption,
    pick: prop::sample::Index,
) -> Option<Option<usize>> {
    let fits = |l: &str| match c {
        Corruption::Delete | Corruption::Duplicate => true,
        Corruption::MisspellEnd => l.starts_with("END:"),
        Corruption::BreakParam => l.contains(";") && !l.starts_with("RRULE"),
        Corruption::BadRulePart => l.starts_with("RRULE:"),
    };
    let candidates: Vec<usize> = (0..lines.len()).filter(|&i| fits(&lines[i].1)).collect();
    if candidates.is_empty() {
        return None;
    }
    let at = candidates[pick.index(candidates.len())];
    let owner = lines[at].0;
    let text = lines[at].1.clone();
    match c {
        Corruption::Delete => {
            lines.remove(at);
        }
        Corruption::Duplicate => lines.insert(at, (owner, text)),
        Corruption::MisspellEnd => {
            // Swap two letters of the name: END:VEVENT → END:VEVNET.
            let mut b = text.into_bytes();
            let n = b.len();
            b.swap(n - 2, n - 3);
            lines[at].1 = String::from_utf8(b).unwrap_or_default();
        }
        Corruption::BreakParam => {
            // `;NAME=value` → `;NAME` (no `=value`).
            let semi = text.find(';').unwrap_or(0);
            let eq = text[semi..].find('=').map_or(text.len(), |e| semi + e);
            let end = text[eq..].find([';', ':']).map_or(text.len(), |e| eq + e);
            lines[at].1 = format!("{}{}", &text[..eq], &text[end..]);
        }
        Corruption::BadRulePart => {
            // A bad part after FREQ (one the rule does not already have:
            // a part given twice is a different repair).
            let bad = [";;", ";X-BAD=1", ";BYHOUR=25", ";BYSETPOS=0", ";COUNT=-1"];
            let bad = bad[pick.index(bad.len())];
            let bad = if bad == ";COUNT=-1" && text.contains("COUNT") {
                ";INTERVAL=0"
            } else {
                bad
            };
            let cut = text.find(';').unwrap_or(text.len());
            lines[at].1 = format!("{}{bad}{}", &text[..cut], &text[cut..]);
        }
    }
    Some(owner)
}

fn read(lines: &[(Option<usize>, String)]) -> Calendar {
    let text: String = lines.iter().map(|(_, l)| format!("{l}\r\n")).collect();
    match ics::parse_calendar_lenient(text.as_bytes(), &Limits::default()) {
        Ok((c, _)) => c,
        Err(e) => panic!("lenient reading refused the file: {e}\n{text}"),
    }
}

fn starts(cal: &Calendar, uid: &str) -> Vec<String> {
    let only = Calendar {
        events: cal
            .events
            .iter()
            .filter(|e| e.uid == uid)
            .cloned()
            .collect(),
        ..Calendar::default()
    };
    let (from, to) = (t("2026-01-01T00:00:00Z"), t("2027-01-01T00:00:00Z"));
    match query::occurrences(&only, from, to, Tz::UTC, &Limits::default()) {
        Ok(v) => v.iter().map(|o| o.start.display(Tz::UTC)).collect(),
        Err(e) => panic!("query failed: {e}"),
    }
}

fn by_uid<'a>(cal: &'a Calendar, uid: &str) -> Vec<&'a Event> {
    cal.events.iter().filter(|e| e.uid == uid).collect()
}

fn corruption() -> impl Strategy<Value = Corruption> {
    prop_oneof![
        Just(Corruption::Delete),
        Just(Corruption::Duplicate),
        Just(Corruption::MisspellEnd),
        Just(Corruption::BreakParam),
        Just(Corruption::BadRulePart),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn one_corruption_costs_at_most_the_item_it_is_in(
        items in (2usize..6).prop_flat_map(|n| {
            (0..n).map(item).collect::<Vec<_>>()
        }),
        c in corruption(),
        pick in any::<prop::sample::Index>(),
    ) {
        let clean_lines = render(&items);
        let clean = read(&clean_lines);
        prop_assert_eq!(clean.events.len(), items.len(), "the clean file reads whole");
        let mut lines = clean_lines.clone();
        let Some(touched) = corrupt(&mut lines, c, pick) else {
            return Ok(());
        };
        let got = read(&lines);
        if let (Corruption::BadRulePart, Some(i)) = (c, touched) {
            // The bad part goes alone: the rule, and every occurrence, stay.
            let uid = format!("item-{i}@example.com");
            prop_assert_eq!(starts(&got, &uid), starts(&clean, &uid));
        }
        for i in (0..items.len()).filter(|&i| Some(i) != touched) {
            let uid = format!("item-{i}@example.com");
            let (want, have) = (by_uid(&clean, &uid), by_uid(&got, &uid));
            prop_assert_eq!(&have, &want, "{:?} of {:?} changed item {}", c, touched, i);
            prop_assert_eq!(starts(&got, &uid), starts(&clean, &uid));
        }
    }
}
