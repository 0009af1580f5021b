//! Property tests of invariants that must hold for any rule: expansion is sorted
//! and unique, a window deep into a series (where rules are re-anchored) agrees
//! with walking the series from its start, instance keys do not depend on the
//! window, and export → import keeps every occurrence.

use chrono::Utc;
use chrono_tz::Tz;
use kairos_core::{Limits, alarms, ics, query};
use proptest::prelude::*;

use super::support::{cal, t, wrap};

fn rule() -> impl Strategy<Value = String> {
    let freq = proptest::sample::select(vec![
        "SECONDLY", "MINUTELY", "HOURLY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY",
    ]);
    let days = proptest::sample::subsequence(vec!["MO", "TU", "WE", "TH", "FR", "SA", "SU"], 0..4);
    let ord = prop_oneof![Just(""), Just("1"), Just("-1"), Just("2")];
    let monthday = proptest::sample::subsequence(vec![1, 15, 28, 29, 30, 31, -1], 0..3);
    let months = proptest::sample::subsequence(vec![1, 2, 3, 6, 10, 12], 0..3);
    let setpos = prop_oneof![Just(None), Just(Some(1)), Just(Some(-1))];
    (freq, 1u32..4, days, ord, monthday, months, setpos).prop_map(|(f, i, d, o, md, m, sp)| {
        let mut r = format!("FREQ={f};INTERVAL={i}");
        let coarse = matches!(f, "MONTHLY" | "YEARLY");
        if !d.is_empty() {
            let o = if coarse { o } else { "" };
            r += &format!(
                ";BYDAY={}",
                d.iter()
                    .map(|x| format!("{o}{x}"))
                    .collect::<Vec<_>>()
                    .join(",")
            );
        }
        if !md.is_empty() && f != "WEEKLY" {
            r += &format!(
                ";BYMONTHDAY={}",
                md.iter().map(i32::to_string).collect::<Vec<_>>().join(",")
            );
        }
        if !m.is_empty() {
            r += &format!(
                ";BYMONTH={}",
                m.iter().map(i32::to_string).collect::<Vec<_>>().join(",")
            );
        }
        if let Some(p) = sp {
            r += &format!(";BYSETPOS={p}");
        }
        if matches!(f, "SECONDLY" | "MINUTELY") {
            r += ";BYHOUR=9;BYMINUTE=0,30";
        }
        r
    })
}

fn zone() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just("America/New_York"),
        Just("Europe/Berlin"),
        Just("Australia/Sydney"),
        Just("America/Santiago")
    ]
}

fn event(rule: &str, zone: &str, start: &str) -> String {
    wrap(&format!(
        "BEGIN:VEVENT\nUID:p\nDTSTART;TZID={zone}:{start}\nDURATION:PT45M\nRRULE:{rule}\n\
         BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT10M\nEND:VALARM\nEND:VEVENT"
    ))
}

fn limits() -> Limits {
    Limits {
        max_results: 2_000_000,
        max_steps_per_event: 20_000_000,
        ..Limits::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn deep_window_agrees_with_walking_from_the_start(r in rule(), z in zone(), hour in 0u32..24) {
        let text = event(&r, z, &format!("20300131T{hour:02}3000"));
        let Ok(c) = ics::parse_calendar(text.as_bytes(), &Limits::default()) else {
            return Ok(()); // invalid combinations (e.g. BYSETPOS alone) are rejected, fine
        };
        let (from, to) = (t("2031-02-01T00:00:00Z"), t("2031-04-01T00:00:00Z"));
        let deep = query::occurrences(&c, from, to, Tz::UTC, &limits()).expect("deep");
        let walk_limits = Limits { max_steps_per_event: 3_000_000, ..limits() };
        let walked = query::occurrences(&c, t("2030-01-01T00:00:00Z"), to, Tz::UTC, &walk_limits);
        let Ok(walked) = walked else { return Ok(()) }; // too many to walk: cap hit
        let walked: Vec<_> = walked.iter().filter(|o| o.start.instant >= from).map(|o| o.start.instant).collect();
        let deep: Vec<_> = deep.iter().map(|o| o.start.instant).collect();
        prop_assert_eq!(&deep, &walked, "rule {}", r);
        prop_assert!(deep.windows(2).all(|w| w[0] < w[1]), "sorted and unique");
    }

    #[test]
    fn keys_do_not_depend_on_the_window(r in rule(), z in zone()) {
        let text = event(&r, z, "20260105T093000");
        let Ok(c) = ics::parse_calendar(text.as_bytes(), &Limits::default()) else { return Ok(()) };
        let lim = limits();
        let narrow = alarms::alarms(&c, t("2026-06-01T00:00:00Z"), t("2026-06-03T00:00:00Z"), Tz::UTC, &lim);
        let wide = alarms::alarms(&c, t("2026-05-01T00:00:00Z"), t("2026-07-01T00:00:00Z"), Tz::UTC, &lim);
        let (Ok(narrow), Ok(wide)) = (narrow, wide) else { return Ok(()) };
        let wide: Vec<_> = wide.iter().map(|h| (h.key("c"), h.trigger)).collect();
        for h in &narrow {
            prop_assert!(wide.contains(&(h.key("c"), h.trigger)), "{} missing", h.key("c"));
        }
    }

    #[test]
    fn export_then_import_keeps_every_occurrence(r in rule(), z in zone()) {
        let text = event(&r, z, "20260105T093000");
        let Ok(c) = ics::parse_calendar(text.as_bytes(), &Limits::default()) else { return Ok(()) };
        let again = cal(&ics::write_calendar(&c, Utc::now()));
        let (from, to) = (t("2026-01-01T00:00:00Z"), t("2026-03-01T00:00:00Z"));
        let a = query::occurrences(&c, from, to, Tz::UTC, &limits());
        let b = query::occurrences(&again, from, to, Tz::UTC, &limits());
        if let (Ok(a), Ok(b)) = (a, b) {
            let a: Vec<_> = a.iter().map(|o| o.start).collect();
            let b: Vec<_> = b.iter().map(|o| o.start).collect();
            prop_assert_eq!(a, b);
        }
    }
}

#[test]
fn minutely_rule_with_day_and_hour_filters_does_not_skip_months() {
    // rrule 0.14 yields 2020-08-15 first here (and for SECONDLY alike);
    // python-dateutil and RFC 5545 say 2020-02-15.
    for freq in ["MINUTELY", "SECONDLY"] {
        let rule = format!("FREQ={freq};BYMONTHDAY=15;BYHOUR=9;BYMINUTE=0;BYSECOND=0;COUNT=3");
        let text = wrap(&format!(
            "BEGIN:VEVENT\nUID:m\nDTSTART:20200215T090000Z\nRRULE:{rule}\nEND:VEVENT"
        ));
        let got = super::support::starts(
            &cal(&text),
            "2020-01-01T00:00:00Z",
            "2021-01-01T00:00:00Z",
            Tz::UTC,
        );
        assert_eq!(
            got,
            [
                "2020-02-15T09:00:00Z",
                "2020-03-15T09:00:00Z",
                "2020-04-15T09:00:00Z"
            ],
            "{rule}"
        );
    }
}
