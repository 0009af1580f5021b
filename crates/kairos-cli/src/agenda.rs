//! `kairos agenda`: the coming days in local time, for a person to read.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Result;
use chrono::{Duration, Utc};
use kairos_core::{Limits, query};

use crate::calendar_cmds::{floating_zone, instant, load_reporting};

/// What to show.
#[derive(clap::Args)]
pub struct AgendaArgs {
    /// An iCalendar file (`-` for standard input).
    pub file: PathBuf,
    /// How many days, starting with today.
    #[arg(long, default_value_t = 7, value_parser = clap::value_parser!(u16).range(1..=3660))]
    pub days: u16,
    /// Start on this day instead of today (RFC 3339 instant or YYYY-MM-DD).
    #[arg(long)]
    pub from: Option<String>,
    /// Zone to show times in (default: the system zone).
    #[arg(long)]
    pub tz: Option<String>,
    /// Refuse the file at its first problem instead of skipping or repairing
    /// what is broken (with a warning on stderr for each).
    #[arg(long)]
    pub strict: bool,
}

/// Prints the agenda.
pub fn run(a: &AgendaArgs) -> Result<()> {
    let tz = floating_zone(a.tz.as_deref())?;
    let from = match &a.from {
        Some(s) => instant("--from", s, tz)?,
        None => Utc::now(),
    };
    // Whole days: from midnight of the first day, in the zone shown.
    let first_day = from.with_timezone(&tz).date_naive();
    let from = instant("--from", &first_day.to_string(), tz)?;
    let cal = load_reporting(&a.file, a.strict)?;
    let to = from + Duration::days(i64::from(a.days));
    let occs = query::occurrences(&cal, from, to, tz, &Limits::default())?;
    let mut out = String::new();
    let mut day = None;
    for o in &occs {
        let start = o.start.instant.with_timezone(&tz);
        let date = o.start.date.unwrap_or_else(|| start.date_naive());
        if day != Some(date) {
            let _ = writeln!(out, "{}", date.format("%a %Y-%m-%d"));
            day = Some(date);
        }
        let when = if o.all_day() {
            "all day    ".to_owned()
        } else {
            let end = o
                .end
                .map(|e| e.instant.with_timezone(&tz).format("–%H:%M").to_string())
                .unwrap_or_default();
            format!("{}{end:<6}", start.format("%H:%M"))
        };
        let title = o.event.summary.as_deref().unwrap_or("(no title)");
        let place = o
            .event
            .location
            .as_deref()
            .map(|l| format!("  @ {l}"))
            .unwrap_or_default();
        let _ = writeln!(out, "  {when}  {title}{place}");
    }
    if occs.is_empty() {
        let _ = writeln!(out, "Nothing in the next {} days.", a.days);
    }
    print!("{out}");
    Ok(())
}
