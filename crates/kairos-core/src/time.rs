//! Time arithmetic with RFC 5545's rules: nominal days, exact hours, and the
//! treatment of local times that do not exist or exist twice.

use chrono::{DateTime, Duration, FixedOffset, LocalResult, NaiveDateTime, Offset, TimeZone, Utc};
use chrono_tz::Tz;

use crate::model::Zone;

/// An iCalendar `DURATION` (RFC 5545 §3.3.6), signed.
///
/// Days (and weeks, stored as 7 days) are *nominal*: one day later is the same
/// wall-clock time on the next date, 23 or 25 hours away across a DST change.
/// Hours, minutes and seconds are exact. Both parts carry the same sign.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, PartialOrd, Ord, Hash)]
pub struct Dur {
    /// Nominal days (weeks × 7 included).
    pub days: i64,
    /// Exact seconds.
    pub secs: i64,
}

impl Dur {
    /// A duration of exact seconds.
    #[must_use]
    pub const fn seconds(secs: i64) -> Self {
        Self { days: 0, secs }
    }

    /// The duration as exact time, counting a day as 24 hours. Used only for
    /// bounds and ordering, never to place a wall-clock time.
    #[must_use]
    pub fn approx(self) -> Duration {
        Duration::seconds(self.days.saturating_mul(86_400).saturating_add(self.secs))
    }

    /// `self × n`.
    #[must_use]
    pub fn times(self, n: i64) -> Self {
        Self {
            days: self.days.saturating_mul(n),
            secs: self.secs.saturating_mul(n),
        }
    }

    /// Is this zero or negative?
    #[must_use]
    pub fn is_non_positive(self) -> bool {
        self.days <= 0 && self.secs <= 0
    }
}

/// The IANA zone a [`Zone`] reads in, `floating` standing in for floating
/// times; `None` for a custom zone.
fn iana(zone: Zone, floating: Tz) -> Option<Tz> {
    match zone {
        Zone::Utc => Some(Tz::UTC),
        Zone::Floating => Some(floating),
        Zone::Tz(tz) => Some(tz),
        Zone::Custom(_) => None,
    }
}

/// The wall-clock time at `t` in `zone` (floating times in `floating`).
#[must_use]
pub fn local_of(t: DateTime<Utc>, zone: Zone, floating: Tz) -> NaiveDateTime {
    match (zone, iana(zone, floating)) {
        (Zone::Custom(c), _) => c.local(t),
        (_, Some(tz)) => t.with_timezone(&tz).naive_local(),
        (_, None) => t.naive_utc(),
    }
}

/// The offset from UTC in force at `t` in `zone`.
#[must_use]
pub fn offset_of(t: DateTime<Utc>, zone: Zone, floating: Tz) -> FixedOffset {
    match (zone, iana(zone, floating)) {
        (Zone::Custom(c), _) => c.offset_at(t),
        (_, Some(tz)) => tz.offset_from_utc_datetime(&t.naive_utc()).fix(),
        (_, None) => Utc.fix(),
    }
}

/// The instant of a wall-clock time in a zone (RFC 5545 §3.3.5):
/// a time that falls in a spring-forward gap is read with the offset in force
/// *before* the gap (02:30 New York on the change day is 03:30 EDT); a time that
/// occurs twice in a fall-back overlap is the *first* of the two.
#[must_use]
pub fn resolve_local(local: NaiveDateTime, zone: Zone, floating: Tz) -> DateTime<Utc> {
    let tz = match zone {
        Zone::Custom(c) => return c.resolve(local),
        Zone::Utc => Tz::UTC,
        Zone::Floating => floating,
        Zone::Tz(tz) => tz,
    };
    if tz == Tz::UTC {
        return local.and_utc(); // no transitions: skip the zone look-up
    }
    match tz.from_local_datetime(&local) {
        LocalResult::Single(t) => t.with_timezone(&Utc),
        LocalResult::Ambiguous(first, second) => first.min(second).with_timezone(&Utc),
        LocalResult::None => {
            // Walk back to the last wall-clock time before the gap (gaps are at most
            // a day long, e.g. Pacific/Apia 2011-12-30) and use its offset.
            let mut probe = local;
            // Besides gaps, this is where times at the very ends of chrono's
            // range land (their UTC instant is out of range), so every step
            // is checked: such a time is read as UTC below.
            for _ in 0..(48 * 4) {
                let Some(p) = probe.checked_sub_signed(Duration::minutes(15)) else {
                    break;
                };
                probe = p;
                if let Some(t) = tz.from_local_datetime(&probe).latest() {
                    let off = i64::from(t.offset().fix().local_minus_utc());
                    if let Some(utc) = local.checked_sub_signed(Duration::seconds(off)) {
                        return utc.and_utc();
                    }
                    break;
                }
            }
            // Unreachable for real zone data within chrono's range; reading as
            // UTC is the least bad answer and never panics.
            local.and_utc()
        }
    }
}

/// `start + dur`, with the nominal days applied in `zone`'s wall clock.
#[must_use]
pub fn add(start: DateTime<Utc>, dur: Dur, zone: Zone, floating: Tz) -> DateTime<Utc> {
    let mut t = start;
    if dur.days != 0 {
        let local = local_of(t, zone, floating);
        let moved = local
            .checked_add_signed(Duration::days(dur.days))
            .unwrap_or(if dur.days > 0 {
                NaiveDateTime::MAX
            } else {
                NaiveDateTime::MIN
            });
        t = resolve_local(moved, zone, floating);
    }
    t.checked_add_signed(Duration::seconds(dur.secs))
        .unwrap_or(t)
}

/// The instant shown in `zone` (floating times in `floating`), as the offset a
/// person there would read.
#[must_use]
pub fn in_zone(t: DateTime<Utc>, zone: Zone, floating: Tz) -> DateTime<FixedOffset> {
    t.with_timezone(&offset_of(t, zone, floating))
}

/// RFC 3339 with seconds; `Z` only for values that are in UTC itself.
#[must_use]
pub fn rfc3339(t: DateTime<Utc>, zone: Zone, floating: Tz) -> String {
    if zone == Zone::Utc {
        return t.format("%Y-%m-%dT%H:%M:%SZ").to_string();
    }
    in_zone(t, zone, floating)
        .format("%Y-%m-%dT%H:%M:%S%:z")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    fn local(y: i32, m: u32, d: u32, h: u32, mi: u32) -> NaiveDateTime {
        NaiveDate::from_ymd_opt(y, m, d)
            .and_then(|d| d.and_hms_opt(h, mi, 0))
            .expect("valid")
    }

    #[test]
    fn gap_uses_offset_before_the_gap() {
        let ny = Zone::Tz(Tz::America__New_York);
        let t = resolve_local(local(2026, 3, 8, 2, 30), ny, Tz::UTC);
        assert_eq!(rfc3339(t, ny, Tz::UTC), "2026-03-08T03:30:00-04:00");
    }

    #[test]
    fn overlap_takes_the_first() {
        let ny = Zone::Tz(Tz::America__New_York);
        let t = resolve_local(local(2026, 11, 1, 1, 30), ny, Tz::UTC);
        assert_eq!(rfc3339(t, ny, Tz::UTC), "2026-11-01T01:30:00-04:00");
    }

    #[test]
    fn a_nominal_day_across_dst_is_23_hours() {
        let berlin = Zone::Tz(Tz::Europe__Berlin);
        let start = resolve_local(local(2026, 3, 28, 9, 0), berlin, Tz::UTC);
        let next = add(start, Dur { days: 1, secs: 0 }, berlin, Tz::UTC);
        assert_eq!(rfc3339(next, berlin, Tz::UTC), "2026-03-29T09:00:00+02:00");
        assert_eq!((next - start).num_hours(), 23);
    }
}
