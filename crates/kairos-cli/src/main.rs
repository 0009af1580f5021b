//! The `kairos` command line: calendar queries over iCalendar files, with JSON
//! output for scripts (see `kairos --help`). The reminder daemon comes with the
//! engine.

mod agenda;
mod calendar_cmds;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Kairos: a calendar whose reminders never miss and never repeat.
#[derive(Parser)]
#[command(name = "kairos", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Every occurrence of every event whose start lies in [FROM, TO), as JSON.
    Occurrences(calendar_cmds::WindowArgs),
    /// Every alarm trigger instant in [FROM, TO), as JSON.
    Alarms(calendar_cmds::WindowArgs),
    /// The first alarm trigger at or after --after (default: now), as JSON (`null` if none).
    Next(calendar_cmds::NextArgs),
    /// The coming days' events, for people.
    Agenda(agenda::AgendaArgs),
    /// Reads a file and writes it back as Kairos stores it (normalised iCalendar).
    Export(calendar_cmds::ExportArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Occurrences(a) => calendar_cmds::occurrences(&a),
        Command::Alarms(a) => calendar_cmds::alarms(&a),
        Command::Next(a) => calendar_cmds::next(&a),
        Command::Agenda(a) => agenda::run(&a),
        Command::Export(a) => calendar_cmds::export(&a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One line, whatever the cause chain: scripts read the first line.
            let msg = format!("{e:#}").replace('\n', " ");
            eprintln!("kairos: {msg}");
            ExitCode::FAILURE
        }
    }
}
