//! Files as real producers write them, one per class of problem
//! (`tests/corpus-real/*.ics`; each file's header comment in
//! `tests/corpus-real/README.md` says what it imitates). Each is read
//! leniently and the result compared with `NAME.expected`: the strict
//! outcome (and its warnings), the warnings, the occurrences and alarm triggers in 2026, and
//! that the export reads back strictly. `UPDATE_EXPECT=1 cargo test -p
//! kairos-core corpus_real` rewrites the expectations; review the diff.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use chrono_tz::Tz;
use kairos_core::{Limits, alarms, ics, query};

use super::support::t;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus-real")
}

/// Occurrences and triggers shown per file; the rest are counted.
const SHOWN: usize = 12;

fn more(out: &mut String, total: usize) {
    if total > SHOWN {
        let _ = writeln!(out, "  … {} more ({total} in all)", total - SHOWN);
    }
}

/// What a file reads as, in the snapshot's text form.
fn describe(bytes: &[u8]) -> String {
    let limits = Limits::default();
    let mut out = String::new();
    match ics::parse_calendar_strict(bytes, &limits) {
        Ok((c, warnings)) => {
            let _ = writeln!(out, "strict: ok, {} events", c.events.len());
            for w in &warnings {
                let _ = writeln!(out, "  strict warning: {w}");
            }
        }
        Err(e) => {
            let _ = writeln!(out, "strict: error: {e}");
        }
    }
    let (cal, warnings) = match ics::parse_calendar_lenient(bytes, &limits) {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(out, "lenient: error: {e}");
            return out;
        }
    };
    let _ = writeln!(
        out,
        "lenient: {} events, {} warnings",
        cal.events.len(),
        warnings.len()
    );
    for w in &warnings {
        let _ = writeln!(out, "  {w}");
    }
    let (from, to, tz) = (
        t("2026-01-01T00:00:00Z"),
        t("2027-01-01T00:00:00Z"),
        Tz::Europe__Berlin,
    );
    let _ = writeln!(out, "occurrences in 2026 (floating in Europe/Berlin):");
    match query::occurrences(&cal, from, to, tz, &limits) {
        Ok(occ) => {
            for o in occ.iter().take(SHOWN) {
                let end = o.end.map(|e| e.display(tz)).unwrap_or_else(|| "-".into());
                let what = o.event.summary.as_deref().unwrap_or("(no title)");
                let _ = writeln!(out, "  {} → {end}  {what}", o.start.display(tz));
            }
            more(&mut out, occ.len());
        }
        Err(e) => {
            let _ = writeln!(out, "  error: {e}");
        }
    }
    let _ = writeln!(out, "alarm triggers in 2026:");
    match alarms::alarms(&cal, from, to, tz, &limits) {
        Ok(hits) => {
            for h in hits.iter().take(SHOWN) {
                let what = h
                    .occurrence
                    .event
                    .summary
                    .as_deref()
                    .unwrap_or("(no title)");
                let trigger = h.trigger.format("%Y-%m-%dT%H:%M:%SZ");
                let _ = writeln!(out, "  {trigger} {} {what}", h.alarm.action);
            }
            more(&mut out, hits.len());
        }
        Err(e) => {
            let _ = writeln!(out, "  error: {e}");
        }
    }
    let text = ics::write_calendar(&cal, t("2026-01-01T00:00:00Z"));
    let _ = match ics::parse_calendar(text.as_bytes(), &limits) {
        Ok(again) => writeln!(
            out,
            "export: reads back strictly, {} events",
            again.events.len()
        ),
        Err(e) => writeln!(out, "export: does not read back: {e}"),
    };
    out
}

#[test]
fn every_real_world_file_reads_as_expected() {
    let mut names: Vec<String> = std::fs::read_dir(dir())
        .unwrap_or_else(|e| panic!("{}: {e}", dir().display()))
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .filter_map(|f| f.strip_suffix(".ics").map(str::to_owned))
        .collect();
    names.sort();
    assert!(names.len() >= 8, "the corpus lost files: {names:?}");
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut failed = Vec::new();
    for name in &names {
        let bytes = std::fs::read(dir().join(format!("{name}.ics")))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let got = describe(&bytes);
        let path = dir().join(format!("{name}.expected"));
        if update {
            std::fs::write(&path, &got).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            continue;
        }
        let want = std::fs::read_to_string(&path).unwrap_or_default();
        if got != want {
            failed.push(format!("--- {name}.expected\n{want}\n+++ got\n{got}"));
        }
        assert!(
            got.contains("export: reads back strictly"),
            "{name}:\n{got}"
        );
    }
    assert!(
        failed.is_empty(),
        "{}\n(UPDATE_EXPECT=1 rewrites the expectations)",
        failed.join("\n")
    );
}
