//! Mapping a `TZID` to an IANA zone.
//!
//! In order: an IANA name as written; for a `VTIMEZONE` with any other name, the
//! IANA zone whose offsets agree with the block's own `STANDARD`/`DAYLIGHT` rules
//! (preferring the zone its name suggests, e.g. Outlook's "Eastern Standard Time"
//! → America/New_York); with no block, the name alone (Windows names, Olson-style
//! prefixes) via `calcard`'s table. A `TZID` that none of these resolve is an
//! error, never a silent fallback to some default zone.

mod custom;

use std::collections::HashMap;
use std::str::FromStr;

use chrono::{DateTime, Datelike, Duration, NaiveDate, Offset, TimeZone, Utc};
use chrono_tz::Tz;

use crate::error::Error;
use crate::ics::lexer::Component;
use crate::ics::values;
use crate::ics::{At, Sink};
use crate::model::Zone;
pub use custom::{CustomTz, MAX_CUSTOM_ZONES};

/// The first and last years over which a `VTIMEZONE`'s rules are compared with
/// IANA data: recent enough that the block's (usually current-rules-only)
/// definition applies, long enough to tell zones with different DST dates apart.
const COMPARE_YEARS: (i32, i32) = (2012, 2035);
/// Fraction of sample points that must agree for a match.
const MIN_AGREEMENT: f64 = 0.9;

/// Resolves `name` without a `VTIMEZONE`: IANA first, then calcard's table of
/// Windows and vendor names.
#[must_use]
pub fn by_name(name: &str) -> Option<Tz> {
    let name = name.trim();
    if let Ok(tz) = Tz::from_str(name).or_else(|_| Tz::from_str_insensitive(name)) {
        return Some(tz);
    }
    match calcard::common::timezone::Tz::from_str(name) {
        Ok(calcard::common::timezone::Tz::Tz(tz)) => Some(tz),
        _ => None,
    }
}

/// Resolves every `VTIMEZONE` in a calendar to an IANA zone, keyed by its `TZID`.
///
/// # Errors
/// A `VTIMEZONE` without a `TZID`, or whose rules match no IANA zone.
pub fn resolve_blocks(blocks: &[&Component]) -> Result<HashMap<String, Tz>, Error> {
    let mut out = HashMap::new();
    for block in blocks {
        let tzid = block
            .prop("TZID")
            .ok_or_else(|| Error::syntax(block.line, "VTIMEZONE has no TZID"))?;
        if let Zone::Tz(tz) = resolve_block(block, &mut Sink::strict())? {
            out.insert(crate::ics::zone_name(&tzid.value), tz);
        }
    }
    Ok(out)
}

/// The zone a `VTIMEZONE` block defines: its name when that is an IANA name;
/// else the IANA zone its `STANDARD`/`DAYLIGHT` rules match; else (lenient)
/// its own rules as written, the file's definition being the law (RFC 5545
/// §3.6.5), or (strict, as always) the zone its name suggests (Windows names).
///
/// # Errors
/// A block without `TZID`, malformed observances; strict: rules that match no
/// IANA zone and a name that suggests none.
pub(crate) fn resolve_block(block: &Component, sink: &mut Sink) -> Result<Zone, Error> {
    let tzid = block
        .prop("TZID")
        .ok_or_else(|| Error::syntax(block.line, "VTIMEZONE has no TZID"))?;
    let name = &crate::ics::zone_name(&tzid.value);
    if let Ok(tz) = Tz::from_str(name) {
        return Ok(Zone::Tz(tz));
    }
    for obs in observances(block) {
        if let Some(p) = obs.prop("DTSTART").filter(|p| is_date(&p.value)) {
            sink.note(
                p.line,
                At::new("VTIMEZONE", None),
                || format!("DTSTART: {} starts on a DATE, not a DATE-TIME", obs.name),
                "read as midnight of that day",
            );
        }
    }
    if let Some(tz) = match_rules(block)? {
        return Ok(Zone::Tz(tz));
    }
    let unmatched = || {
        Error::property(
            tzid.line,
            "TZID",
            format!(
                "time zone {name:?} is not an IANA name, and its VTIMEZONE rules match no IANA zone"
            ),
        )
    };
    if sink.is_strict() {
        return by_name(name).map(Zone::Tz).ok_or_else(unmatched);
    }
    let at = At::new("VTIMEZONE", None);
    match CustomTz::from_block(block, name)? {
        Some(c) => {
            sink.note(
                tzid.line,
                at,
                || format!("time zone {name:?} is not an IANA name, and its VTIMEZONE rules match no IANA zone"),
                "its own rules are used",
            );
            Ok(Zone::Custom(c))
        }
        None => {
            let action = match by_name(name) {
                Some(tz) => format!("its name read as {}", tz.name()),
                None => "times in it read as floating time".to_owned(),
            };
            sink.repair(unmatched(), at, &action)?;
            Ok(by_name(name).map_or(Zone::Floating, Zone::Tz))
        }
    }
}

/// A `STANDARD`/`DAYLIGHT` onset: at this instant the offset changes from
/// `.1` to `.2` seconds east of UTC.
pub(crate) type Onset = (DateTime<Utc>, i32, i32);

/// Every onset a block defines from the start of year `years.0` (and each
/// observance's own `DTSTART`) until the end of `years.1`, sorted.
pub(crate) fn onsets(block: &Component, years: (i32, i32)) -> Result<Vec<Onset>, Error> {
    let mut out = Vec::new();
    let year = |y: i32| {
        NaiveDate::from_ymd_opt(y, 1, 1)
            .unwrap_or(NaiveDate::MAX)
            .and_time(chrono::NaiveTime::MIN)
    };
    let (begin, end) = (year(years.0), year(years.1.saturating_add(1)));
    for obs in observances(block) {
        let get = |name: &str| {
            obs.prop(name)
                .ok_or_else(|| Error::syntax(obs.line, format!("{} has no {name}", obs.name)))
        };
        let at = |p: &crate::ics::lexer::Property, r: Result<i32, String>| {
            r.map_err(|m| Error::property(p.line, &p.name, m))
        };
        let (from_p, to_p, start_p) = (get("TZOFFSETFROM")?, get("TZOFFSETTO")?, get("DTSTART")?);
        let from = at(from_p, values::utc_offset(&from_p.value))?;
        let to = at(to_p, values::utc_offset(&to_p.value))?;
        // A DATE (seen from Outlook add-ins and generators) is midnight.
        let start = values::date_time(&start_p.value)
            .map(|(t, _)| t)
            .or_else(|m| {
                values::date(&start_p.value)
                    .map(|d| d.and_time(chrono::NaiveTime::MIN))
                    .map_err(|_| m)
            })
            .map_err(|m| Error::property(start_p.line, "DTSTART", m))?;
        let mut locals = vec![start];
        for rule in obs.props_named("RRULE") {
            // Yearly rules give two onsets a year; the cap only bounds a
            // nonsensical FREQ=SECONDLY observance.
            let found = crate::recur::naive_rule_iter(&rule.value, start, begin)
                .map_err(|m| Error::property(rule.line, "RRULE", m))?
                .skip_while(|t| *t < begin)
                .take_while(|t| *t < end)
                .take(5000);
            locals.extend(found);
        }
        for rd in obs.props_named("RDATE") {
            for v in values::split_list(&rd.value) {
                locals.push(
                    values::date_time(v)
                        .map_err(|m| Error::property(rd.line, "RDATE", m))?
                        .0,
                );
            }
        }
        out.extend(locals.into_iter().filter_map(|l| {
            l.checked_sub_signed(Duration::seconds(i64::from(from)))
                .map(|u| (u.and_utc(), from, to))
        }));
    }
    out.sort_unstable();
    out.dedup_by_key(|o| o.0);
    Ok(out)
}

/// A block's `STANDARD` and `DAYLIGHT` observances.
fn observances(block: &Component) -> impl Iterator<Item = &Component> {
    block
        .children
        .iter()
        .filter(|c| c.name == "STANDARD" || c.name == "DAYLIGHT")
}

/// Is an observance's `DTSTART` value a DATE (`19700101`)?
fn is_date(v: &str) -> bool {
    values::date(v).is_ok()
}

/// Instants at which to compare offsets: every week of the compared years, and an
/// hour either side of every onset the block defines.
fn samples(onsets: &[Onset]) -> Vec<DateTime<Utc>> {
    let (y0, y1) = COMPARE_YEARS;
    let mut t = NaiveDate::from_ymd_opt(y0, 1, 3)
        .unwrap_or(NaiveDate::MIN)
        .and_hms_opt(12, 0, 0)
        .unwrap_or_default()
        .and_utc();
    let mut out = Vec::new();
    while t.year() <= y1 {
        out.push(t);
        t += Duration::days(7);
    }
    for (at, ..) in onsets
        .iter()
        .filter(|(at, ..)| (y0..=y1).contains(&at.year()))
    {
        out.push(*at - Duration::hours(1));
        out.push(*at + Duration::hours(1));
    }
    out
}

fn offset_at(onsets: &[Onset], t: DateTime<Utc>) -> Option<i32> {
    let idx = onsets.partition_point(|(at, ..)| *at <= t);
    idx.checked_sub(1).map(|i| onsets[i].2)
}

/// Zones preferred when a custom `VTIMEZONE` fits several IANA zones equally:
/// the ones people know their region's time by.
const PREFERRED: [Tz; 24] = [
    Tz::Europe__London,
    Tz::Europe__Berlin,
    Tz::Europe__Paris,
    Tz::Europe__Helsinki,
    Tz::Europe__Moscow,
    Tz::America__New_York,
    Tz::America__Chicago,
    Tz::America__Denver,
    Tz::America__Los_Angeles,
    Tz::America__Phoenix,
    Tz::America__Anchorage,
    Tz::Pacific__Honolulu,
    Tz::America__Sao_Paulo,
    Tz::America__Santiago,
    Tz::America__Mexico_City,
    Tz::Asia__Tokyo,
    Tz::Asia__Shanghai,
    Tz::Asia__Kolkata,
    Tz::Asia__Dubai,
    Tz::Asia__Singapore,
    Tz::Australia__Sydney,
    Tz::Australia__Perth,
    Tz::Pacific__Auckland,
    Tz::Africa__Johannesburg,
];

/// Zone names that are aliases kept for compatibility; a canonical name is
/// preferred when both fit.
fn is_legacy(name: &str) -> bool {
    !name.contains('/')
        || [
            "Etc/",
            "US/",
            "SystemV/",
            "Canada/",
            "Mexico/",
            "Brazil/",
            "Chile/",
            "Australia/ACT",
            "Asia/Calcutta",
        ]
        .iter()
        .any(|p| name.starts_with(p))
}

/// The IANA zone whose offsets agree with the block's rules, or `None` when the
/// block defines no usable rules or none agrees well enough.
fn match_rules(block: &Component) -> Result<Option<Tz>, Error> {
    let onsets = onsets(block, (COMPARE_YEARS.0 - 1, COMPARE_YEARS.1))?;
    if onsets.is_empty() {
        return Ok(None);
    }
    let points: Vec<(DateTime<Utc>, i32)> = samples(&onsets)
        .into_iter()
        .filter_map(|t| offset_at(&onsets, t).map(|o| (t, o)))
        .collect();
    if points.is_empty() {
        return Ok(None);
    }
    let guess = block
        .prop("TZID")
        .and_then(|p| by_name(&crate::ics::zone_name(&p.value)));
    // A zone below MIN_AGREEMENT is never chosen, so stop counting its points
    // as soon as its misses rule it out (scored 0): most zones are out within
    // the first few hundred points, which makes matching ~10x cheaper.
    #[allow(clippy::cast_precision_loss)] // counts are a few thousand
    let ruled_out =
        |misses: usize| ((points.len() - misses) as f64 / points.len() as f64) < MIN_AGREEMENT;
    let score = |tz: Tz| {
        let mut misses = 0;
        for (t, o) in &points {
            if tz
                .offset_from_utc_datetime(&t.naive_utc())
                .fix()
                .local_minus_utc()
                != *o
            {
                misses += 1;
                if ruled_out(misses) {
                    return 0;
                }
            }
        }
        points.len() - misses
    };
    // Rank among equal scores: a well-known zone people recognise, then any
    // canonical name, then the rest (all give the same offsets anyway).
    let rank = |tz: Tz| match PREFERRED.iter().position(|p| *p == tz) {
        Some(i) => i,
        None if !is_legacy(tz.name()) => PREFERRED.len(),
        None => PREFERRED.len() + 1,
    };
    let mut best: Option<(usize, usize, Tz)> = None;
    for &tz in chrono_tz::TZ_VARIANTS.iter().chain(guess.iter()) {
        let s = score(tz);
        let r = rank(tz);
        if best.is_none_or(|(bs, br, _)| s > bs || (s == bs && r < br)) {
            best = Some((s, r, tz));
        }
    }
    let Some((s, _, tz)) = best else {
        return Ok(None);
    };
    #[allow(clippy::cast_precision_loss)] // counts are a few thousand
    let agreement = s as f64 / points.len() as f64;
    if agreement < MIN_AGREEMENT {
        return Ok(None);
    }
    // The name's own suggestion wins whenever it fits as well as the best.
    Ok(Some(guess.filter(|g| score(*g) == s).unwrap_or(tz)))
}
