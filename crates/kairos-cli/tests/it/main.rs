//! The `kairos` binary as scripts see it: exit codes, stdout, stderr.

mod caldav;
// A real Radicale from a Python venv (tests/caldav/setup.sh): not under Wine.
#[cfg(unix)]
mod caldav_live;
// Radicale too (over HTTPS with a private CA for one test).
#[cfg(unix)]
mod caldav_edit;
// Sets the real-time clock and reads the daemon's timerfd from /proc.
#[cfg(target_os = "linux")]
mod clock_jump;
// A shell script, a named pipe and signals.
#[cfg(unix)]
mod concurrent;
mod daemon;
mod daemon_runs;
mod import;
mod subscriptions;
mod sync;
mod tasks;
mod upcoming;
mod upgrade;
mod withdraw;
mod workdays;

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// The JSON lines a successful run printed (panics, with its stderr, if
/// it failed).
pub(crate) fn ok_lines(out: &Output) -> Vec<serde_json::Value> {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

fn kairos(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kairos"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn kairos");
    // The child may exit without reading (e.g. a missing file): a broken pipe
    // here is expected and not the thing under test.
    let _ = child.stdin.take().expect("stdin").write_all(stdin);
    child.wait_with_output().expect("wait")
}

const WINDOW: [&str; 4] = [
    "--from",
    "2026-01-01T00:00:00Z",
    "--to",
    "2027-01-01T00:00:00Z",
];

fn query(cmd: &str, ics: &str, window: &[&str]) -> Output {
    let mut args = vec![cmd, "-"];
    args.extend_from_slice(window);
    args.extend_from_slice(&["--tz", "Europe/Berlin"]);
    kairos(&args, ics.as_bytes())
}

fn wrap(body: &str) -> String {
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\n{}\r\nEND:VCALENDAR\r\n",
        body.trim().replace('\n', "\r\n")
    )
}

/// Asserts the contract for bad input: non-zero exit, nothing on stdout, one
/// line on stderr that contains `needle`.
fn assert_clean_failure(out: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "should fail: {err}");
    assert_eq!(
        out.status.code(),
        Some(1),
        "exit code (not a panic's 101): {err}"
    );
    assert!(
        out.stdout.is_empty(),
        "stdout must be empty, got {:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(err.lines().count(), 1, "exactly one stderr line: {err:?}");
    assert!(
        err.contains(needle),
        "stderr {err:?} should mention {needle:?}"
    );
}

#[test]
fn occurrences_json_has_the_contract_fields_in_order() {
    let ics = wrap(
        "BEGIN:VEVENT\nUID:a\nSUMMARY:Hello\\, world\nDTSTART;TZID=America/New_York:20260310T090000\n\
         DTEND;TZID=America/New_York:20260310T100000\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:b\nSUMMARY:Day\nDTSTART;VALUE=DATE:20260310\nRRULE:FREQ=YEARLY;COUNT=2\nEND:VEVENT",
    );
    let out = query("occurrences", &ics, &WINDOW);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let expected = serde_json::json!([
        {"uid": "b", "recurrence_id": "2026-03-10", "summary": "Day", "start": "2026-03-10", "end": null, "all_day": true, "kind": "event"},
        {"uid": "a", "recurrence_id": null, "summary": "Hello, world", "start": "2026-03-10T09:00:00-04:00",
         "end": "2026-03-10T10:00:00-04:00", "all_day": false, "kind": "event"}
    ]);
    assert_eq!(v, expected);
}

#[test]
fn occurrences_tell_tasks_from_events_and_no_tasks_leaves_them_out() {
    let ics = wrap(
        "BEGIN:VEVENT\nUID:ev\nSUMMARY:Meeting\nDTSTART:20260310T090000Z\nEND:VEVENT\n\
         BEGIN:VTODO\nUID:td\nSUMMARY:Report\nDUE:20260310T170000Z\nEND:VTODO\n\
         BEGIN:VTODO\nUID:undated\nSUMMARY:Someday\nEND:VTODO",
    );
    let kinds = |window: &[&str]| -> Vec<(String, String)> {
        let out = query("occurrences", &ics, window);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("json");
        v.iter()
            .map(|o| (o["uid"].to_string(), o["kind"].to_string()))
            .collect()
    };
    let pair = |u: &str, k: &str| (format!("{u:?}"), format!("{k:?}"));
    assert_eq!(kinds(&WINDOW), [pair("ev", "event"), pair("td", "task")]);
    let mut events_only = WINDOW.to_vec();
    events_only.push("--no-tasks");
    assert_eq!(kinds(&events_only), [pair("ev", "event")]);
}

#[test]
fn alarms_json_is_sorted_by_trigger_and_in_utc() {
    let ics = wrap(
        "BEGIN:VEVENT\nUID:m\nSUMMARY:Meet\nDTSTART;TZID=Europe/Berlin:20260310T090000\n\
         BEGIN:VALARM\nACTION:AUDIO\nTRIGGER:-PT10M\nREPEAT:1\nDURATION:PT5M\nEND:VALARM\nEND:VEVENT",
    );
    let out = query("alarms", &ics, &WINDOW);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let expected = serde_json::json!([
        {"uid": "m", "occurrence_start": "2026-03-10T09:00:00+01:00", "trigger": "2026-03-10T07:50:00Z", "action": "AUDIO", "summary": "Meet"},
        {"uid": "m", "occurrence_start": "2026-03-10T09:00:00+01:00", "trigger": "2026-03-10T07:55:00Z", "action": "AUDIO", "summary": "Meet"}
    ]);
    assert_eq!(v, expected);
}

#[test]
fn bad_input_gets_one_clear_line_and_no_output() {
    let ev = |body: &str| wrap(&format!("BEGIN:VEVENT\nUID:x\n{body}\nEND:VEVENT"));
    let cases: Vec<(String, &str)> = vec![
        ("\u{1}\u{2}garbage\u{7f}".to_owned(), "line 1"),
        (
            " folded first\r\n".to_owned(),
            "line 1: a folded continuation",
        ),
        (
            "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:x\r\nEND:VCALENDAR\r\n".to_owned(),
            "line 4: END",
        ),
        (
            "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:x\r\n".to_owned(),
            "never closed",
        ),
        (ev("SUMMARY:no start"), "has no DTSTART"),
        (
            ev("DTSTART:20260101T000000Z\nRRULE:FREQ=FORTNIGHTLY"),
            "line 7: RRULE: unknown FREQ",
        ),
        (ev("DTSTART:2026-01-01"), "line 6: DTSTART"),
        (
            ev("DTSTART:20260101T000000Z\nDTEND:20251231T000000Z"),
            "DTEND is before DTSTART",
        ),
        (
            ev("DTSTART;TZID=Mars/Olympus:20260101T000000"),
            "unknown time zone",
        ),
    ];
    // Without --strict these are read leniently (see
    // `lenient_reads_skip_what_is_broken_with_a_warning_each`).
    let strict: Vec<&str> = WINDOW.iter().copied().chain(["--strict"]).collect();
    for (ics, needle) in cases {
        assert_clean_failure(&query("occurrences", &ics, &strict), needle);
    }
    let not_utf8 = kairos(
        &[
            "occurrences",
            "--strict",
            "-",
            "--from",
            "2026-01-01T00:00:00Z",
            "--to",
            "2027-01-01T00:00:00Z",
        ],
        b"BEGIN:VCALENDAR\n\xff\xfe\n",
    );
    assert_clean_failure(&not_utf8, "line 2: the file is not valid UTF-8");
}

#[test]
fn lenient_reads_skip_what_is_broken_with_a_warning_each() {
    let ics = wrap(
        "BEGIN:VEVENT\nUID:x@y\nSUMMARY:kept\nDTSTART:20260101T090000Z\nDTEND:20260101T080000Z\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:lost\nSUMMARY:no start\nEND:VEVENT",
    );
    for cmd in ["occurrences", "alarms", "export"] {
        let window: &[&str] = if cmd == "export" { &[] } else { &WINDOW };
        let mut args = vec![cmd, "-"];
        args.extend_from_slice(window);
        let out = kairos(&args, ics.as_bytes());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{cmd}: {err}");
        assert_eq!(
            err.lines().collect::<Vec<_>>(),
            [
                "kairos: warning: -: line 8 (VEVENT uid x@y): DTEND: DTEND is before DTSTART: \
                 treated as zero length",
                "kairos: warning: -: line 10 (VEVENT uid lost): VEVENT has no DTSTART (RFC 5545 \
                 requires one for a calendar event): event skipped",
            ],
            "{cmd}"
        );
    }
    let out = query("occurrences", &ics, &WINDOW);
    let v: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v.len(), 1);
    assert_eq!(v[0]["end"], v[0]["start"], "zero length");
    // --strict refuses the same file at its first problem.
    let mut strict = WINDOW.to_vec();
    strict.push("--strict");
    assert_clean_failure(&query("occurrences", &ics, &strict), "line 8: DTEND");
}

#[test]
fn unbounded_and_huge_rules_hit_documented_caps_not_hangs() {
    let secondly =
        wrap("BEGIN:VEVENT\nUID:s\nDTSTART:20260101T000000Z\nRRULE:FREQ=SECONDLY\nEND:VEVENT");
    // A year of seconds is 31.5 million occurrences: refused with the cap named.
    assert_clean_failure(
        &query("occurrences", &secondly, &WINDOW),
        "more than 200000 results",
    );
    // A 10,000-year window of a yearly rule is fine: 10,000 results.
    let yearly =
        wrap("BEGIN:VEVENT\nUID:y\nDTSTART:20000101T000000Z\nRRULE:FREQ=YEARLY\nEND:VEVENT");
    let out = query(
        "occurrences",
        &yearly,
        &[
            "--from",
            "0001-01-01T00:00:00Z",
            "--to",
            "9999-12-31T00:00:00Z",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v.len(), 8000);
    // COUNT of 10^9 far before the window: the step cap, named.
    let counted = wrap(
        "BEGIN:VEVENT\nUID:c\nDTSTART:19000101T000000Z\nRRULE:FREQ=MINUTELY;COUNT=1000000000\nEND:VEVENT",
    );
    assert_clean_failure(&query("occurrences", &counted, &WINDOW), "steps");
}

#[test]
fn window_arguments_are_checked() {
    let ics = wrap("BEGIN:VEVENT\nUID:a\nDTSTART:20260101T000000Z\nEND:VEVENT");
    assert_clean_failure(
        &query(
            "occurrences",
            &ics,
            &["--from", "tomorrow", "--to", "2027-01-01T00:00:00Z"],
        ),
        "--from",
    );
    assert_clean_failure(
        &query(
            "occurrences",
            &ics,
            &[
                "--from",
                "2027-01-01T00:00:00Z",
                "--to",
                "2026-01-01T00:00:00Z",
            ],
        ),
        "not before",
    );
    let out = kairos(
        &[
            "occurrences",
            "/nonexistent.ics",
            "--from",
            "2026-01-01T00:00:00Z",
            "--to",
            "2027-01-01T00:00:00Z",
        ],
        b"",
    );
    assert_clean_failure(&out, "cannot open /nonexistent.ics");
}

#[test]
fn export_round_trips_and_keeps_x_properties() {
    let ics = wrap(
        "X-WR-CALNAME:Work\nBEGIN:VEVENT\nUID:r\nDTSTART;TZID=Europe/Berlin:20260310T090000\nRRULE:FREQ=WEEKLY;COUNT=3\n\
         X-MOZ-GENERATION:4\nSUMMARY:Round trip\nBEGIN:VALARM\nUID:al-1\nACTION:DISPLAY\nTRIGGER:-PT5M\nX-WR-ALARMUID:al-1\nEND:VALARM\nEND:VEVENT",
    );
    let out = kairos(&["export", "-"], ics.as_bytes());
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).expect("utf8");
    for needle in [
        "X-MOZ-GENERATION:4",
        "X-WR-ALARMUID:al-1",
        "X-WR-CALNAME:Work",
        "RRULE:FREQ=WEEKLY;COUNT=3",
    ] {
        assert!(text.contains(needle), "{needle} missing from\n{text}");
    }
    let before = query("occurrences", &ics, &WINDOW);
    let after = query("occurrences", &text, &WINDOW);
    assert_eq!(
        String::from_utf8_lossy(&before.stdout),
        String::from_utf8_lossy(&after.stdout)
    );
    assert_eq!(
        serde_json::from_slice::<Vec<serde_json::Value>>(&after.stdout)
            .expect("json")
            .len(),
        3
    );
}

#[test]
fn agenda_prints_days_in_local_time() {
    let ics = wrap(
        "BEGIN:VEVENT\nUID:a\nSUMMARY:Lunch\nLOCATION:Cafe\nDTSTART:20260310T110000Z\nDTEND:20260310T120000Z\nEND:VEVENT",
    );
    let out = kairos(
        &[
            "agenda",
            "-",
            "--from",
            "2026-03-09",
            "--days",
            "3",
            "--tz",
            "Asia/Tokyo",
        ],
        ics.as_bytes(),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text, "Tue 2026-03-10\n  20:00–21:00  Lunch  @ Cafe\n");
}

#[test]
fn next_prints_the_first_trigger_at_or_after_the_moment_or_null() {
    let ics = wrap(
        "BEGIN:VEVENT\nUID:p\nSUMMARY:Pill\nDTSTART:20260101T080000Z\nRRULE:FREQ=DAILY;COUNT=3\n\
         BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:PT0S\nEND:VALARM\nEND:VEVENT",
    );
    let out = kairos(
        &["next", "-", "--after", "2026-01-02T08:00:01Z"],
        ics.as_bytes(),
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["trigger"], "2026-01-03T08:00:00Z");
    assert_eq!(v["summary"], "Pill");
    let out = kairos(
        &["next", "-", "--after", "2026-01-03T08:00:01Z"],
        ics.as_bytes(),
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "null");
}
