//! `kairos subscribe URL` and `kairos subscriptions [refresh [NAME] |
//! remove NAME]`: ICS feeds (see `kairos-feeds`). A running daemon or
//! desktop app refreshes them on schedule; these commands refresh now.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use kairos_engine::clock::Clock;
use kairos_feeds::{Outcome, Refreshed, Refresher};
use serde_json::{Value, json};

use crate::calendar_cmds::floating_zone;
use crate::engine_cmds::open;

/// `kairos subscribe`.
#[derive(Args)]
pub struct SubscribeArgs {
    /// The feed: http://, https:// or webcal:// (fetched as https://).
    url: String,
    /// Calendar name (default: the feed's X-WR-CALNAME, else the URL's host).
    #[arg(long)]
    calendar: Option<String>,
    /// How often a running daemon or the app refreshes it (5m to 7d;
    /// e.g. 30m, 1h, 1d).
    #[arg(long, default_value = "1h")]
    every: String,
    /// Zone for floating times (default: the system zone).
    #[arg(long)]
    tz: Option<String>,
}

/// `kairos subscriptions …`.
#[derive(Subcommand)]
pub enum SubsCmd {
    /// Refreshes now: every subscription, or the one of calendar NAME.
    Refresh {
        /// The calendar's name.
        name: Option<String>,
    },
    /// Ends a subscription; the calendar and its events stay, no longer
    /// refreshed.
    Remove {
        /// The calendar's name.
        name: String,
    },
}

pub(crate) fn every(text: &str) -> Result<chrono::Duration> {
    let d = kairos_core::ics::values::duration(&format!("PT{}", text.trim().to_ascii_uppercase()))
        .or_else(|_| {
            let t = text.trim().to_ascii_uppercase();
            kairos_core::ics::values::duration(&format!("P{t}"))
        })
        .or_else(|_| kairos_core::ics::values::duration(text))
        .map_err(|_| anyhow::anyhow!("--every {text:?}: expected e.g. 30m, 1h, 1d or PT1H"))?;
    Ok(d.approx())
}

fn refresher(tz: Option<&str>) -> Result<Refresher> {
    Ok(Refresher::new(floating_zone(tz)?)?)
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

/// One refresh as a JSON line: `calendar`, `status` (`updated`,
/// `not_modified`, `error`), what changed or the error, `next_refresh`.
fn line(r: &Refreshed) -> Value {
    let mut v = json!({"calendar": r.calendar, "next_refresh": r.next_at.to_rfc3339()});
    match &r.outcome {
        Outcome::NotModified => v["status"] = "not_modified".into(),
        Outcome::Updated { report, warnings } => {
            v["status"] = "updated".into();
            v["events"] = report.events.into();
            v["changed"] = report.changed.into();
            v["deleted"] = report.deleted.into();
            v["warning_count"] = warnings.len().into();
            v["warnings"] = json!(warnings);
        }
        Outcome::Failed(e) => {
            v["status"] = "error".into();
            v["error"] = e.to_string().into();
        }
    }
    v
}

/// `kairos subscribe`: fetches at once; nothing is stored if that fails.
pub fn subscribe(db: &Path, a: &SubscribeArgs, clock: Arc<dyn Clock>) -> Result<()> {
    let every = every(&a.every)?;
    let r = refresher(a.tz.as_deref())?;
    let mut store = open(db)?;
    let done = runtime()?.block_on(r.subscribe(
        &mut store,
        &a.url,
        a.calendar.as_deref(),
        every,
        clock.now(),
    ))?;
    drop(store);
    let note = crate::sync_cmds::push_after_change(db, clock);
    let mut v = line(&done);
    v["url"] = kairos_feeds::url::feed_url(&a.url)?.into();
    println!("{v}");
    if let Some(note) = note {
        eprintln!("kairos: {note}");
    }
    Ok(())
}

/// `kairos subscriptions [refresh [NAME] | remove NAME]`.
pub fn run(db: &Path, cmd: Option<SubsCmd>, clock: Arc<dyn Clock>) -> Result<()> {
    let mut store = open(db)?;
    match cmd {
        None => {
            for s in store.read(|r| r.subscriptions())? {
                let t = |t: Option<chrono::DateTime<chrono::Utc>>| t.map(|t| t.to_rfc3339());
                println!(
                    "{}",
                    json!({"calendar": s.name, "url": s.url, "every_secs": s.every_secs,
                        "last_refresh": t(s.last_refresh), "last_ok": t(s.last_ok),
                        "last_error": s.last_error, "next_refresh": s.next_at.to_rfc3339()})
                );
            }
            Ok(())
        }
        Some(SubsCmd::Remove { name }) => {
            kairos_feeds::refresh::remove(&mut store, &name, clock.now())?;
            drop(store);
            let note = crate::sync_cmds::push_after_change(db, clock);
            println!("{}", json!({"removed": name}));
            if let Some(note) = note {
                eprintln!("kairos: {note}");
            }
            Ok(())
        }
        Some(SubsCmd::Refresh { name }) => {
            let r = refresher(None)?;
            let now = clock.now();
            let rt = runtime()?;
            let done = match name {
                Some(n) => vec![rt.block_on(r.refresh_named(&mut store, &n, now))?],
                None => rt.block_on(r.refresh_due(&mut store, now, true))?,
            };
            drop(store);
            let failed = done
                .iter()
                .filter(|d| matches!(d.outcome, Outcome::Failed(_)))
                .count();
            let updated = done
                .iter()
                .any(|d| matches!(d.outcome, Outcome::Updated { .. }));
            if updated && let Some(note) = crate::sync_cmds::push_after_change(db, clock) {
                eprintln!("kairos: {note}");
            }
            for d in &done {
                println!("{}", line(d));
            }
            if failed > 0 {
                bail!(
                    "{failed} of {} subscriptions could not be refreshed (see \"error\"; each calendar kept its last good copy)",
                    done.len()
                );
            }
            Ok(())
        }
    }
}
