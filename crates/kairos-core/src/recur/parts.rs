//! An `RRULE` value split into its parts, each checked on its own, so that
//! one bad part costs that part and not the rule (issue #20: "the smallest
//! unit that is broken is what is dropped or repaired").
//!
//! What is dropped, and what it leaves (python-dateutil and python
//! icalendar, the reference readers, refuse the whole rule for most of
//! these; a rule losing one part is closer to what was meant than a single
//! occurrence):
//!
//! | broken | dropped | what is left |
//! | --- | --- | --- |
//! | an empty part between two `;` (`FREQ=DAILY;;COUNT=3`) | the empty part | the rule |
//! | a part without `=`, with a non-ASCII character, or an unknown name (`X-FOO=1`, RFC 7529 `RSCALE`) | that part | the rule |
//! | a part given twice | the first (later wins, as in dateutil and icalendar) | the rule |
//! | one value of a `BYxxx` list (`BYDAY=MO,XX`, `BYMONTHDAY=32`) | that value | the list's other values |
//! | every value of a `BYxxx` list, or a `BYxxx` part this `FREQ` forbids | the part | the rule |
//! | `COUNT` that is not a count (`COUNT=-1`) | `COUNT` | a rule that does not end (unless `UNTIL`) |
//! | `UNTIL` that is not a date | `UNTIL` | a rule that does not end (unless `COUNT`) |
//! | `INTERVAL` outside 1–65535 | `INTERVAL` | every period (`INTERVAL=1`) |
//! | `WKST` that is not a weekday | `WKST` | weeks start on Monday |
//! | `COUNT` and `UNTIL` both | the one that ends the series later | the same set dateutil gives (it applies both) |
//! | no `FREQ`, or an unknown one | nothing can be | the rule is ignored |
//!
//! A trailing `;` (`FREQ=YEARLY;BYMONTH=11;`) is not a part at all: it is
//! common (python icalendar issue #157) and accepted silently in both modes.
//! Strict reading refuses the first of these problems, naming the part.

/// A part (or one value of a part) left out of a rule, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped {
    /// What was wrong, naming the part: `COUNT=-1 is not a count`.
    pub problem: String,
    /// What was done instead: `COUNT dropped, the rest of the rule kept`.
    pub action: String,
    /// An empty part (`;;`), which reading passed over before issue #20:
    /// a `VTIMEZONE` observance still does, silently.
    pub(crate) empty_part: bool,
}

/// The parts of a rule that survived, in the order written.
#[derive(Debug, Default)]
pub(super) struct Parts {
    /// Every kept part but `UNTIL`, names and values upper-cased.
    pub parts: Vec<(String, String)>,
    /// `UNTIL`'s raw value, if kept.
    pub until: Option<String>,
    /// What was dropped, in the order written.
    pub dropped: Vec<Dropped>,
}

const KNOWN: [&str; 14] = [
    "FREQ",
    "INTERVAL",
    "COUNT",
    "UNTIL",
    "BYSECOND",
    "BYMINUTE",
    "BYHOUR",
    "BYDAY",
    "BYMONTHDAY",
    "BYYEARDAY",
    "BYWEEKNO",
    "BYMONTH",
    "BYSETPOS",
    "WKST",
];

const WEEKDAYS: [&str; 7] = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"];

fn kept(part: &str) -> String {
    format!("{part} dropped, the rest of the rule kept")
}

impl Parts {
    fn drop(&mut self, problem: String, action: String) {
        self.dropped.push(Dropped {
            problem,
            action,
            empty_part: false,
        });
    }

    /// Drops the kept part `name`, if any.
    pub(super) fn remove(&mut self, name: &str) {
        if name == "UNTIL" {
            self.until = None;
        }
        self.parts.retain(|(k, _)| k != name);
    }

    /// The kept parts as rule text, in the order written.
    pub(super) fn text(&self) -> String {
        let mut out: Vec<String> = self.parts.iter().map(|(k, v)| format!("{k}={v}")).collect();
        if let Some(u) = &self.until {
            out.push(format!("UNTIL={u}"));
        }
        out.join(";")
    }
}

/// Splits `value` into parts, dropping (and recording) each bad one.
pub(super) fn split(value: &str) -> Parts {
    let mut out = Parts::default();
    let pieces: Vec<&str> = value.trim().split(';').collect();
    let last = pieces.len().saturating_sub(1);
    for (i, piece) in pieces.iter().enumerate() {
        let piece = piece.trim();
        if piece.is_empty() {
            if i != last {
                let n = i + 1;
                out.dropped.push(Dropped {
                    problem: format!("rule part {n} is empty (a stray ';')"),
                    action: "the empty part skipped, the rest of the rule kept".into(),
                    empty_part: true,
                });
            }
            continue;
        }
        // Every valid rule is ASCII, and the `rrule` crate slices some parts
        // by byte offsets assuming so (a BYDAY of `-ϴR` panics inside it).
        if let Some(c) = piece.chars().find(|c| !c.is_ascii()) {
            out.drop(
                format!("unexpected character {c:?} in rule part {piece:?}"),
                "that part dropped, the rest of the rule kept".into(),
            );
            continue;
        }
        let Some((k, v)) = piece.split_once('=') else {
            out.drop(
                format!("rule part {piece:?} has no '='"),
                "that part dropped, the rest of the rule kept".into(),
            );
            continue;
        };
        let k = k.trim().to_ascii_uppercase();
        let v = v.trim().to_ascii_uppercase();
        if !KNOWN.contains(&k.as_str()) {
            out.drop(format!("unknown rule part {k:?}"), kept(&k));
            continue;
        }
        if out.parts.iter().any(|(pk, _)| *pk == k) || (k == "UNTIL" && out.until.is_some()) {
            out.drop(
                format!("rule part {k} appears twice"),
                format!("the first {k} dropped, the later one kept"),
            );
            out.remove(&k);
        }
        if k == "UNTIL" {
            out.until = Some(v);
        } else if let Some(v) = value_of(&k, &v, &mut out) {
            out.parts.push((k, v));
        }
    }
    out
}

/// The value of part `k` with its bad values dropped, or `None` when the
/// whole part goes (recorded in `out`).
fn value_of(k: &str, v: &str, out: &mut Parts) -> Option<String> {
    let single = |ok: bool, what: &str, out: &mut Parts| {
        if ok {
            Some(v.to_owned())
        } else {
            out.drop(format!("{k}={v} is not {what}"), kept(k));
            None
        }
    };
    match k {
        "FREQ" => Some(v.to_owned()),
        "COUNT" => single(v.parse::<u32>().is_ok(), "a count", out),
        "INTERVAL" => single(
            v.parse::<u32>()
                .is_ok_and(|i| (1..=u32::from(u16::MAX)).contains(&i)),
            "between 1 and 65535",
            out,
        ),
        "WKST" => single(WEEKDAYS.contains(&v), "a weekday (MO … SU)", out),
        _ => by_list(k, v, out),
    }
}

/// A `BYxxx` list with its bad values dropped.
fn by_list(k: &str, v: &str, out: &mut Parts) -> Option<String> {
    let (what, ok): (&str, fn(&str) -> Option<String>) = match k {
        "BYSECOND" => ("a second (0-60)", |s| number(s, 0, 60, false)),
        "BYMINUTE" => ("a minute (0-59)", |s| number(s, 0, 59, false)),
        "BYHOUR" => ("an hour (0-23)", |s| number(s, 0, 23, false)),
        "BYMONTH" => ("a month (1-12)", |s| number(s, 1, 12, false)),
        "BYMONTHDAY" => ("a day of the month (±1-31)", |s| number(s, 1, 31, true)),
        "BYYEARDAY" => ("a day of the year (±1-366)", |s| number(s, 1, 366, true)),
        "BYWEEKNO" => ("a week number (±1-53)", |s| number(s, 1, 53, true)),
        "BYSETPOS" => ("a position (±1-366)", |s| number(s, 1, 366, true)),
        _ => ("a weekday such as MO, 1MO or -1FR", weekday),
    };
    let mut good = Vec::new();
    for item in v.split(',') {
        match ok(item.trim()) {
            Some(g) => good.push(g),
            None if v.split(',').count() > 1 => out.drop(
                format!("{k}: {:?} is not {what}", item.trim()),
                "that value dropped, the rest of the rule kept".into(),
            ),
            None => {}
        }
    }
    if good.is_empty() {
        out.drop(format!("{k}={v} has no valid value ({what})"), kept(k));
        return None;
    }
    Some(good.join(","))
}

/// `s` as a number in `lo..=hi` (or its negative, when `signed`).
fn number(s: &str, lo: i32, hi: i32, signed: bool) -> Option<String> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || digits.len() > 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: i32 = s.parse().ok()?;
    let fits = (lo..=hi).contains(&n) || (signed && (lo..=hi).contains(&-n));
    fits.then(|| n.to_string())
}

/// `MO`, `1MO`, `+2TU`, `-1FR`.
fn weekday(s: &str) -> Option<String> {
    let day = s.get(s.len().checked_sub(2)?..)?;
    if !WEEKDAYS.contains(&day) {
        return None;
    }
    let ord = &s[..s.len() - 2];
    if ord.is_empty() {
        return Some(day.to_owned());
    }
    number(ord, 1, 53, true).map(|n| format!("{n}{day}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(v: &str) -> (String, Vec<String>) {
        let p = split(v);
        (p.text(), p.dropped.into_iter().map(|d| d.problem).collect())
    }

    #[test]
    fn good_rules_lose_nothing_and_a_trailing_semicolon_is_no_part() {
        let (text, dropped) = problems("FREQ=YEARLY;BYMONTH=11;BYDAY=+1TU;UNTIL=20301231;");
        assert_eq!(text, "FREQ=YEARLY;BYMONTH=11;BYDAY=1TU;UNTIL=20301231");
        assert!(dropped.is_empty(), "{dropped:?}");
    }

    #[test]
    fn each_bad_part_or_value_is_dropped_alone() {
        let (text, dropped) = problems(
            "FREQ=WEEKLY;;COUNT=-1;BYDAY=MO,XX,WE;X-FOO=1;INTERVAL=0;WKST=ZZ;BYMONTHDAY=40;BYSETPOS",
        );
        assert_eq!(text, "FREQ=WEEKLY;BYDAY=MO,WE");
        assert_eq!(
            dropped,
            [
                "rule part 2 is empty (a stray ';')",
                "COUNT=-1 is not a count",
                "BYDAY: \"XX\" is not a weekday such as MO, 1MO or -1FR",
                "unknown rule part \"X-FOO\"",
                "INTERVAL=0 is not between 1 and 65535",
                "WKST=ZZ is not a weekday (MO … SU)",
                "BYMONTHDAY=40 has no valid value (a day of the month (±1-31))",
                "rule part \"BYSETPOS\" has no '='",
            ]
        );
    }

    #[test]
    fn a_part_given_twice_keeps_the_later_one() {
        let (text, dropped) = problems("FREQ=DAILY;COUNT=3;COUNT=5");
        assert_eq!(text, "FREQ=DAILY;COUNT=5");
        assert_eq!(dropped, ["rule part COUNT appears twice"]);
    }
}
