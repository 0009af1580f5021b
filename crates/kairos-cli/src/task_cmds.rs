//! `kairos tasks` and `kairos done`: the tasks (`VTODO`) in the database.

use std::path::Path;
use std::sync::Arc;

use anyhow::Result;
use kairos_engine::clock::Clock;
use kairos_engine::engine::Config;
use serde_json::json;

use crate::calendar_cmds::floating_zone;
use crate::engine_cmds::open;

/// `kairos tasks`: open tasks, due soonest first (undated last), one JSON
/// line each.
pub fn tasks(db: &Path, tz: Option<&str>, clock: Arc<dyn Clock>) -> Result<()> {
    let store = open(db)?;
    let floating = floating_zone(tz)?;
    for t in kairos_engine::tasks::open_tasks(&store, clock.now(), floating)? {
        println!(
            "{}",
            json!({
                "uid": t.uid,
                "calendar": t.calendar,
                "summary": t.summary,
                "due": t.due.map(|d| d.to_rfc3339()),
                "occurrence": t.occurrence,
                "priority": t.priority,
                "percent": t.percent,
                "overdue": t.overdue,
            })
        );
    }
    Ok(())
}

/// `kairos done UID`: marks a task (a recurring task's current occurrence)
/// done; its reminders stop here and, on a paired database, on the
/// account's other devices.
pub fn done(
    db: &Path,
    uid: &str,
    calendar: Option<&str>,
    tz: Option<&str>,
    clock: Arc<dyn Clock>,
) -> Result<()> {
    let mut store = open(db)?;
    let floating = floating_zone(tz)?;
    let d = kairos_engine::tasks::done(
        &mut store,
        uid,
        calendar,
        clock.now(),
        Config::default().horizon,
        floating,
    )?;
    drop(store);
    let note = crate::sync_cmds::push_after_change(db, clock);
    println!(
        "{}",
        json!({"done": d.uid, "calendar": d.calendar, "occurrence": d.occurrence, "dropped": d.dropped, "withdrawn": d.withdrawals.len()})
    );
    if let Some(note) = note {
        eprintln!("kairos: {note}");
    }
    Ok(())
}
