//! What the component tree may look like, for lenient reading to tell a
//! missing or misspelt `END` from a component nested on purpose.
//!
//! Only what RFC 5545 plainly forbids is acted on: a calendar component
//! (`VEVENT`, `VTODO`, …) inside anything but a `VCALENDAR`, a `VCALENDAR`
//! inside anything, a `VALARM` inside a `VALARM`, a time zone observance
//! inside an observance. Anything else (`X-` components, RFC 9073's
//! `VLOCATION` …) nests as written.

/// Components that only a `VCALENDAR` may hold (RFC 5545 §3.6, RFC 7953).
const CALENDAR_PARTS: [&str; 6] = [
    "VEVENT",
    "VTODO",
    "VJOURNAL",
    "VFREEBUSY",
    "VTIMEZONE",
    "VAVAILABILITY",
];

/// Observances of a `VTIMEZONE`.
const OBSERVANCES: [&str; 2] = ["STANDARD", "DAYLIGHT"];

/// Can `child` stand directly inside `parent` (`None`: at the top level)?
pub(crate) fn can_hold(parent: Option<&str>, child: &str) -> bool {
    match parent {
        None => true,
        Some(_) if child == "VCALENDAR" => false,
        Some(parent) if CALENDAR_PARTS.contains(&child) => parent == "VCALENDAR",
        Some("VALARM") => child != "VALARM",
        Some(p) if OBSERVANCES.contains(&p) => !OBSERVANCES.contains(&child),
        Some(_) => true,
    }
}

/// Is `written` a misspelling of `open` (`END:VTOOD` for `VTODO`): at most
/// two letters added, dropped, changed or swapped, in names long enough that
/// two letters cannot turn one real component name into another?
pub(crate) fn misspelt(written: &str, open: &str) -> bool {
    let (a, b) = (written.as_bytes(), open.as_bytes());
    if a == b || a.len().min(b.len()) < 5 {
        return false;
    }
    distance(a, b) <= 2
        && !CALENDAR_PARTS
            .iter()
            .chain(&OBSERVANCES)
            .chain(&["VCALENDAR", "VALARM"])
            .any(|real| real.as_bytes() == a)
}

/// Optimal string alignment distance (Levenshtein plus swaps of two
/// neighbours), over bytes: component names are ASCII.
fn distance(a: &[u8], b: &[u8]) -> usize {
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for i in 0..=a.len() {
        for j in 0..=b.len() {
            d[i * w + j] = if i == 0 || j == 0 {
                i.max(j)
            } else {
                let cost = usize::from(a[i - 1] != b[j - 1]);
                let mut best = (d[(i - 1) * w + j] + 1)
                    .min(d[i * w + j - 1] + 1)
                    .min(d[(i - 1) * w + j - 1] + cost);
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    best = best.min(d[(i - 2) * w + j - 2] + 1);
                }
                best
            };
        }
    }
    d[a.len() * w + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_components_stand_only_in_a_calendar() {
        assert!(can_hold(Some("VCALENDAR"), "VEVENT"));
        assert!(!can_hold(Some("VTODO"), "VEVENT"));
        assert!(!can_hold(Some("VEVENT"), "VEVENT"));
        assert!(!can_hold(Some("VALARM"), "VTIMEZONE"));
        assert!(!can_hold(Some("VEVENT"), "VCALENDAR"));
        assert!(!can_hold(Some("VALARM"), "VALARM"));
        assert!(!can_hold(Some("STANDARD"), "DAYLIGHT"));
        assert!(can_hold(Some("VEVENT"), "VALARM"));
        assert!(can_hold(Some("VEVENT"), "X-THING"));
        assert!(can_hold(Some("VALARM"), "VLOCATION"));
        assert!(can_hold(Some("VTIMEZONE"), "STANDARD"));
        assert!(can_hold(None, "VEVENT"));
    }

    #[test]
    fn misspellings_are_near_the_open_name_and_not_another_real_one() {
        assert!(misspelt("VTOOD", "VTODO"));
        assert!(misspelt("VEVNT", "VEVENT"));
        assert!(misspelt("EVENT", "VEVENT"));
        assert!(misspelt("VALRAM", "VALARM"));
        assert!(!misspelt("VTODO", "VTODO"));
        assert!(!misspelt("VEVENT", "VTODO"));
        assert!(!misspelt("VALARM", "VEVENT"));
        assert!(!misspelt("XYZZY", "VTODO"));
        assert!(!misspelt("STANDARD", "DAYLIGHT"));
    }
}
