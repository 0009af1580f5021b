//! RFC 5545 §3.3 value types: DATE, DATE-TIME, DURATION, UTC-OFFSET, TEXT.
//! Each parser returns a plain message; callers attach the line and property.

use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Utc};

use crate::time::Dur;

/// `YYYYMMDD`.
pub fn date(s: &str) -> Result<NaiveDate, String> {
    let s = s.trim();
    if s.len() != 8 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{s:?} is not a DATE (YYYYMMDD)"));
    }
    NaiveDate::parse_from_str(s, "%Y%m%d")
        .map_err(|_| format!("{s:?} is not a valid calendar date"))
}

/// `YYYYMMDDTHHMMSS[Z]`; returns the local value and whether it ended in `Z`.
/// A leap second (`60`) is read as `59`, as RFC 5545 allows implementations to.
pub fn date_time(s: &str) -> Result<(NaiveDateTime, bool), String> {
    let s = s.trim();
    let (body, utc) = match s.strip_suffix(['Z', 'z']) {
        Some(b) => (b, true),
        None => (s, false),
    };
    let bad = || format!("{s:?} is not a DATE-TIME (YYYYMMDDTHHMMSS[Z])");
    let (d, t) = body.split_once(['T', 't']).ok_or_else(bad)?;
    if t.len() != 6 || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let date = date(d).map_err(|_| bad())?;
    let num = |i: usize| t[i..i + 2].parse::<u32>().unwrap_or(99);
    let (h, m, sec) = (num(0), num(2), num(4).min(59));
    let time = NaiveTime::from_hms_opt(h, m, sec)
        .ok_or_else(|| format!("{s:?} has an invalid time of day"))?;
    Ok((date.and_time(time), utc))
}

/// A UTC `DATE-TIME` (`…Z`), as `TRIGGER;VALUE=DATE-TIME` and `ACKNOWLEDGED` need.
pub fn utc_date_time(s: &str) -> Result<DateTime<Utc>, String> {
    match date_time(s)? {
        (local, true) => Ok(local.and_utc()),
        (_, false) => Err(format!("{:?} must be a UTC time ending in 'Z'", s.trim())),
    }
}

/// `[+|-]P[nW][nD][T[nH][nM][nS]]` (RFC 5545 §3.3.6; mixing weeks and days is
/// accepted as RFC 5545 errata and most producers do).
pub fn duration(s: &str) -> Result<Dur, String> {
    let s = s.trim();
    let bad = || format!("{s:?} is not a DURATION (e.g. -PT15M, P1D, P1W)");
    let (neg, rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let rest = rest.strip_prefix(['P', 'p']).ok_or_else(bad)?;
    let (mut days, mut secs) = (0i64, 0i64);
    let (mut in_time, mut num, mut any) = (false, None::<i64>, false);
    for c in rest.chars() {
        match c.to_ascii_uppercase() {
            d @ '0'..='9' => {
                let v = num.unwrap_or(0);
                let digit = i64::from(d as u8 - b'0');
                num = Some(
                    v.checked_mul(10)
                        .and_then(|v| v.checked_add(digit))
                        .ok_or_else(bad)?,
                );
            }
            'T' if !in_time && num.is_none() => in_time = true,
            unit => {
                let n = num.take().ok_or_else(bad)?;
                let (add_days, add_secs) = match (unit, in_time) {
                    ('W', false) => (n.checked_mul(7).ok_or_else(bad)?, 0),
                    ('D', false) => (n, 0),
                    ('H', true) => (0, n.checked_mul(3600).ok_or_else(bad)?),
                    ('M', true) => (0, n.checked_mul(60).ok_or_else(bad)?),
                    ('S', true) => (0, n),
                    _ => return Err(bad()),
                };
                days = days.checked_add(add_days).ok_or_else(bad)?;
                secs = secs.checked_add(add_secs).ok_or_else(bad)?;
                any = true;
            }
        }
    }
    // A duration this long (≈ 27,000 years) is a typo, and keeps arithmetic safe.
    const MAX_DAYS: i64 = 10_000_000;
    if num.is_some() || !any || days > MAX_DAYS || secs > MAX_DAYS * 86_400 {
        return Err(bad());
    }
    Ok(if neg {
        Dur {
            days: -days,
            secs: -secs,
        }
    } else {
        Dur { days, secs }
    })
}

/// `+HHMM[SS]` / `-HHMM[SS]` as seconds east of UTC.
pub fn utc_offset(s: &str) -> Result<i32, String> {
    let s = s.trim();
    let bad = || format!("{s:?} is not a UTC-OFFSET (+HHMM)");
    let (sign, digits) = match s.as_bytes().first() {
        Some(b'+') => (1, &s[1..]),
        Some(b'-') => (-1, &s[1..]),
        _ => return Err(bad()),
    };
    if !(digits.len() == 4 || digits.len() == 6) || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let n = |i: usize| digits[i..i + 2].parse::<i32>().unwrap_or(0);
    let secs = n(0) * 3600 + n(2) * 60 + if digits.len() == 6 { n(4) } else { 0 };
    if secs >= 24 * 3600 {
        return Err(bad());
    }
    Ok(sign * secs)
}

/// Unescapes a TEXT value (`\n`, `\,`, `\;`, `\\`).
#[must_use]
pub fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n' | 'N') => out.push('\n'),
                Some(other) => out.push(other),
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Escapes a TEXT value for writing.
#[must_use]
pub fn escape_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            ';' => out.push_str("\\;"),
            ',' => out.push_str("\\,"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}

/// Splits a list value on unescaped commas (`EXDATE:a,b`, `CATEGORIES`).
#[must_use]
pub fn split_list(s: &str) -> Vec<&str> {
    s.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(duration("-PT15M"), Ok(Dur::seconds(-900)));
        assert_eq!(duration("P1W"), Ok(Dur { days: 7, secs: 0 }));
        assert_eq!(
            duration("P1DT2H3M4S"),
            Ok(Dur {
                days: 1,
                secs: 7384
            })
        );
        assert_eq!(duration("PT0S"), Ok(Dur::seconds(0)));
        for bad in [
            "",
            "P",
            "PT",
            "15M",
            "P1H",
            "PT1D",
            "P99999999999999999999D",
            "P1",
        ] {
            assert!(duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn date_times() {
        assert!(date_time("20260308T023000").is_ok_and(|(_, z)| !z));
        assert!(date_time("20260308T023000Z").is_ok_and(|(_, z)| z));
        for bad in [
            "2026-03-08T02:30:00",
            "20260230T000000",
            "20260308T250000",
            "20260308",
        ] {
            assert!(date_time(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn text_round_trips() {
        let s = "a, b; c\\d\nnext";
        assert_eq!(text(&escape_text(s)), s);
    }
}
