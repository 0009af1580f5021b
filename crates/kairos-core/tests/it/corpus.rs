//! Replays the committed fuzz corpus (`fuzz/corpus/<target>/`) through the
//! same checks the fuzz targets run (`kairos_core::fuzzing`), so every input
//! that once found a bug, and every input that reached new code, stays tested
//! by a plain `cargo test` on stable. See fuzz/README.md.

use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chrono_tz::Tz;
use kairos_core::fuzzing::{check_expand, check_parse};
use kairos_core::{Error, Limits, alarms, ics};

use super::support::{cal, t, wrap};

/// One input may take this long in a debug build before the test calls it a
/// hang (the fuzzer allows 10 s in an optimised build).
const SLOW: Duration = Duration::from_secs(60);

fn corpus_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus")
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let entries = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read the fuzz corpus {}: {e}", dir.display()));
    let mut out: Vec<PathBuf> = entries
        .map(|e| {
            e.unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .path()
        })
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    out
}

/// Runs `check` on every file of `fuzz/corpus/<target>/`, returning how many
/// there were and a line for each failure, panic or hang.
fn replay(target: &str, check: fn(&[u8]) -> Result<(), String>) -> (usize, Vec<String>) {
    let dir = corpus_root().join(target);
    let inputs = files(&dir);
    let mut failures = Vec::new();
    for path in &inputs {
        let data = fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let started = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| check(&data)));
        let name = format!(
            "{target}/{}",
            path.file_name().unwrap_or_default().to_string_lossy()
        );
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(msg)) => failures.push(format!("{name}: {msg}")),
            Err(_) => failures.push(format!("{name}: panicked (message above)")),
        }
        if started.elapsed() > SLOW {
            failures.push(format!("{name}: took {:?}", started.elapsed()));
        }
    }
    (inputs.len(), failures)
}

#[test]
fn every_fuzz_corpus_input_passes_its_target_checks() {
    let root = corpus_root();
    let mut targets: Vec<String> = fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("cannot read the fuzz corpus {}: {e}", root.display()))
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        // `decode` (the sync protocol's decoder) is replayed by
        // kairos-proto's own tests (tests/it/corpus.rs there).
        .filter(|t| t != "decode")
        .collect();
    targets.sort();
    assert_eq!(
        targets,
        ["expand", "parse"],
        "each corpus directory needs a check here, and each check a corpus"
    );
    let mut failures = Vec::new();
    for (target, check) in [
        ("parse", check_parse as fn(&[u8]) -> Result<(), String>),
        ("expand", check_expand),
    ] {
        let (count, failed) = replay(target, check);
        assert!(
            count > 0,
            "fuzz/corpus/{target} is empty: the replay would test nothing"
        );
        failures.extend(failed);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// One test per bug the fuzzers found (fuzz/README.md has the details); the
// minimised inputs are also in the corpus, under `bug-*` names.

#[test]
fn absolute_trigger_outside_years_0_to_9999_in_utc_is_rejected() {
    // Tokyo's midnight on 0000-01-01 is in the year -1 in UTC, which the
    // export could not write back as a DATE-TIME.
    let text = wrap(
        "BEGIN:VEVENT\nUID:a\nDTSTART:20250101T000000Z\nBEGIN:VALARM\nACTION:DISPLAY\n\
         TRIGGER;VALUE=DATE-TIME;TZID=Asia/Tokyo:00000101T000000\nEND:VALARM\nEND:VEVENT",
    );
    let err = ics::parse_calendar(text.as_bytes(), &Limits::default()).expect_err("rejected");
    assert!(err.to_string().contains("TRIGGER"), "{err}");
}

#[test]
fn alarm_repeats_reaching_millions_of_years_do_not_overflow() {
    let c = cal(&wrap(
        "BEGIN:VEVENT\nUID:a\nDTSTART:20250101T000000Z\nBEGIN:VALARM\nACTION:DISPLAY\n\
         TRIGGER:P1D\nREPEAT:1000\nDURATION:P9999999D\nEND:VALARM\nEND:VEVENT",
    ));
    let (from, to) = (t("2025-01-01T00:00:00Z"), t("2027-01-01T00:00:00Z"));
    let hits = alarms::alarms(&c, from, to, Tz::UTC, &Limits::default()).expect("alarms");
    assert_eq!(hits.len(), 1, "only the first trigger is in the window");
    let next = alarms::next_alarm(&c, from, Tz::UTC, &Limits::default()).expect("next");
    assert_eq!(next.map(|h| h.trigger), Some(t("2025-01-02T00:00:00Z")));
}

#[test]
fn alarm_repeats_hit_max_results_before_memory_runs_out() {
    // 1,001 triggers per occurrence: the limit must be checked per occurrence.
    let c = cal(&wrap(
        "BEGIN:VEVENT\nUID:a\nDTSTART:20250101T000000Z\nRRULE:FREQ=MINUTELY;INTERVAL=6\n\
         BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:PT0S\nREPEAT:1000\nDURATION:PT1S\n\
         END:VALARM\nEND:VEVENT",
    ));
    let limits = Limits {
        max_results: 5_000,
        ..Limits::default()
    };
    let got = alarms::alarms(
        &c,
        t("2025-01-01T00:00:00Z"),
        t("2026-01-01T00:00:00Z"),
        Tz::UTC,
        &limits,
    );
    assert!(matches!(got, Err(Error::Limit(_))), "{got:?}");
}

#[test]
fn a_series_without_alarms_is_not_expanded_for_alarm_queries() {
    // This rule needs far more steps than the budget to reach 2025: occurrence
    // queries say so, but alarm queries have nothing to expand it for.
    let c = cal(&wrap(
        "BEGIN:VEVENT\nUID:count\nDTSTART;TZID=Europe/Berlin:19700101T000000\n\
         RRULE:FREQ=MINUTELY;COUNT=1000000000\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:b\nDTSTART:20250301T090000Z\nBEGIN:VALARM\nACTION:DISPLAY\n\
         TRIGGER:-PT5M\nEND:VALARM\nEND:VEVENT",
    ));
    let limits = Limits {
        max_steps_per_event: 10_000,
        ..Limits::default()
    };
    let (from, to) = (t("2025-01-01T00:00:00Z"), t("2027-01-01T00:00:00Z"));
    let hits = alarms::alarms(&c, from, to, Tz::UTC, &limits).expect("alarms");
    assert_eq!(hits.len(), 1);
    let next = alarms::next_alarm(&c, from, Tz::UTC, &limits).expect("next");
    assert_eq!(next.map(|h| h.trigger), Some(t("2025-03-01T08:55:00Z")));
}
