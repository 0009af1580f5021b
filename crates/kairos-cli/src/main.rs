//! The `kairos` command line: calendar queries over iCalendar files, with JSON
//! output for scripts (see `kairos --help`). The reminder daemon comes with the
//! engine.

mod agenda;
mod caldav_cmds;
mod calendar_cmds;
mod engine_cmds;
mod subscribe_cmds;
mod sync_cmds;
mod task_cmds;
mod upcoming_cmd;
mod workday_cmds;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Kairos: a calendar whose reminders never miss and never repeat.
#[derive(Parser)]
#[command(name = "kairos", version, about)]
struct Cli {
    /// The reminder database (default: $XDG_DATA_HOME/kairos/kairos.db).
    #[arg(long, global = true)]
    db: Option<std::path::PathBuf>,
    /// Test only: run as if the clock were this many seconds ahead.
    #[arg(
        long,
        global = true,
        default_value_t = 0,
        hide = true,
        allow_hyphen_values = true
    )]
    clock_offset: i64,
    /// Test only: shift the clock by the seconds written in this file,
    /// re-read whenever the OS reports the real-time clock was set.
    #[arg(long, global = true, hide = true, conflicts_with = "clock_offset")]
    clock_offset_file: Option<std::path::PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Every occurrence of every event and task whose start lies in [FROM, TO),
    /// as JSON; `"kind"` tells events from tasks, `--no-tasks` leaves tasks out.
    Occurrences(calendar_cmds::OccurrencesArgs),
    /// Every alarm trigger instant in [FROM, TO), as JSON.
    Alarms(calendar_cmds::WindowArgs),
    /// The first alarm trigger at or after --after (default: now), as JSON (`null` if none).
    Next(calendar_cmds::NextArgs),
    /// The coming days' events, for people.
    Agenda(agenda::AgendaArgs),
    /// Reads a file and writes it back as Kairos stores it (normalised iCalendar).
    Export(calendar_cmds::ExportArgs),
    /// Stores a calendar file's events in the database and schedules their reminders.
    Import {
        /// An iCalendar file (`-` for standard input).
        file: std::path::PathBuf,
        /// Calendar name (default: the file's X-WR-CALNAME, else "default").
        #[arg(long)]
        calendar: Option<String>,
        /// Zone for floating times (default: the system zone).
        #[arg(long)]
        tz: Option<String>,
        /// All or nothing: refuse the file at its first problem (default:
        /// skip or repair what is wrong, with a warning each).
        #[arg(long)]
        strict: bool,
        /// The file replaces the calendar's content: events no longer in
        /// it are deleted (unchanged reminders keep their keys).
        #[arg(long)]
        replace: bool,
    },
    /// Subscribes a calendar to an ICS feed (http, https, webcal): fetched
    /// now, then refreshed by a running daemon or the desktop app.
    Subscribe(subscribe_cmds::SubscribeArgs),
    /// The subscriptions (JSON lines); `refresh [NAME]`, `remove NAME`.
    Subscriptions {
        #[command(subcommand)]
        cmd: Option<subscribe_cmds::SubsCmd>,
    },
    /// Deletes an event (every occurrence) from the database; on a paired
    /// database from the account's other devices too.
    Delete {
        /// The event's UID.
        uid: String,
        /// Its calendar's name.
        #[arg(long, default_value = "default")]
        calendar: String,
    },
    /// Pending reminders in the database, soonest first (JSON lines);
    /// with `--until`, also those beyond the engine's horizon, computed
    /// on the fly (`"planned": true`).
    Upcoming {
        /// How many.
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// Also list reminders due before this instant (RFC 3339) or until
        /// the end of this date (YYYY-MM-DD, in --tz); at most 366 days ahead.
        #[arg(long)]
        until: Option<String>,
        /// Zone of a bare --until date and of floating times (default: the
        /// database's display zone, else the system zone).
        #[arg(long)]
        tz: Option<String>,
    },
    /// Open tasks (VTODO), due soonest first; undated ones last (JSON lines).
    Tasks {
        /// Zone for floating times (default: the system zone).
        #[arg(long)]
        tz: Option<String>,
    },
    /// Marks a task done (a recurring task: its current occurrence); its
    /// reminders stop, here and on the account's other devices.
    Done {
        /// The task's UID.
        uid: String,
        /// Its calendar's name (needed only when several hold that UID).
        #[arg(long)]
        calendar: Option<String>,
        /// Zone for floating times (default: the system zone).
        #[arg(long)]
        tz: Option<String>,
    },
    /// Fires reminders at their time until stopped (SIGTERM / Ctrl-C).
    Daemon {
        /// Where reminders go: `stdout` (one JSON line each) or `command:CMD`
        /// (the reminder as JSON on its stdin). Repeat it for both: each
        /// reminder goes to every sink, concurrently.
        #[arg(long, default_values_t = [String::from("stdout")])]
        sink: Vec<String>,
        /// Seconds a `command:` sink may take per reminder before it is
        /// stopped and the delivery retried (a timeout is a failed attempt).
        #[arg(long, default_value_t = kairos_engine::channel::COMMAND_TIMEOUT.as_secs_f64(), value_parser = seconds)]
        sink_timeout: f64,
        /// Zone for floating times (default: the system zone).
        #[arg(long)]
        tz: Option<String>,
    },
    /// Snoozes a reminder: it fires again DURATION from now (10m, 1h, PT15M).
    Snooze {
        /// The reminder's key.
        key: String,
        /// How long.
        duration: String,
    },
    /// Dismisses a reminder: it will not fire (again), here and on the
    /// account's other devices.
    Dismiss {
        /// The reminder's key.
        key: String,
        /// On this device only: the other devices still remind.
        #[arg(long)]
        here: bool,
    },
    /// Calendars in the database: working week, holiday feeds.
    Calendar {
        #[command(subcommand)]
        cmd: workday_cmds::CalendarCmd,
    },
    /// Two-way CalDAV accounts (Nextcloud, Fastmail, iCloud, Radicale, …).
    Caldav {
        #[command(subcommand)]
        cmd: caldav_cmds::CaldavCmd,
    },
    /// Sync between a person's devices (see docs/sync-protocol.md).
    Sync {
        #[command(subcommand)]
        cmd: sync_cmds::SyncCmd,
    },
    /// Why a reminder fired, did not fire, or will fire when.
    Why {
        /// The reminder's key.
        key: String,
    },
    /// Every state change since a moment, and the counters.
    Log {
        /// RFC 3339 instant or date.
        #[arg(long)]
        since: Option<String>,
    },
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One line, whatever the cause chain: scripts read the first line.
            let msg = format!("{e:#}").replace('\n', " ");
            eprintln!("kairos: {msg}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let db = cli.db.clone().unwrap_or_else(engine_cmds::default_db);
    let clock = engine_cmds::clock(cli.clock_offset, cli.clock_offset_file.as_deref())?;
    match cli.command {
        Command::Import {
            file,
            calendar,
            tz,
            strict,
            replace,
        } => engine_cmds::import(
            &db,
            &file,
            calendar.as_deref(),
            tz.as_deref(),
            (strict, replace),
            clock,
        ),
        Command::Subscribe(a) => subscribe_cmds::subscribe(&db, &a, clock),
        Command::Subscriptions { cmd } => subscribe_cmds::run(&db, cmd, clock),
        Command::Delete { uid, calendar } => engine_cmds::delete(&db, &uid, &calendar, clock),
        Command::Upcoming { limit, until, tz } => {
            upcoming_cmd::upcoming(&db, limit, until.as_deref(), tz.as_deref(), clock)
        }
        Command::Tasks { tz } => task_cmds::tasks(&db, tz.as_deref(), clock),
        Command::Done { uid, calendar, tz } => {
            task_cmds::done(&db, &uid, calendar.as_deref(), tz.as_deref(), clock)
        }
        Command::Daemon {
            sink,
            sink_timeout,
            tz,
        } => engine_cmds::daemon(
            &db,
            &sink,
            std::time::Duration::from_secs_f64(sink_timeout),
            tz.as_deref(),
            clock,
        ),
        Command::Snooze { key, duration } => engine_cmds::snooze(&db, &key, &duration, clock),
        Command::Dismiss { key, here } => engine_cmds::dismiss(&db, &key, here, clock),
        Command::Calendar { cmd } => workday_cmds::run(&db, cmd, clock),
        Command::Sync { cmd } => sync_cmds::run(&db, cmd, clock),
        Command::Caldav { cmd } => caldav_cmds::run(&db, cmd, clock),
        Command::Why { key } => engine_cmds::why(&db, &key),
        Command::Log { since } => engine_cmds::log(&db, since.as_deref()),
        Command::Occurrences(a) => calendar_cmds::occurrences(&a),
        Command::Alarms(a) => calendar_cmds::alarms(&a),
        Command::Next(a) => calendar_cmds::next(&a),
        Command::Agenda(a) => agenda::run(&a),
        Command::Export(a) => calendar_cmds::export(&a),
    }
}

/// `--sink-timeout`: positive seconds, at most a day.
fn seconds(s: &str) -> std::result::Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 86_400.0 => Ok(v),
        _ => Err(format!(
            "{s:?}: expected seconds, more than 0 and at most 86400 (e.g. 10 or 0.5)"
        )),
    }
}
