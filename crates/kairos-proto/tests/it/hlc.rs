//! The hybrid logical clock: text form, order, issue and observe.

use kairos_proto::{Hlc, HlcClock, MAX_COUNTER, MAX_MS};
use proptest::prelude::*;

use crate::support::{A, B, hlc};

#[test]
fn text_form_is_the_documented_one_and_parses_back() {
    let h = hlc(1_764_864_000_123, 2, "d_4f1c2a9b0e7d3c5a");
    assert_eq!(h.to_string(), "0001764864000123.00002.d_4f1c2a9b0e7d3c5a");
    assert_eq!(
        "0001764864000123.00002.d_4f1c2a9b0e7d3c5a"
            .parse::<Hlc>()
            .unwrap(),
        h
    );
    assert_eq!(
        serde_json::to_string(&h).unwrap(),
        "\"0001764864000123.00002.d_4f1c2a9b0e7d3c5a\""
    );
}

#[test]
fn malformed_text_is_refused() {
    for bad in [
        "",
        "1764864000123.00002.d_4f1c2a9b0e7d3c5a",
        "0001764864000123.2.d_4f1c2a9b0e7d3c5a",
        "0001764864000123.00002",
        "0001764864000123.00002.laptop",
        "000176486400012a.00002.d_4f1c2a9b0e7d3c5a",
        "+001764864000123.00002.d_4f1c2a9b0e7d3c5a",
        "0001764864000123.00002.d_4F1C2A9B0E7D3C5A",
    ] {
        assert!(bad.parse::<Hlc>().is_err(), "{bad:?} parsed");
    }
}

#[test]
fn order_is_ms_then_counter_then_device() {
    assert!(hlc(1, 9, B) < hlc(2, 0, A));
    assert!(hlc(2, 0, B) < hlc(2, 1, A));
    assert!(hlc(2, 1, A) < hlc(2, 1, B));
}

#[test]
fn issue_follows_the_wall_clock_when_it_moves_forward() {
    let mut c = HlcClock::new(A, None);
    assert_eq!(c.issue(100), hlc(100, 0, A));
    assert_eq!(c.issue(100), hlc(100, 1, A));
    assert_eq!(c.issue(90), hlc(100, 2, A), "the wall clock went back");
    assert_eq!(c.issue(101), hlc(101, 0, A));
}

#[test]
fn an_edit_after_pulling_a_remote_edit_wins_whatever_the_wall_clocks_say() {
    let remote = hlc(5_000_000, 3, B); // B's clock is far ahead
    let mut c = HlcClock::new(A, Some(hlc(100, 0, A)));
    c.observe(&remote);
    let mine = c.issue(200);
    assert!(mine > remote);
    assert_eq!(mine, hlc(5_000_000, 4, A));
}

#[test]
fn a_full_counter_moves_to_the_next_millisecond() {
    let mut c = HlcClock::new(A, Some(hlc(7, MAX_COUNTER, A)));
    assert_eq!(c.issue(3), hlc(8, 0, A));
    let mut end = HlcClock::new(A, Some(hlc(MAX_MS, MAX_COUNTER, A)));
    assert_eq!(
        end.issue(3),
        hlc(MAX_MS, MAX_COUNTER, A),
        "the end of the range holds"
    );
}

#[test]
fn far_ahead_is_more_than_a_day() {
    let day = 24 * 3_600_000;
    assert!(!hlc(day, 0, A).is_far_ahead(0));
    assert!(hlc(day + 1, 0, A).is_far_ahead(0));
}

proptest! {
    #[test]
    fn issued_stamps_increase_and_exceed_everything_observed(
        steps in proptest::collection::vec(
            (any::<bool>(), 0u64..1_000_000, 0u32..=MAX_COUNTER), 1..200),
    ) {
        let mut c = HlcClock::new(A, None);
        let mut highest: Option<Hlc> = None;
        for (observe, ms, counter) in steps {
            if observe {
                let seen = hlc(ms, counter, B);
                c.observe(&seen);
                highest = highest.max(Some(seen));
            } else {
                let stamp = c.issue(ms);
                if let Some(h) = &highest {
                    prop_assert!(stamp > *h, "{stamp} not after {h}");
                }
                highest = Some(stamp);
            }
        }
    }

    #[test]
    fn text_form_round_trips_and_sorts_like_the_stamp(
        a in (0..=MAX_MS, 0..=MAX_COUNTER, crate::support::device()),
        b in (0..=MAX_MS, 0..=MAX_COUNTER, crate::support::device()),
    ) {
        let (a, b) = (hlc(a.0, a.1, &a.2), hlc(b.0, b.1, &b.2));
        prop_assert_eq!(a.to_string().parse::<Hlc>().unwrap(), a.clone());
        prop_assert_eq!(a.to_string().cmp(&b.to_string()), a.cmp(&b));
    }
}
