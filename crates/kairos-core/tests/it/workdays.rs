//! Working-day rules (`X-KAIROS-WORKDAYS`, issue #11 §3): "N working days
//! before at HH:MM" and "shift to the previous/next working day", across the
//! Berlin change to summer time (Sunday 2026-03-29), holidays, other weeks,
//! and rules this version cannot read.

use std::collections::BTreeSet;

use chrono::NaiveDate;
use chrono_tz::Tz;
use kairos_core::workdays::{self, Direction, WorkRule, WorkTime};
use kairos_core::{Limits, alarms, ics};

use super::lenient::lenient;
use super::support::{cal, t, wrap};

/// An event on Monday 2026-03-30 09:00 Berlin (after the DST weekend) with
/// one alarm carrying `rule`.
fn monday(trigger: &str, rule: &str) -> String {
    let rule = if rule.is_empty() {
        String::new()
    } else {
        format!("{rule}\n")
    };
    wrap(&format!(
        "BEGIN:VEVENT\nUID:m\nDTSTART;TZID=Europe/Berlin:20260330T090000\nSUMMARY:Report\n\
         BEGIN:VALARM\nACTION:DISPLAY\nDESCRIPTION:r\nTRIGGER:{trigger}\n{rule}END:VALARM\n\
         END:VEVENT"
    ))
}

fn d(s: &str) -> NaiveDate {
    s.parse().expect("a date")
}

fn holidays(dates: &[&str]) -> WorkTime {
    WorkTime {
        holidays: dates.iter().map(|s| d(s)).collect(),
        ..WorkTime::default()
    }
}

/// The triggers of `text` in `[from, to)` under `work`.
fn fired(text: &str, from: &str, to: &str, work: &WorkTime) -> Vec<String> {
    let c = cal(text);
    alarms::alarms_with(&c, t(from), t(to), Tz::UTC, &Limits::default(), work)
        .unwrap_or_else(|e| panic!("{e}"))
        .iter()
        .map(|h| format!("{} {}", h.key("cal"), h.trigger.to_rfc3339()))
        .collect()
}

const WIDE: (&str, &str) = ("2026-03-01T00:00:00Z", "2026-05-01T00:00:00Z");

#[test]
fn one_working_day_before_skips_the_dst_weekend_at_winter_time() {
    let text = monday("-PT15M", "X-KAIROS-WORKDAYS:v=1;before=1;at=09:00");
    // Friday 27 March 09:00 is still CET (+01:00): 08:00Z, not 07:00Z.
    assert_eq!(
        fired(&text, WIDE.0, WIDE.1, &WorkTime::default()),
        ["cal/m/2026-03-30T07:00:00Z/#0 2026-03-27T08:00:00+00:00"]
    );
    // A holiday on that Friday: Thursday.
    assert_eq!(
        fired(&text, WIDE.0, WIDE.1, &holidays(&["2026-03-27"])),
        ["cal/m/2026-03-30T07:00:00Z/#0 2026-03-26T08:00:00+00:00"]
    );
}

#[test]
fn the_moved_instant_decides_the_window_and_the_key_is_the_plain_one() {
    let text = monday("-PT15M", "X-KAIROS-WORKDAYS:v=1;before=1;at=09:00");
    let plain = monday("-PT15M", "");
    // The plain trigger (30 March 06:45Z) is far outside this window.
    assert_eq!(
        fired(
            &text,
            "2026-03-27T00:00:00Z",
            "2026-03-28T00:00:00Z",
            &WorkTime::default()
        ),
        ["cal/m/2026-03-30T07:00:00Z/#0 2026-03-27T08:00:00+00:00"]
    );
    assert!(
        fired(
            &text,
            "2026-03-30T00:00:00Z",
            "2026-03-31T00:00:00Z",
            &WorkTime::default()
        )
        .is_empty()
    );
    assert_eq!(
        fired(&plain, WIDE.0, WIDE.1, &WorkTime::default()),
        ["cal/m/2026-03-30T07:00:00Z/#0 2026-03-30T06:45:00+00:00"]
    );
}

#[test]
fn shift_previous_moves_a_sunday_trigger_to_friday_at_the_same_wall_time() {
    // One day before: Sunday 29 March 09:00 CEST.
    let text = monday("-P1D", "X-KAIROS-WORKDAYS:v=1;shift=previous");
    assert_eq!(
        fired(&text, WIDE.0, WIDE.1, &WorkTime::default()),
        ["cal/m/2026-03-30T07:00:00Z/#0 2026-03-27T08:00:00+00:00"]
    );
    assert_eq!(
        fired(&text, WIDE.0, WIDE.1, &holidays(&["2026-03-27"])),
        ["cal/m/2026-03-30T07:00:00Z/#0 2026-03-26T08:00:00+00:00"]
    );
    // A trigger on a working day stays where it is.
    let tuesday = monday("PT0S", "X-KAIROS-WORKDAYS:v=1;shift=previous");
    assert_eq!(
        fired(&tuesday, WIDE.0, WIDE.1, &WorkTime::default()),
        ["cal/m/2026-03-30T07:00:00Z/#0 2026-03-30T07:00:00+00:00"]
    );
}

#[test]
fn shift_next_into_the_dst_gap_of_a_sunday_to_thursday_week_uses_the_gap_rule() {
    // Saturday 28 March 02:30 Berlin; Sunday 29 March 02:30 does not exist.
    let text = wrap(
        "BEGIN:VEVENT\nUID:s\nDTSTART;TZID=Europe/Berlin:20260328T023000\n\
         BEGIN:VALARM\nACTION:DISPLAY\nDESCRIPTION:r\nTRIGGER:PT0S\n\
         X-KAIROS-WORKDAYS:v=1;shift=next\nEND:VALARM\nEND:VEVENT",
    );
    let sun_thu = WorkTime {
        week: workdays::parse_week("sun,mon,tue,wed,thu").expect("valid"),
        holidays: BTreeSet::new(),
    };
    // §3.3.5: read with the offset before the gap (+01:00) → 01:30Z.
    assert_eq!(
        fired(&text, WIDE.0, WIDE.1, &sun_thu),
        ["cal/s/2026-03-28T01:30:00Z/#0 2026-03-29T01:30:00+00:00"]
    );
    // Monday to Friday: Monday 30 March 02:30 CEST.
    assert_eq!(
        fired(&text, WIDE.0, WIDE.1, &WorkTime::default()),
        ["cal/s/2026-03-28T01:30:00Z/#0 2026-03-30T00:30:00+00:00"]
    );
}

#[test]
fn a_task_counts_working_days_back_from_its_due_date() {
    let text = wrap(
        "BEGIN:VTODO\nUID:t\nDTSTART;TZID=Europe/Berlin:20260302T090000\n\
         DUE;TZID=Europe/Berlin:20260406T170000\n\
         BEGIN:VALARM\nACTION:DISPLAY\nDESCRIPTION:r\nTRIGGER:PT0S\n\
         X-KAIROS-WORKDAYS:v=1;before=2;at=10:30\nEND:VALARM\nEND:VTODO",
    );
    // Due Monday 6 April (Easter Monday, a holiday here): two working days
    // before are Thursday 2 and Wednesday 1 April (Good Friday off too).
    assert_eq!(
        fired(
            &text,
            WIDE.0,
            WIDE.1,
            &holidays(&["2026-04-03", "2026-04-06"])
        ),
        ["cal/t/2026-03-02T08:00:00Z/#0 2026-04-01T08:30:00+00:00"]
    );
}

#[test]
fn an_unknown_version_is_ignored_with_a_warning_and_kept_on_export() {
    let text = monday("-PT15M", "X-KAIROS-WORKDAYS:v=2;before=1;at=09:00;wait=yes");
    let (c, warnings) = lenient(&text);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("v=2 is not known") && warnings[0].contains("plain TRIGGER"),
        "{warnings:?}"
    );
    assert_eq!(
        fired(&text, WIDE.0, WIDE.1, &WorkTime::default()),
        ["cal/m/2026-03-30T07:00:00Z/#0 2026-03-30T06:45:00+00:00"]
    );
    let out = ics::write_calendar(&c, chrono::DateTime::UNIX_EPOCH);
    assert!(
        out.contains("X-KAIROS-WORKDAYS:v=2;before=1;at=09:00;wait=yes\r\n"),
        "{out}"
    );
}

#[test]
fn a_malformed_rule_is_ignored_with_a_warning_naming_it() {
    for (rule, says) in [
        ("v=1;before=x;at=09:00", "before=x"),
        ("v=1;before=1;at=25:00", "at=25:00"),
        ("v=1;before=1", "needs at=HH:MM"),
        ("v=1;shift=sideways", "shift=sideways"),
        ("before=1;at=09:00", "no version"),
        ("v=1;shift=next;shift=previous", "twice"),
    ] {
        let text = monday("-PT15M", &format!("X-KAIROS-WORKDAYS:{rule}"));
        let (_, warnings) = lenient(&text);
        assert!(
            warnings.len() == 1 && warnings[0].contains(says),
            "{rule}: {warnings:?}"
        );
        assert_eq!(
            fired(&text, WIDE.0, WIDE.1, &WorkTime::default()),
            ["cal/m/2026-03-30T07:00:00Z/#0 2026-03-30T06:45:00+00:00"],
            "{rule}"
        );
    }
}

#[test]
fn a_week_without_working_days_falls_back_to_the_plain_trigger() {
    let text = monday("-PT15M", "X-KAIROS-WORKDAYS:v=1;before=1;at=09:00");
    let never = WorkTime {
        week: 0,
        holidays: BTreeSet::new(),
    };
    assert_eq!(
        fired(&text, WIDE.0, WIDE.1, &never),
        ["cal/m/2026-03-30T07:00:00Z/#0 2026-03-30T06:45:00+00:00"]
    );
    assert_eq!(never.n_before(d("2026-03-30"), 1), None);
    assert_eq!(never.shift(d("2026-03-30"), Direction::Next), None);
}

#[test]
fn rules_and_weeks_parse_and_name_what_is_wrong() {
    assert_eq!(
        workdays::parse("v=1;before=3;at=07:05"),
        Ok(WorkRule::Before {
            days: 3,
            at: chrono::NaiveTime::from_hms_opt(7, 5, 0).expect("valid")
        })
    );
    assert_eq!(
        workdays::parse(" V=1 ; SHIFT=Next "),
        Ok(WorkRule::Shift(Direction::Next))
    );
    assert!(
        workdays::parse("v=1;before=400;at=09:00")
            .is_err_and(|e| e.contains("before=400") && e.contains("366"))
    );
    assert_eq!(workdays::parse_week("Mon,tuesday,fri"), Ok(0b1_0011));
    assert_eq!(workdays::week_names(0b100_1111), "mon,tue,wed,thu,sun");
    assert!(workdays::parse_week("mon,funday").is_err_and(|e| e.contains("\"funday\"")));
    assert!(workdays::parse_week("").is_err_and(|e| e.contains("at least one")));
}

#[test]
fn a_holiday_feed_declares_each_day_of_its_all_day_events_only() {
    let feed = cal(&wrap(
        "BEGIN:VEVENT\nUID:easter\nDTSTART;VALUE=DATE:20260403\nDTEND;VALUE=DATE:20260407\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:may\nDTSTART;VALUE=DATE:20260501\nRRULE:FREQ=YEARLY\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:party\nDTSTART:20260410T180000Z\nEND:VEVENT",
    ));
    let got = workdays::holidays(
        &feed,
        t("2026-01-01T00:00:00Z"),
        t("2028-01-01T00:00:00Z"),
        &Limits::default(),
    )
    .expect("expands");
    let want: BTreeSet<NaiveDate> = [
        "2026-04-03",
        "2026-04-04",
        "2026-04-05",
        "2026-04-06",
        "2026-05-01",
        "2027-05-01",
    ]
    .iter()
    .map(|s| d(s))
    .collect();
    assert_eq!(got, want);
}
