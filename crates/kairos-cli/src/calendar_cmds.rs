//! `occurrences`, `alarms` and `export`: the JSON contract scripts rely on.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;
use kairos_core::ics::Warning;
use kairos_core::model::{Calendar, Zone};
use kairos_core::{Limits, alarms, ics, query, time};
use serde::Serialize;

/// A file and a window.
#[derive(clap::Args)]
pub struct WindowArgs {
    /// An iCalendar file (`-` for standard input).
    pub file: PathBuf,
    /// Window start (inclusive), RFC 3339, e.g. 2026-01-01T00:00:00Z.
    #[arg(long)]
    pub from: String,
    /// Window end (exclusive), RFC 3339.
    #[arg(long)]
    pub to: String,
    /// Zone for floating times and all-day dates (default: the system zone).
    #[arg(long)]
    pub tz: Option<String>,
    /// Refuse the file at its first problem instead of skipping or repairing
    /// what is broken (with a warning on stderr for each).
    #[arg(long)]
    pub strict: bool,
}

/// `kairos occurrences`: a file, a window, and which kinds to list.
#[derive(clap::Args)]
pub struct OccurrencesArgs {
    #[command(flatten)]
    pub window: WindowArgs,
    /// Leave tasks (VTODO) out: list events only.
    #[arg(long)]
    pub no_tasks: bool,
}

/// A file and a moment.
#[derive(clap::Args)]
pub struct NextArgs {
    /// An iCalendar file (`-` for standard input).
    pub file: PathBuf,
    /// Look from here (RFC 3339; default: now).
    #[arg(long)]
    pub after: Option<String>,
    /// Zone for floating times and all-day dates (default: the system zone).
    #[arg(long)]
    pub tz: Option<String>,
    /// Refuse the file at its first problem instead of skipping or repairing
    /// what is broken (with a warning on stderr for each).
    #[arg(long)]
    pub strict: bool,
}

/// A file to normalise.
#[derive(clap::Args)]
pub struct ExportArgs {
    /// An iCalendar file (`-` for standard input).
    pub file: PathBuf,
    /// Refuse the file at its first problem instead of skipping or repairing
    /// what is broken (with a warning on stderr for each).
    #[arg(long)]
    pub strict: bool,
}

/// A calendar file as read, with what a lenient read repaired or skipped.
pub struct Loaded {
    /// The events that could be read.
    pub calendar: Calendar,
    /// One per problem repaired or skipped; when strict, only the choices the
    /// file left open (see `ics::parse_calendar_strict`).
    pub warnings: Vec<Warning>,
}

/// Reads and parses a calendar file within the core's size limit: strictly
/// (the first problem is an error naming its line) or leniently (problems
/// are skipped or repaired and returned as warnings).
pub fn load(path: &Path, strict: bool) -> Result<Loaded> {
    let limits = Limits::default();
    let mut bytes = Vec::new();
    let shown = path.display();
    if path.as_os_str() == "-" {
        std::io::stdin()
            .take(limits.max_file_bytes as u64 + 1)
            .read_to_end(&mut bytes)
            .context("reading standard input")?;
    } else {
        let file = std::fs::File::open(path).with_context(|| format!("cannot open {shown}"))?;
        file.take(limits.max_file_bytes as u64 + 1)
            .read_to_end(&mut bytes)
            .with_context(|| format!("reading {shown}"))?;
    }
    let read = if strict {
        ics::parse_calendar_strict
    } else {
        ics::parse_calendar_lenient
    };
    let (calendar, warnings) = read(&bytes, &limits).with_context(|| format!("{shown}"))?;
    Ok(Loaded { calendar, warnings })
}

/// [`load`] for the query commands: each warning goes to stderr as one line,
/// `kairos: warning: FILE: line N (VEVENT uid U): what was wrong: what was done`.
pub fn load_reporting(path: &Path, strict: bool) -> Result<Calendar> {
    let loaded = load(path, strict)?;
    let shown = path.display();
    let mut err = std::io::stderr().lock();
    for w in &loaded.warnings {
        let line = w.to_string().replace(['\n', '\r'], " ");
        // Best effort: a closed stderr must not fail the query.
        let _ = writeln!(err, "kairos: warning: {shown}: {line}");
    }
    Ok(loaded.calendar)
}

/// The zone for floating times: `--tz`, else the system's, else UTC.
pub fn floating_zone(arg: Option<&str>) -> Result<Tz> {
    if let Some(name) = arg {
        return name
            .parse::<Tz>()
            .map_err(|_| anyhow::anyhow!("--tz {name:?} is not an IANA time zone name"));
    }
    Ok(iana_time_zone::get_timezone()
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(Tz::UTC))
}

/// An RFC 3339 instant, or a bare date (its midnight in `tz`).
pub fn instant(flag: &str, s: &str, tz: Tz) -> Result<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_rfc3339(s.trim()) {
        return Ok(t.with_timezone(&Utc));
    }
    if let Ok(d) = NaiveDate::parse_from_str(s.trim(), "%Y-%m-%d") {
        // Midnight may not exist (America/Santiago): resolved as RFC 5545 says.
        let midnight = d.and_time(chrono::NaiveTime::MIN);
        return Ok(time::resolve_local(midnight, Zone::Tz(tz), tz));
    }
    bail!("{flag} {s:?} is not an RFC 3339 instant such as 2026-01-01T00:00:00Z")
}

fn window(a: &WindowArgs) -> Result<(Calendar, DateTime<Utc>, DateTime<Utc>, Tz)> {
    let tz = floating_zone(a.tz.as_deref())?;
    let from = instant("--from", &a.from, tz)?;
    let to = instant("--to", &a.to, tz)?;
    Ok((load_reporting(&a.file, a.strict)?, from, to, tz))
}

#[derive(Serialize)]
struct OccurrenceOut {
    uid: String,
    recurrence_id: Option<String>,
    summary: Option<String>,
    start: String,
    end: Option<String>,
    all_day: bool,
    /// `"event"` (a `VEVENT`) or `"task"` (a `VTODO`, dated by its start or
    /// due time).
    kind: &'static str,
}

#[derive(Serialize)]
struct AlarmOut {
    uid: String,
    occurrence_start: String,
    trigger: String,
    action: String,
    summary: Option<String>,
}

fn print_json(value: &impl Serialize) -> Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    out.flush()?;
    Ok(())
}

/// `kairos occurrences`.
pub fn occurrences(a: &OccurrencesArgs) -> Result<()> {
    let (mut cal, from, to, tz) = window(&a.window)?;
    if a.no_tasks {
        cal.events.retain(|e| e.todo.is_none());
    }
    let occs = query::occurrences(&cal, from, to, tz, &Limits::default())?;
    let out: Vec<OccurrenceOut> = occs
        .iter()
        .map(|o| OccurrenceOut {
            kind: if o.event.todo.is_some() {
                "task"
            } else {
                "event"
            },
            uid: o.event.uid.clone(),
            recurrence_id: o.recurrence_id.map(|r| r.display(tz)),
            summary: o.event.summary.clone(),
            start: o.start.display(tz),
            end: o.end.map(|e| e.display(tz)),
            all_day: o.all_day(),
        })
        .collect();
    print_json(&out)
}

fn alarm_out(h: &alarms::AlarmHit<'_>, tz: Tz) -> AlarmOut {
    AlarmOut {
        uid: h.occurrence.event.uid.clone(),
        occurrence_start: h.occurrence.start.display(tz),
        trigger: h.trigger.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        action: h.alarm.action.clone(),
        summary: h.occurrence.event.summary.clone(),
    }
}

/// `kairos alarms`.
pub fn alarms(a: &WindowArgs) -> Result<()> {
    let (cal, from, to, tz) = window(a)?;
    let hits = alarms::alarms(&cal, from, to, tz, &Limits::default())?;
    let out: Vec<AlarmOut> = hits.iter().map(|h| alarm_out(h, tz)).collect();
    print_json(&out)
}

/// `kairos next`.
pub fn next(a: &NextArgs) -> Result<()> {
    let tz = floating_zone(a.tz.as_deref())?;
    let after = match &a.after {
        Some(s) => instant("--after", s, tz)?,
        None => Utc::now(),
    };
    let cal = load_reporting(&a.file, a.strict)?;
    let hit = alarms::next_alarm(&cal, after, tz, &Limits::default())?;
    print_json(&hit.map(|h| alarm_out(&h, tz)))
}

/// `kairos export`.
pub fn export(a: &ExportArgs) -> Result<()> {
    let cal = load_reporting(&a.file, a.strict)?;
    for zone in ics::custom_zones(&cal) {
        eprintln!(
            "kairos: warning: {}: time zone {:?} (the file's own VTIMEZONE) is written as UTC: \
             recurring events in it repeat in UTC",
            a.file.display(),
            zone.name()
        );
    }
    let mut out = std::io::stdout().lock();
    out.write_all(ics::write_calendar(&cal, Utc::now()).as_bytes())?;
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_serialise_as_json_objects_for_kairos_import() {
        let text = "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:x@y\r\nDTSTART:20260301T090000Z\r\n\
                    DTEND:20260301T080000Z\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n";
        let (_, w) =
            ics::parse_calendar_lenient(text.as_bytes(), &Limits::default()).expect("lenient read");
        let json = serde_json::to_value(&w).expect("serialise");
        assert_eq!(
            json,
            serde_json::json!([{
                "line": 5,
                "uid": "x@y",
                "component": "VEVENT",
                "problem": "DTEND: DTEND is before DTSTART",
                "action": "treated as zero length"
            }])
        );
    }
}
