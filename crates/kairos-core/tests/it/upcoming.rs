//! `Upcoming` (the incremental index) and `next_alarm` (the one-off search)
//! must agree with each other and with the full window listing, step by step.

use chrono::Duration;
use chrono_tz::Tz;
use kairos_core::Limits;
use kairos_core::alarms::{Upcoming, alarms, next_alarm};

use super::support::{cal, t, wrap};

fn calendar() -> String {
    wrap(
        "BEGIN:VEVENT\nUID:daily\nDTSTART;TZID=Europe/Berlin:20260301T090000\nRRULE:FREQ=DAILY;COUNT=40\n\
         BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT15M\nEND:VALARM\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:weekly\nDTSTART;TZID=America/New_York:20260302T083000\nRRULE:FREQ=WEEKLY;BYDAY=MO,TH\n\
         BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT1H\nREPEAT:2\nDURATION:PT10M\nEND:VALARM\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:same-time\nDTSTART;TZID=Europe/Berlin:20260301T090000\nRRULE:FREQ=DAILY;INTERVAL=3\n\
         BEGIN:VALARM\nACTION:AUDIO\nTRIGGER:-PT15M\nEND:VALARM\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:once\nDTSTART:20260310T120000Z\n\
         BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER;VALUE=DATE-TIME:20260305T070000Z\nEND:VALARM\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:ended\nDTSTART:20250101T120000Z\nRRULE:FREQ=DAILY;COUNT=3\n\
         BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:PT0S\nEND:VALARM\nEND:VEVENT",
    )
}

#[test]
fn stepping_through_time_gives_every_trigger_in_order_once() {
    let c = cal(&calendar());
    let lim = Limits::default();
    let (from, to) = (t("2026-03-01T00:00:00Z"), t("2026-04-15T00:00:00Z"));
    let expected: Vec<_> = alarms(&c, from, to, Tz::UTC, &lim)
        .expect("alarms")
        .iter()
        .map(|h| (h.trigger, h.key("c")))
        .collect();
    assert!(
        expected.len() > 80,
        "a meaningful sequence: {}",
        expected.len()
    );
    let mut up = Upcoming::new(&c, from, Tz::UTC, &lim).expect("index");
    let mut after = from;
    let mut seen = Vec::new();
    while seen.len() < expected.len() {
        let via_index = up
            .next_after(after)
            .expect("next")
            .map(|h| (h.trigger, h.key("c")));
        let via_search = next_alarm(&c, after, Tz::UTC, &lim)
            .expect("search")
            .map(|h| (h.trigger, h.key("c")));
        assert_eq!(via_index, via_search, "at {after}");
        let (trigger, _) = via_index.clone().expect("more triggers");
        let same: Vec<_> = expected
            .iter()
            .filter(|(tr, _)| *tr == trigger)
            .cloned()
            .collect();
        assert_eq!(
            via_index.as_ref(),
            same.first(),
            "the first of those at {trigger}"
        );
        // Hits sharing an instant are all due together; step past them.
        seen.extend(same);
        after = trigger + Duration::seconds(1);
    }
    assert_eq!(seen, expected);
}

#[test]
fn moving_back_in_time_rebuilds_the_index() {
    let c = cal(&calendar());
    let lim = Limits::default();
    let mut up = Upcoming::new(&c, t("2026-03-20T00:00:00Z"), Tz::UTC, &lim).expect("index");
    let late = up
        .next_after(t("2026-03-20T00:00:00Z"))
        .expect("next")
        .map(|h| h.trigger);
    let early = up
        .next_after(t("2026-03-01T00:00:00Z"))
        .expect("next")
        .map(|h| h.trigger);
    assert!(early < late, "{early:?} < {late:?}");
    assert_eq!(early, Some(t("2026-03-01T07:45:00Z")));
}
