//! `kairos caldav …`: two-way CalDAV accounts (kairos-caldav). Output is
//! JSON lines, like the other database commands.

use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Result, bail};
use clap::Subcommand;
use kairos_caldav::secret::{self, SecretStore};
use kairos_caldav::status::{self, Status};
use kairos_caldav::{When, account};
use kairos_engine::clock::Clock;
use kairos_engine::engine::Config;
use kairos_store::{CaldavAccount, CaldavCalendar};
use serde_json::json;

use crate::calendar_cmds::floating_zone;
use crate::engine_cmds::open;

/// What `kairos caldav` does.
#[derive(Subcommand)]
pub enum CaldavCmd {
    /// Adds an account: discovers its calendars (server URL, or an e-mail
    /// address's domain), keeps the password in the OS secret store, and
    /// lists the calendars (JSON lines). Every calendar is chosen for sync
    /// unless some are named with --calendar.
    Add {
        /// The server (`https://dav.example.com/`), or an e-mail address.
        url: String,
        /// The user name.
        #[arg(long)]
        user: String,
        /// Read the password (or app password) from the first line of
        /// standard input. Required: a password is never an argument.
        #[arg(long)]
        password_stdin: bool,
        /// Sync only this calendar (repeat for several).
        #[arg(long = "calendar")]
        calendars: Vec<String>,
        /// How often a running daemon or the app syncs the account (e.g.
        /// 30s, 5m, 1h; 2 s to 1 day). A change made here is pushed soon
        /// after regardless.
        #[arg(long, default_value = "5m")]
        every: String,
        /// Zone for floating times (default: the system zone).
        #[arg(long)]
        tz: Option<String>,
    },
    /// The accounts' calendars (JSON lines): name, colour, components,
    /// whether chosen, last sync; the account's background sync: last
    /// success, last error, failures in a row, next due.
    Calendars,
    /// Syncs the chosen calendars both ways (or only --calendar, choosing
    /// it if it was not).
    Sync {
        /// The calendar's name on the server.
        #[arg(long)]
        calendar: Option<String>,
        /// Zone for floating times (default: the system zone).
        #[arg(long)]
        tz: Option<String>,
    },
    /// Removes an account (by its URL; optional when there is one): its
    /// password and sync state. Its Kairos calendars and events stay.
    Remove {
        /// The URL it was added with.
        url: Option<String>,
    },
}

/// The secret store for `db` (`KAIROS_SECRET_STORE=file|keyring`), saying
/// on stderr when the file is used because the OS store did not answer.
fn secrets(db: &Path) -> Box<dyn SecretStore> {
    let choice = std::env::var("KAIROS_SECRET_STORE").ok();
    let (store, note) = secret::for_database(db, choice.as_deref());
    if let Some(note) = note {
        eprintln!("kairos: {note}");
    }
    store
}

fn calendar_json(a: &CaldavAccount, c: &CaldavCalendar, st: &Status) -> serde_json::Value {
    json!({
        "account": a.url, "user": a.username, "name": c.name, "href": c.href,
        "color": c.color, "components": c.components.split(',').collect::<Vec<_>>(),
        "chosen": c.calendar_id.is_some(),
        "synced_at": c.synced_at.map(|t| t.to_rfc3339()),
        "account_status": st.to_json(),
    })
}

/// Runs one `kairos caldav` command.
///
/// # Errors
/// What the command failed at, with what to do.
pub fn run(db: &Path, cmd: CaldavCmd, clock: Arc<dyn Clock>) -> Result<()> {
    let when = |tz: Option<&str>| -> Result<When> {
        Ok(When {
            now: clock.now(),
            horizon: Config::default().horizon,
            floating: floating_zone(tz)?,
        })
    };
    match cmd {
        CaldavCmd::Add {
            url,
            user,
            password_stdin,
            calendars,
            every,
            tz,
        } => {
            let every = crate::subscribe_cmds::every(&every)?;
            if !password_stdin {
                bail!(
                    "give the password on standard input with --password-stdin (never as an argument)"
                );
            }
            let mut password = String::new();
            std::io::stdin().lock().read_line(&mut password)?;
            let password = password.trim_end_matches(['\r', '\n']);
            if password.is_empty() {
                bail!("--password-stdin: standard input held no password");
            }
            let when = when(tz.as_deref())?;
            let secrets = secrets(db);
            let mut store = open(db)?;
            let (a, cals) = account::add(
                &mut store,
                secrets.as_ref(),
                &url,
                &user,
                password,
                &calendars,
                when,
            )?;
            eprintln!("kairos: password kept in {}", secrets.describe());
            status::set_every(&mut store, a.id, every)?;
            kairos_engine::daemon::notify_running(db);
            let st = Status::load(&store, a.id)?;
            for c in &cals {
                println!("{}", calendar_json(&a, c, &st));
            }
        }
        CaldavCmd::Calendars => {
            let store = open(db)?;
            for (a, cals) in account::list(&store)? {
                let st = Status::load(&store, a.id)?;
                for c in &cals {
                    println!("{}", calendar_json(&a, c, &st));
                }
            }
        }
        CaldavCmd::Sync { calendar, tz } => {
            let when = when(tz.as_deref())?;
            let secrets = secrets(db);
            let mut store = open(db)?;
            let reports = account::sync(&mut store, secrets.as_ref(), calendar.as_deref(), when)?;
            drop(store);
            let changed = reports.iter().any(|r| {
                r.changed_here + r.deleted_here + r.conflicts + r.acknowledged_here + r.snoozed_here
                    > 0
            });
            for r in &reports {
                println!(
                    "{}",
                    json!({"calendar": r.calendar, "method": r.method, "fetched": r.fetched,
                        "changed_here": r.changed_here, "deleted_here": r.deleted_here,
                        "written_there": r.written_there, "deleted_there": r.deleted_there,
                        "conflicts": r.conflicts, "acknowledged_here": r.acknowledged_here,
                        "acknowledged_there": r.acknowledged_there,
                        "snoozed_here": r.snoozed_here, "snoozed_there": r.snoozed_there,
                        "warning_count": r.warnings.len(),
                        "warnings": r.warnings, "requests": r.requests})
                );
            }
            if changed && let Some(note) = crate::sync_cmds::push_after_change(db, clock) {
                eprintln!("kairos: {note}");
            }
        }
        CaldavCmd::Remove { url } => {
            let secrets = secrets(db);
            let mut store = open(db)?;
            let a = account::remove(&mut store, secrets.as_ref(), url.as_deref())?;
            println!("{}", json!({"removed": a.url, "user": a.username}));
        }
    }
    Ok(())
}
