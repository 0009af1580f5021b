//! `kairos caldav …`: two-way CalDAV accounts (kairos-caldav). Output is
//! JSON lines, like the other database commands.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, anyhow, bail};
use clap::Subcommand;
use kairos_caldav::secret::{self, SecretStore};
use kairos_caldav::status::{self, Status};
use kairos_caldav::{When, account, manage};
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
        /// A PEM file of a CA to trust for this server besides the web's
        /// roots (a self-hosted server whose certificate a private CA
        /// signed); kept with the account for every later sync.
        #[arg(long)]
        ca: Option<PathBuf>,
        /// Zone for floating times (default: the system zone).
        #[arg(long)]
        tz: Option<String>,
    },
    /// The accounts' calendars (JSON lines): name, colour, components,
    /// whether chosen, last sync; the account's background sync: last
    /// success, last error, failures in a row, next due.
    Calendars {
        /// Fetch each account's calendar list from its server first:
        /// calendars made there since are listed (not chosen: choose them
        /// with `kairos caldav edit --choose`); prints one
        /// {"refreshed","new","missing","dropped"} line per account first.
        #[arg(long)]
        refresh: bool,
    },
    /// Changes an account (by its URL; optional when there is one): its
    /// interval, which calendars sync, its password. Prints its calendars
    /// (JSON lines) after the change.
    Edit {
        /// The URL it was added with.
        url: Option<String>,
        /// How often it syncs in the background (e.g. 30s, 5m, 1h).
        #[arg(long)]
        every: Option<String>,
        /// Sync this calendar too (repeat for several).
        #[arg(long = "choose")]
        choose: Vec<String>,
        /// Stop syncing this calendar (repeat for several): its Kairos
        /// calendar and events stay here, as a local calendar; the
        /// server's copy is not touched.
        #[arg(long = "unchoose")]
        unchoose: Vec<String>,
        /// A new password, read from the first line of standard input;
        /// checked with the server before it replaces the old one.
        #[arg(long)]
        password_stdin: bool,
        /// Trust this CA certificate (PEM; a self-hosted server's own
        /// self-signed certificate works too) in place of the account's
        /// current one; checked with the server before it is kept.
        #[arg(long, conflicts_with = "no_ca")]
        ca: Option<PathBuf>,
        /// Trust only the public authorities again (drop the account's
        /// CA certificate); checked with the server first.
        #[arg(long)]
        no_ca: bool,
    },
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

/// One calendar line; `st`: the account's status and interval.
fn calendar_json(
    a: &CaldavAccount,
    c: &CaldavCalendar,
    st: &(Status, chrono::Duration),
) -> serde_json::Value {
    let (st, every) = st;
    json!({
        "account": a.url, "user": a.username, "name": c.name, "href": c.href,
        "color": c.color, "components": c.components.split(',').collect::<Vec<_>>(),
        "chosen": c.calendar_id.is_some(),
        "synced_at": c.synced_at.map(|t| t.to_rfc3339()),
        "account_status": st.to_json(), "every_seconds": every.num_seconds(),
        "private_ca": a.ca_pem.is_some(),
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
            ca,
            tz,
        } => {
            let every = crate::subscribe_cmds::every(&every)?;
            if !password_stdin {
                bail!(
                    "give the password on standard input with --password-stdin (never as an argument)"
                );
            }
            let password = read_password()?;
            let ca_pem = ca.map(|p| read_ca(&p)).transpose()?;
            let when = when(tz.as_deref())?;
            let secrets = secrets(db);
            let mut store = open(db)?;
            let login = account::Login {
                url: &url,
                user: &user,
                password: &password,
                ca_pem: ca_pem.as_deref(),
            };
            let (a, cals) = account::add(&mut store, secrets.as_ref(), &login, &calendars, when)?;
            eprintln!("kairos: password kept in {}", secrets.describe());
            status::set_every(&mut store, a.id, every)?;
            kairos_engine::daemon::notify_running(db);
            let st = (Status::load(&store, a.id)?, status::every(&store, a.id)?);
            for c in &cals {
                println!("{}", calendar_json(&a, c, &st));
            }
        }
        CaldavCmd::Calendars { refresh } => {
            let mut store = open(db)?;
            if refresh {
                let secrets = secrets(db);
                for (a, _) in account::list(&store)? {
                    let r = manage::refresh(&mut store, secrets.as_ref(), &a)?;
                    println!(
                        "{}",
                        json!({"refreshed": a.url, "user": a.username, "new": r.new,
                            "missing": r.missing, "dropped": r.dropped})
                    );
                }
            }
            for (a, cals) in account::list(&store)? {
                let st = (Status::load(&store, a.id)?, status::every(&store, a.id)?);
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
        CaldavCmd::Edit {
            url,
            every,
            choose,
            unchoose,
            password_stdin,
            ca,
            no_ca,
        } => {
            let ca = match (ca, no_ca) {
                (Some(path), _) => Some(Some(read_ca(&path)?)),
                (None, true) => Some(None),
                (None, false) => None,
            };
            let edits = Edits {
                every: every.as_deref(),
                choose: &choose,
                unchoose: &unchoose,
                password_stdin,
                ca,
            };
            edit(db, url.as_deref(), &edits, &when(None)?)?;
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

/// The first line of standard input, which must hold a password.
fn read_password() -> Result<String> {
    let mut password = String::new();
    std::io::stdin().lock().read_line(&mut password)?;
    let password = password.trim_end_matches(['\r', '\n']);
    if password.is_empty() {
        bail!("--password-stdin: standard input held no password");
    }
    Ok(password.to_owned())
}

/// The CA certificate(s) in the PEM file at `path`, checked.
fn read_ca(path: &Path) -> Result<String> {
    let pem = std::fs::read_to_string(path)
        .with_context(|| format!("--ca: cannot read {}", path.display()))?;
    kairos_tls::ca_certificates(&pem).map_err(|e| anyhow!("--ca {}: {e}", path.display()))?;
    Ok(pem)
}

/// What `kairos caldav edit` changes.
struct Edits<'a> {
    every: Option<&'a str>,
    choose: &'a [String],
    unchoose: &'a [String],
    password_stdin: bool,
    /// `--ca FILE` (its text) or `--no-ca` (`Some(None)`).
    ca: Option<Option<String>>,
}

/// `kairos caldav edit`: every check first (the interval, the names, the
/// new password and CA with the server), then the changes.
fn edit(db: &Path, url: Option<&str>, e: &Edits<'_>, when: &When) -> Result<()> {
    let (choose, unchoose) = (e.choose, e.unchoose);
    if e.every.is_none()
        && choose.is_empty()
        && unchoose.is_empty()
        && !e.password_stdin
        && e.ca.is_none()
    {
        bail!(
            "nothing to change: give --every, --choose, --unchoose, --password-stdin, --ca or \
             --no-ca"
        );
    }
    if let Some(both) = choose.iter().find(|n| unchoose.contains(n)) {
        bail!("{both:?} is both chosen and unchosen");
    }
    let every = e.every.map(crate::subscribe_cmds::every).transpose()?;
    let password = if e.password_stdin {
        Some(read_password()?)
    } else {
        None
    };
    let secrets = secrets(db);
    let mut store = open(db)?;
    let mut a = manage::pick(&store, url, "edit")?;
    let known = store.read(|r| r.caldav_calendars(a.id))?;
    if let Some(n) = choose
        .iter()
        .chain(unchoose)
        .find(|n| !known.iter().any(|c| &c.name == *n))
    {
        let names: Vec<&str> = known.iter().map(|c| c.name.as_str()).collect();
        bail!(
            "no calendar called {n:?} in {} (it has: {}; one made on the server since shows \
             after `kairos caldav calendars --refresh`)",
            a.url,
            names.join(", ")
        );
    }
    if password.is_some() || e.ca.is_some() {
        let new = manage::NewLogin {
            password: password.as_deref(),
            ca_pem: e.ca.as_ref().map(Option::as_deref),
        };
        // The account as stored now (its CA), for the lines printed below.
        a = manage::set_login(&mut store, secrets.as_ref(), &a, new)?;
        if password.is_some() {
            eprintln!(
                "kairos: new password checked and kept in {}",
                secrets.describe()
            );
        }
        match &e.ca {
            Some(Some(_)) => eprintln!("kairos: new CA certificate checked and kept"),
            Some(None) => eprintln!("kairos: the account trusts the public authorities only"),
            None => {}
        }
    }
    if let Some(every) = every {
        status::set_every(&mut store, a.id, every)?;
    }
    for name in choose {
        manage::choose(&mut store, &a, name, *when)?;
    }
    for name in unchoose {
        manage::unchoose(&mut store, &a, name)?;
        eprintln!("kairos: {name:?} no longer syncs; its events stay here as a local calendar");
    }
    status::sync_soon(&mut store, a.id, when.now)?;
    kairos_engine::daemon::notify_running(db);
    let st = (Status::load(&store, a.id)?, status::every(&store, a.id)?);
    for c in store.read(|r| r.caldav_calendars(a.id))? {
        println!("{}", calendar_json(&a, &c, &st));
    }
    Ok(())
}
