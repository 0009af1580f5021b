//! Every `RRULE` example of RFC 5545 §3.8.5.3, data-driven.
//!
//! Each case is a pair in `tests/data/rfc5545/`: `NN-name.ics` (the example's
//! `DTSTART`/`RRULE`/`EXDATE` exactly as the RFC writes them, folds included)
//! and `NN-name.expected` (one occurrence per line, New York local time with its
//! offset; `#` lines quote the RFC's own result list). The expected lines are a
//! hand transcription of the RFC's results, never output of this crate, so
//! unlike the corpus snapshots there is deliberately no "update" switch.
//!
//! Where the RFC lists only the start of an unbounded series, the query window
//! ends just after the last listed occurrence. Every case is also queried from
//! the middle of its list, which exercises starting an expansion part-way
//! through a series.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Duration, Utc};
use kairos_core::model::Calendar;
use kairos_core::{Limits, ics, query};

/// The RFC has 39 examples; three are given in two equivalent forms ("… or …"),
/// each its own case, and one (every 3 hours) is also checked with the `UNTIL`
/// its title and listed result imply: 43 files. A lost file fails here.
const CASES: usize = 43;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rfc5545")
}

/// One example: its input text and the RFC's occurrences.
struct Case {
    ics: String,
    expected: Vec<String>,
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// The case names in the data directory, sorted: every stem of a `.ics` or
/// `.expected` file, so that a lost half of a pair still names its case.
fn names() -> Vec<String> {
    let dir = data_dir();
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .filter_map(|f| {
            f.strip_suffix(".ics")
                .or_else(|| f.strip_suffix(".expected"))
                .map(str::to_owned)
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Reads one case; a missing half of the pair is an error, not a skip.
fn load(name: &str) -> Result<Case, String> {
    let dir = data_dir();
    let ics = read(&dir.join(format!("{name}.ics")))?;
    let expected = read(&dir.join(format!("{name}.expected")))?
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect();
    Ok(Case { ics, expected })
}

fn instant(s: &str) -> Result<DateTime<Utc>, String> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| format!("expected value {s:?} is not RFC 3339: {e}"))
}

fn starts(cal: &Calendar, from: DateTime<Utc>, to: DateTime<Utc>) -> Result<Vec<String>, String> {
    let tz = chrono_tz::UTC; // nothing floats in these cases
    query::occurrences(cal, from, to, tz, &Limits::default())
        .map(|v| v.iter().map(|o| o.start.display(tz)).collect())
        .map_err(|e| format!("query failed: {e}"))
}

/// Lines only in `want` (`-`) or only in `got` (`+`), in order, with the counts.
fn diff(want: &[String], got: &[String]) -> String {
    let mut out = format!("  expected {} occurrences, got {}\n", want.len(), got.len());
    for w in want.iter().filter(|w| !got.contains(w)) {
        let _ = writeln!(out, "  - {w}   (the RFC lists it; we do not produce it)");
    }
    for g in got.iter().filter(|g| !want.contains(g)) {
        let _ = writeln!(out, "  + {g}   (we produce it; the RFC does not list it)");
    }
    if want.len() == got.len() && out.lines().count() == 1 {
        out.push_str("  (same values, different order)\n");
    }
    out
}

/// Checks one case; `Err` carries a readable report.
fn check(case: &Case) -> Result<(), String> {
    let cal = ics::parse_calendar(case.ics.as_bytes(), &Limits::default())
        .map_err(|e| format!("parse failed: {e}"))?;
    let (Some(first), Some(last)) = (case.expected.first(), case.expected.last()) else {
        return Err("the .expected file lists no occurrences".into());
    };
    let bounded = cal.events.iter().all(|e| {
        e.rrules
            .iter()
            .all(|r| r.count.is_some() || r.until.is_some())
    });
    // A bounded rule must stop by itself: look far past its end. An unbounded
    // one is compared up to the last occurrence the RFC lists.
    let from = instant(first)? - Duration::days(400);
    let to = if bounded {
        instant(last)? + Duration::days(3650)
    } else {
        instant(last)? + Duration::seconds(1)
    };
    let got = starts(&cal, from, to)?;
    if got != case.expected {
        return Err(format!(
            "window {from} .. {to}:\n{}",
            diff(&case.expected, &got)
        ));
    }
    let mid = case.expected.len() / 2;
    let got = starts(&cal, instant(&case.expected[mid])?, to)?;
    if got != case.expected[mid..] {
        return Err(format!(
            "query from the middle of the series ({}):\n{}",
            case.expected[mid],
            diff(&case.expected[mid..], &got)
        ));
    }
    Ok(())
}

#[test]
fn every_rfc5545_rrule_example_expands_as_the_rfc_lists() {
    let names = names();
    let failures: Vec<String> = names
        .iter()
        .filter_map(|n| {
            load(n)
                .and_then(|c| check(&c))
                .err()
                .map(|e| format!("{n}:\n{e}"))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} RFC 5545 examples differ:\n\n{}",
        failures.len(),
        names.len(),
        failures.join("\n")
    );
    assert_eq!(names.len(), CASES, "the number of RFC 5545 cases changed");
}

#[test]
fn case_files_are_numbered_without_gaps() {
    for (i, name) in names().iter().enumerate() {
        let want = format!("{:02}-", i + 1);
        assert!(
            name.starts_with(&want),
            "case {name:?} should start with {want:?}"
        );
    }
}
