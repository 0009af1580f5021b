//! `kairos upcoming`: what will remind, soonest first. The stored (pending)
//! instances, and with `--until` those beyond the engine's horizon, computed
//! on the fly by `kairos_engine::preview` with the engine's own planner.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Result, bail};
use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;
use kairos_engine::clock::Clock;
use serde_json::json;

use crate::calendar_cmds::{floating_zone, instant};
use crate::engine_cmds::open;

/// One line of output.
struct Line {
    key: String,
    trigger: DateTime<Utc>,
    summary: serde_json::Value,
    occurrence_start: serde_json::Value,
    /// Computed on the fly (not stored yet).
    planned: bool,
}

/// `kairos upcoming [--until DATE|RFC3339] [--tz ZONE] [--limit N]`.
pub fn upcoming(
    db: &Path,
    limit: usize,
    until: Option<&str>,
    tz: Option<&str>,
    clock: Arc<dyn Clock>,
) -> Result<()> {
    let store = open(db)?;
    let fallback = floating_zone(tz)?;
    let mut lines: Vec<Line> = store
        .due(DateTime::<Utc>::MAX_UTC, limit)?
        .into_iter()
        .map(|i| {
            let p: serde_json::Value = serde_json::from_str(&i.payload).unwrap_or_default();
            Line {
                key: i.key,
                trigger: i.trigger_at,
                summary: p["summary"].clone(),
                occurrence_start: p["occurrence_start"].clone(),
                planned: false,
            }
        })
        .collect();
    if let Some(s) = until {
        // A bare date is read in the zone the person sees: --tz, else the
        // database's display zone, else the system's.
        let zone = match tz {
            Some(_) => fallback,
            None => kairos_engine::import::database_zone(&store, fallback)?,
        };
        let until = until_instant(s, zone)?;
        let far =
            kairos_engine::preview::beyond_horizon(&store, clock.now(), until, fallback, limit)?;
        lines.extend(far.into_iter().map(|p| Line {
            key: p.key,
            trigger: p.trigger,
            summary: json!(p.payload.summary),
            occurrence_start: json!(p.payload.occurrence_start),
            planned: true,
        }));
        lines.sort_by(|a, b| (a.trigger, &a.key).cmp(&(b.trigger, &b.key)));
        lines.truncate(limit);
    }
    for l in lines {
        println!(
            "{}",
            json!({"key": l.key, "trigger": l.trigger.to_rfc3339(), "summary": l.summary,
                "occurrence_start": l.occurrence_start, "planned": l.planned})
        );
    }
    Ok(())
}

/// `--until`: an RFC 3339 instant, or a date meaning the end of that day
/// in `zone` (the next day's start).
fn until_instant(s: &str, zone: Tz) -> Result<DateTime<Utc>> {
    if let Ok(d) = NaiveDate::parse_from_str(s.trim(), "%Y-%m-%d") {
        let Some(next) = d.succ_opt() else {
            bail!("--until {s:?} is past the last date this program can represent");
        };
        return instant("--until", &next.format("%Y-%m-%d").to_string(), zone);
    }
    instant("--until", s, zone).map_err(|_| {
        anyhow::anyhow!(
            "--until {s:?} is neither a date (YYYY-MM-DD) nor an RFC 3339 instant such as 2026-01-01T00:00:00Z"
        )
    })
}
