//! The seeded event generator: one [`Spec`] per event, written both as iCalendar
//! (what Kairos reads) and as JSON (what the dateutil script reads), so that the
//! two sides expand exactly the same rules.
//!
//! Every `DTSTART` is chosen to be an occurrence of its own rule (the second
//! Tuesday for `BYDAY=2TU`, a listed weekday for `WEEKLY;BYDAY=…`), because
//! RFC 5545 counts a non-matching `DTSTART` as an extra first occurrence while
//! dateutil drops it: aligned starts keep the comparison about expansion speed,
//! not about that known difference.

use chrono::{Datelike, Duration, Months, NaiveDate, NaiveDateTime, NaiveTime, Weekday};
use serde::Serialize;

/// SplitMix64: tiny, seedable, and good enough to spread test data.
pub struct Rng(u64);

impl Rng {
    /// A generator whose whole output is fixed by `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0; the modulo bias is irrelevant here).
    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        let span = u64::try_from(hi - lo + 1).unwrap_or(1);
        lo + i64::try_from(self.below(span)).unwrap_or(0)
    }

    /// True with probability `pct`/100.
    fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        let i = usize::try_from(self.below(items.len() as u64)).unwrap_or(0);
        items[i]
    }
}

/// The zones events are written in. `None` is floating (read in UTC by the bench).
pub const ZONES: [Option<&str>; 8] = [
    Some("America/New_York"),
    Some("Europe/Berlin"),
    Some("Australia/Sydney"),
    Some("Asia/Shanghai"),
    Some("Europe/London"),
    Some("America/Santiago"),
    Some("UTC"),
    None,
];

/// The shape of a rule, for the mix summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// `FREQ=DAILY`, possibly with `INTERVAL`.
    Daily,
    /// `FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR`.
    Workdays,
    /// `FREQ=WEEKLY;BYDAY=…`, possibly with `INTERVAL`.
    Weekly,
    /// `FREQ=MONTHLY;BYMONTHDAY=…`.
    MonthDay,
    /// `FREQ=MONTHLY;BYDAY=2TU` and the like.
    NthWeekday,
    /// `FREQ=MONTHLY;BYDAY=MO,…,FR;BYSETPOS=-1`.
    LastWorkday,
    /// `FREQ=YEARLY`, plain or `BYMONTH=…;BYDAY=4TH`.
    Yearly,
}

/// One generated event.
#[derive(Debug, Clone, Serialize)]
pub struct Spec {
    /// `UID`.
    pub uid: String,
    /// IANA name, `"UTC"` for `…Z` values, `None` for floating.
    pub tzid: Option<&'static str>,
    /// An all-day (`VALUE=DATE`) event; then `tzid` is `None`.
    pub all_day: bool,
    /// `DTSTART` as wall-clock time in `tzid` (midnight for all-day events).
    pub dtstart: NaiveDateTime,
    /// The `RRULE` without `UNTIL`.
    pub rrule: String,
    /// `UNTIL` as a UTC instant (events with a zone, including UTC).
    pub until_utc: Option<NaiveDateTime>,
    /// `UNTIL` as wall-clock time (floating and all-day events).
    pub until_local: Option<NaiveDateTime>,
    /// `EXDATE`s, wall-clock in `tzid` like `dtstart`.
    pub exdates: Vec<NaiveDateTime>,
    /// `DURATION` value.
    #[serde(skip)]
    pub duration: &'static str,
    /// `TRIGGER` lines of the `VALARM`s (name and parameters included).
    #[serde(skip)]
    pub triggers: Vec<&'static str>,
    /// The rule's shape.
    #[serde(skip)]
    pub kind: Kind,
}

fn date(y: i32, m: u32, d: u32) -> NaiveDate {
    // Callers pass in-range constants or values clamped to real dates.
    NaiveDate::from_ymd_opt(y, m, d).unwrap_or(NaiveDate::MIN)
}

/// The `n`-th (1…4, or -1 for last) `wd` of a month.
fn nth_weekday(y: i32, m: u32, n: i32, wd: Weekday) -> NaiveDate {
    if n > 0 {
        let n = u8::try_from(n).unwrap_or(1);
        NaiveDate::from_weekday_of_month_opt(y, m, wd, n).unwrap_or(NaiveDate::MIN)
    } else {
        let first_next = date(y, m, 1) + Months::new(1);
        let mut d = first_next - Duration::days(1);
        while d.weekday() != wd {
            d -= Duration::days(1);
        }
        d
    }
}

fn last_workday(y: i32, m: u32) -> NaiveDate {
    let mut d = date(y, m, 1) + Months::new(1) - Duration::days(1);
    while matches!(d.weekday(), Weekday::Sat | Weekday::Sun) {
        d -= Duration::days(1);
    }
    d
}

const DAYS: [Weekday; 7] = [
    Weekday::Mon,
    Weekday::Tue,
    Weekday::Wed,
    Weekday::Thu,
    Weekday::Fri,
    Weekday::Sat,
    Weekday::Sun,
];

fn code(wd: Weekday) -> &'static str {
    ["MO", "TU", "WE", "TH", "FR", "SA", "SU"][wd.num_days_from_monday() as usize]
}

/// Months from `a`'s month to `b`'s month.
fn months_between(a: NaiveDate, b: NaiveDate) -> i64 {
    i64::from(b.year() - a.year()) * 12 + i64::from(b.month()) - i64::from(a.month())
}

/// The rule, the aligned start date, and (for rules where they are easy to
/// place) a way to name the k-th period's date for `EXDATE`s.
struct Shape {
    kind: Kind,
    rule: String,
    start: NaiveDate,
    /// Days between occurrences that are whole periods apart (`EXDATE` placing).
    step_days: Option<i64>,
    /// For nth-weekday rules: (months per period, n, weekday).
    nth: Option<(i64, i32, Weekday)>,
}

fn interval(rng: &mut Rng, choices: &[u32]) -> (u32, String) {
    let i = if rng.chance(70) { 1 } else { rng.pick(choices) };
    let s = if i > 1 {
        format!(";INTERVAL={i}")
    } else {
        String::new()
    };
    (i, s)
}

fn shape(rng: &mut Rng, day: NaiveDate) -> Shape {
    let roll = rng.below(100);
    let (y, m) = (day.year(), day.month());
    let mut s = Shape {
        kind: Kind::Daily,
        rule: String::new(),
        start: day,
        step_days: None,
        nth: None,
    };
    match roll {
        0..15 => {
            let (i, iv) = interval(rng, &[2, 3]);
            s.rule = format!("FREQ=DAILY{iv}");
            s.step_days = Some(i64::from(i));
        }
        15..25 => {
            s.kind = Kind::Workdays;
            s.rule = "FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR".into();
            while matches!(s.start.weekday(), Weekday::Sat | Weekday::Sun) {
                s.start += Duration::days(1);
            }
            s.step_days = Some(7);
        }
        25..50 => {
            s.kind = Kind::Weekly;
            let (i, iv) = interval(rng, &[2, 3, 4]);
            let mut days = vec![day.weekday()];
            for _ in 0..rng.below(3) {
                let d = rng.pick(&DAYS);
                if !days.contains(&d) {
                    days.push(d);
                }
            }
            days.sort_by_key(Weekday::num_days_from_monday);
            let list: Vec<&str> = days.into_iter().map(code).collect();
            s.rule = format!("FREQ=WEEKLY{iv};BYDAY={}", list.join(","));
            s.step_days = Some(7 * i64::from(i));
        }
        50..65 => {
            s.kind = Kind::MonthDay;
            let (_, iv) = interval(rng, &[2, 3]);
            let mut list = vec![day.day().to_string()];
            if rng.chance(50) {
                let extra = if rng.chance(30) {
                    "-1".to_owned()
                } else {
                    rng.range(1, 28).to_string()
                };
                if !list.contains(&extra) {
                    list.push(extra);
                }
            }
            s.rule = format!("FREQ=MONTHLY{iv};BYMONTHDAY={}", list.join(","));
        }
        65..80 => {
            s.kind = Kind::NthWeekday;
            let (i, iv) = interval(rng, &[2, 3, 6]);
            let n = rng.pick(&[1, 2, 3, 4, -1]);
            let wd = rng.pick(&DAYS);
            s.start = nth_weekday(y, m, n, wd);
            s.rule = format!("FREQ=MONTHLY{iv};BYDAY={n}{}", code(wd));
            s.nth = Some((i64::from(i), n, wd));
        }
        80..88 => {
            s.kind = Kind::LastWorkday;
            s.start = last_workday(y, m);
            s.rule = "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1".into();
        }
        _ => {
            s.kind = Kind::Yearly;
            if rng.chance(50) {
                s.rule = "FREQ=YEARLY".into();
            } else {
                let n = rng.pick(&[1, 2, 3, 4, -1]);
                let wd = rng.pick(&DAYS);
                s.start = nth_weekday(y, m, n, wd);
                s.rule = format!("FREQ=YEARLY;BYMONTH={m};BYDAY={n}{}", code(wd));
            }
        }
    }
    s
}

/// `count` events, the same for the same `seed`. `window` is the query window:
/// starts spread from 2019 to 90 days before its end, `EXDATE`s mostly inside it.
pub fn generate(count: usize, seed: u64, window: (NaiveDate, NaiveDate)) -> Vec<Spec> {
    let mut rng = Rng::new(seed);
    (0..count).map(|i| one(&mut rng, i, window)).collect()
}

fn one(rng: &mut Rng, i: usize, (window_from, window_to): (NaiveDate, NaiveDate)) -> Spec {
    let first = date(2019, 1, 1);
    let day = first + Duration::days(rng.range(0, (window_to - first).num_days() - 90));
    let all_day = rng.chance(5);
    let tzid = if all_day { None } else { rng.pick(&ZONES) };
    let time = if all_day {
        NaiveTime::MIN
    } else {
        let h = u32::try_from(rng.range(0, 23)).unwrap_or(9);
        let mi = u32::try_from(rng.range(0, 3) * 15).unwrap_or(0);
        NaiveTime::from_hms_opt(h, mi, 0).unwrap_or(NaiveTime::MIN)
    };
    let sh = shape(rng, day);
    let mut rule = sh.rule.clone();
    let (mut until_utc, mut until_local) = (None, None);
    match rng.below(100) {
        0..20 => rule.push_str(&format!(";COUNT={}", rng.range(5, 300))),
        20..40 => {
            let end = sh.start + Duration::days(rng.range(30, 5 * 365));
            let t = if all_day {
                end.and_time(NaiveTime::MIN)
            } else {
                end.and_hms_opt(23, 59, 59).unwrap_or_default()
            };
            if tzid.is_some() {
                until_utc = Some(t);
            } else {
                until_local = Some(t);
            }
        }
        _ => {}
    }
    let exdates = if rng.chance(25) {
        exdates(rng, &sh, window_from)
            .into_iter()
            .map(|d| d.and_time(time))
            .collect()
    } else {
        Vec::new()
    };
    let duration = if all_day {
        "P1D"
    } else {
        rng.pick(&["PT30M", "PT45M", "PT1H", "PT2H"])
    };
    let mut triggers = vec!["TRIGGER:-PT15M"];
    if rng.chance(50) {
        triggers.push(rng.pick(&["TRIGGER:-P1D", "TRIGGER:-PT1H", "TRIGGER;RELATED=END:-PT5M"]));
    }
    Spec {
        uid: format!("bench-{i:05}@kairos.invalid"),
        tzid,
        all_day,
        dtstart: sh.start.and_time(time),
        rrule: rule,
        until_utc,
        until_local,
        exdates,
        duration,
        triggers,
        kind: sh.kind,
    }
}

/// One to three dates that are occurrences of the rule (before any bound),
/// mostly inside the window.
fn exdates(rng: &mut Rng, sh: &Shape, window_from: NaiveDate) -> Vec<NaiveDate> {
    let n = rng.range(1, 3);
    let mut out = Vec::new();
    for _ in 0..n {
        if let Some(step) = sh.step_days {
            let base = ((window_from - sh.start).num_days() + step - 1)
                .div_euclid(step)
                .max(0);
            out.push(sh.start + Duration::days((base + rng.range(0, 80)) * step));
        } else if let Some((per, nth, wd)) = sh.nth {
            let base = (months_between(sh.start, window_from) + per - 1)
                .div_euclid(per)
                .max(0);
            let k = (base + rng.range(0, 10)) * per;
            let month = date(sh.start.year(), sh.start.month(), 1)
                + Months::new(u32::try_from(k).unwrap_or(0));
            out.push(nth_weekday(month.year(), month.month(), nth, wd));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}
