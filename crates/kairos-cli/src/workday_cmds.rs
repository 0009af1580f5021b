//! `kairos calendar list|set`: each calendar's working week and whether it
//! is a holiday feed (issue #11 §3). JSON lines, like the other database
//! commands.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Result, anyhow};
use kairos_core::workdays::{parse_week, week_names};
use kairos_engine::clock::Clock;
use kairos_engine::workdays::WorkSettings;
use serde_json::json;

use crate::engine_cmds::open;

/// `kairos calendar …`.
#[derive(clap::Subcommand)]
pub enum CalendarCmd {
    /// Every calendar with its working week and holiday flag (JSON lines).
    List,
    /// Sets a calendar's working week and/or marks it as a holiday feed
    /// (its all-day events are then non-working days for every calendar);
    /// reminders with a working-day rule move at once.
    Set {
        /// The calendar's name.
        name: String,
        /// Working days, e.g. `mon,tue,wed,thu,fri` or `sun,mon,tue,wed,thu`.
        #[arg(long)]
        working_week: Option<String>,
        /// Whether this calendar is a holiday feed: `true` or `false`.
        #[arg(long)]
        holidays: Option<String>,
        /// Zone for floating times (default: the system zone).
        #[arg(long)]
        tz: Option<String>,
    },
}

fn line(s: &WorkSettings) -> serde_json::Value {
    json!({"name": s.name, "uid": s.uid, "working_week": week_names(s.week), "holidays": s.holidays})
}

/// Runs one `kairos calendar` command.
pub fn run(db: &Path, cmd: CalendarCmd, clock: Arc<dyn Clock>) -> Result<()> {
    match cmd {
        CalendarCmd::List => {
            for s in open(db)?.work_settings()? {
                println!("{}", line(&s));
            }
            Ok(())
        }
        CalendarCmd::Set {
            name,
            working_week,
            holidays,
            tz,
        } => {
            let week = working_week
                .as_deref()
                .map(|w| parse_week(w).map_err(|e| anyhow!("--working-week {w:?}: {e}")))
                .transpose()?;
            let holidays = holidays
                .as_deref()
                .map(|h| match h.trim().to_ascii_lowercase().as_str() {
                    "true" => Ok(true),
                    "false" => Ok(false),
                    _ => Err(anyhow!("--holidays {h:?}: expected true or false")),
                })
                .transpose()?;
            if week.is_none() && holidays.is_none() {
                anyhow::bail!("nothing to set: give --working-week and/or --holidays");
            }
            let floating = crate::calendar_cmds::floating_zone(tz.as_deref())?;
            let mut store = open(db)?;
            if !store.calendars()?.iter().any(|c| c.name == name) {
                anyhow::bail!("no calendar called {name:?}");
            }
            let (s, moved) = kairos_engine::workdays::set_work_time(
                &mut store,
                &name,
                week,
                holidays,
                clock.now(),
                floating,
            )?;
            drop(store);
            // A running daemon re-reads what is due next (and pushes the
            // change, an account setting, on a paired database); with none
            // it is pushed here.
            if let Some(note) = crate::sync_cmds::push_after_change(db, clock) {
                eprintln!("kairos: {note}");
            }
            let mut out = line(&s);
            out["moved"] = json!(moved);
            println!("{out}");
            Ok(())
        }
    }
}
