//! The commands that use the reminder database: `import`,
//! `daemon`, `snooze`, `dismiss`, `why`, `log`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration as StdDuration;

use anyhow::{Context, Result, bail};
use chrono::{DateTime, Duration, Utc};
use kairos_engine::channel::{Channel, CommandChannel, StdoutChannel};
use kairos_engine::clock::{Clock, OffsetFileClock, SystemClock};
use kairos_engine::engine::Config;
use kairos_engine::platform::{self, stop::Stop};
use kairos_host::{Host, Options, Waker};
use kairos_store::Store;
use serde_json::json;

use crate::calendar_cmds::{floating_zone, instant, load};

/// The default database: `$XDG_DATA_HOME/kairos/kairos.db` (on Windows
/// `%LOCALAPPDATA%\kairos\kairos.db`; see `platform::dirs`).
pub fn default_db() -> PathBuf {
    platform::dirs::default_db()
}

/// Opens (creating) the database. A new file is made readable by its owner
/// only (it may come to hold a sync token), and so are its WAL files.
pub fn open(db: &Path) -> Result<Store> {
    if let Some(dir) = db.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let new = !db.exists();
    let store = Store::open(db)?;
    if new {
        owner_only(db);
    }
    Ok(store)
}

/// Owner-only (mode 0600 on Unix; `platform::perms` says what Windows does)
/// for the database and its `-wal`/`-shm` files.
fn owner_only(db: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut p = db.as_os_str().to_owned();
        p.push(suffix);
        platform::perms::restrict(Path::new(&p));
    }
}

/// The clock: the system's, shifted by `--clock-offset` seconds or by the
/// seconds in `--clock-offset-file` (tests).
pub fn clock(offset_secs: i64, offset_file: Option<&Path>) -> Result<Arc<dyn Clock>> {
    Ok(match offset_file {
        Some(path) => Arc::new(OffsetFileClock::open(path).map_err(anyhow::Error::msg)?),
        None => Arc::new(SystemClock::shifted(Duration::seconds(offset_secs))),
    })
}

/// `kairos import`: leniently by default (what cannot be read is skipped or
/// repaired, each with a warning in the JSON it prints), or `strict`ly
/// (all or nothing). Fails when nothing at all could be imported. With
/// `replace`, the file becomes the calendar's content (what it no longer
/// has is deleted).
pub fn import(
    db: &Path,
    file: &Path,
    calendar: Option<&str>,
    tz: Option<&str>,
    (strict, replace): (bool, bool),
    clock: Arc<dyn Clock>,
) -> Result<()> {
    let loaded = load(file, strict)?;
    let (cal, warnings) = (loaded.calendar, loaded.warnings);
    if cal.events.is_empty() && !warnings.is_empty() {
        bail!(
            "{}: nothing could be imported ({} warnings; the first: {})",
            file.display(),
            warnings.len(),
            warnings[0]
        );
    }
    let name = calendar
        .map(str::to_owned)
        .or_else(|| cal.name.clone())
        .unwrap_or_else(|| "default".to_owned());
    let floating = floating_zone(tz)?;
    let mut store = open(db)?;
    let mode = if replace {
        kairos_engine::import::Mode::Replace
    } else {
        kairos_engine::import::Mode::Merge
    };
    let r = kairos_engine::import::import_with(
        &mut store,
        &name,
        &cal,
        mode,
        clock.now(),
        Config::default().horizon,
        floating,
    )?;
    drop(store);
    let note = crate::sync_cmds::push_after_change(db, clock);
    println!(
        "{}",
        json!({"calendar": name, "events": r.events, "changed": r.changed, "dropped": r.dropped,
            "scheduled": r.scheduled, "deleted": r.deleted, "warning_count": warnings.len(), "warnings": warnings})
    );
    if let Some(note) = note {
        eprintln!("kairos: {note}");
    }
    Ok(())
}

/// `kairos delete`: removes a series and its pending reminders.
pub fn delete(db: &Path, uid: &str, calendar: &str, clock: Arc<dyn Clock>) -> Result<()> {
    let mut store = open(db)?;
    let Some(cal) = store.calendars()?.into_iter().find(|c| c.name == calendar) else {
        bail!("no calendar called {calendar:?}");
    };
    if store.read(|r| r.series_events(cal.id, uid))?.is_empty() {
        bail!("no event {uid:?} in calendar {calendar:?}");
    }
    let r = kairos_engine::import::replace_series(
        &mut store,
        calendar,
        uid,
        &[],
        clock.now(),
        Config::default().horizon,
        chrono_tz::UTC,
    )?;
    drop(store);
    let note = crate::sync_cmds::push_after_change(db, clock);
    println!(
        "{}",
        json!({"deleted": uid, "calendar": calendar, "dropped": r.dropped})
    );
    if let Some(note) = note {
        eprintln!("kairos: {note}");
    }
    Ok(())
}

/// How the daemon delivers: one channel per `--sink`, a command given
/// `timeout` per delivery.
pub fn sink(spec: &str, timeout: StdDuration) -> Result<Box<dyn Channel>> {
    if spec == "stdout" {
        return Ok(Box::new(StdoutChannel::stdout()));
    }
    if let Some(cmd) = spec.strip_prefix("command:") {
        return Ok(Box::new(CommandChannel::new(cmd, timeout)));
    }
    bail!("--sink {spec:?}: expected `stdout` or `command:CMD`")
}

/// The channels of `--sink` (repeatable; each kind at most once: a
/// reminder is delivered once per channel name).
fn sinks(specs: &[String], timeout: StdDuration) -> Result<Vec<Box<dyn Channel>>> {
    let mut channels: Vec<Box<dyn Channel>> = Vec::with_capacity(specs.len());
    for spec in specs {
        let ch = sink(spec, timeout)?;
        if channels.iter().any(|c| c.name() == ch.name()) {
            bail!(
                "--sink {spec:?}: a {} sink is already given (one of each kind)",
                ch.name()
            );
        }
        channels.push(ch);
    }
    Ok(channels)
}

/// `kairos daemon`: the engine host (`kairos_host`: lock, engine thread,
/// the live sync connection on a paired database) delivering to every sink
/// in `sink_specs` concurrently (a command is given `timeout` per
/// delivery), until asked to stop (SIGTERM or SIGINT; on Windows Ctrl-C,
/// Ctrl-Break or the console closing: `platform::stop`). The deliveries in
/// hand are finished first.
pub fn daemon(
    db: &Path,
    sink_specs: &[String],
    timeout: StdDuration,
    tz: Option<&str>,
    clock: Arc<dyn Clock>,
) -> Result<()> {
    let channels = sinks(sink_specs, timeout)?;
    let config = Config {
        floating: floating_zone(tz)?,
        ..Config::default()
    };
    drop(open(db)?); // created owner-only, as every command does
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    // A stop is listened for from before the host takes the lock: one asked
    // for while the first batch is being delivered still means "finish it
    // and exit cleanly".
    let mut stop = {
        let _rt = rt.enter();
        Stop::new()?
    };
    let host = Host::start(Options {
        db: db.to_owned(),
        clock,
        channels,
        config,
        sync: true,
        on_fired: Box::new(|_| {}),
        on_locked: Box::new(|_| {}),
        waker: Waker::default(),
    })?;
    rt.block_on(async {
        tokio::select! {
            () = stop.requested() => {}
            () = host.ended() => {}
        }
    });
    host.stop()?;
    Ok(())
}

/// `kairos dismiss`: acknowledged; it will not fire (again). On a paired
/// database it goes to the other devices too, unless `here`.
pub fn dismiss(db: &Path, key: &str, here: bool, clock: Arc<dyn Clock>) -> Result<()> {
    let mut store = open(db)?;
    if here {
        kairos_engine::actions::dismiss_here(&mut store, key, clock.now())?;
        kairos_engine::daemon::notify_running(db);
    } else {
        kairos_engine::actions::dismiss(&mut store, key, clock.now())?;
        drop(store);
        if let Some(note) = crate::sync_cmds::push_after_change(db, clock) {
            eprintln!("kairos: {note}");
        }
    }
    println!(
        "{}",
        json!({"key": key, "state": "acknowledged", "here_only": here})
    );
    Ok(())
}

/// `kairos snooze`: a new instance `DURATION` from now (RFC 9074: a snooze is
/// its own alarm, related to the one it snoozes).
pub fn snooze(db: &Path, key: &str, duration: &str, clock: Arc<dyn Clock>) -> Result<()> {
    let d =
        kairos_core::ics::values::duration(&format!("PT{}", duration.trim().to_ascii_uppercase()))
            .or_else(|_| kairos_core::ics::values::duration(duration))
            .map_err(|_| {
                anyhow::anyhow!(
                    "duration {duration:?}: expected e.g. 10m, 1h, 1h30m or an ISO duration (PT15M)"
                )
            })?;
    if d.is_non_positive() {
        bail!("duration {duration:?} must be positive");
    }
    let mut store = open(db)?;
    let (new_key, at) = kairos_engine::actions::snooze(&mut store, key, d.approx(), clock.now())?;
    drop(store);
    if let Some(note) = crate::sync_cmds::push_after_change(db, clock) {
        eprintln!("kairos: {note}");
    }
    println!(
        "{}",
        json!({"key": new_key, "snooze_of": key, "trigger": at.to_rfc3339()})
    );
    Ok(())
}

/// `kairos why`: the state, every transition and every delivery attempt.
pub fn why(db: &Path, key: &str) -> Result<()> {
    let store = open(db)?;
    let Some(i) = store.get(key)? else {
        bail!(
            "no reminder with key {key:?}: it was never scheduled (not imported, or outside the horizon yet)"
        )
    };
    println!(
        "{key}: {} (due {}, attempts {})",
        i.state,
        i.trigger_at.to_rfc3339(),
        i.attempts
    );
    for a in store.audit_of(key)? {
        let from = a.from.map_or("-".to_owned(), |s| s.to_string());
        let to = a.to.map_or("removed".to_owned(), |s| s.to_string());
        println!("  {}  {from} -> {to}  {}", a.at.to_rfc3339(), a.reason);
    }
    for d in store.deliveries_of(key)? {
        let err = d.error.map(|e| format!(": {e}")).unwrap_or_default();
        let lat = d
            .latency_ms
            .map(|l| format!(" ({l} ms after due)"))
            .unwrap_or_default();
        println!(
            "  {}  delivery via {}: {}{err}{lat}",
            d.at.to_rfc3339(),
            d.channel,
            d.outcome.as_str()
        );
    }
    Ok(())
}

/// `kairos log`: transitions since a moment, and the counters.
pub fn log(db: &Path, since: Option<&str>) -> Result<()> {
    let store = open(db)?;
    let since = match since {
        Some(s) => instant("--since", s, chrono_tz::UTC)?,
        None => DateTime::<Utc>::MIN_UTC,
    };
    let (mut on_time, mut late, mut missed, mut dups, mut abandoned) = (0, 0, 0, 0, 0);
    for a in store.audit_since(since, 1_000_000)? {
        if a.sync_note {
            println!("{}  {}  sync  {}", a.at.to_rfc3339(), a.key, a.reason);
            continue;
        }
        let to = a.to.map_or("removed".to_owned(), |s| s.to_string());
        println!("{}  {}  -> {to}  {}", a.at.to_rfc3339(), a.key, a.reason);
        match a.reason.as_str() {
            "delivered on_time" => on_time += 1,
            "delivered late" => late += 1,
            "delivered missed" => missed += 1,
            r if r.starts_with("duplicate delivery") => dups += 1,
            r if r.starts_with("abandoned") => abandoned += 1,
            _ => {}
        }
    }
    println!(
        "delivered: on_time={on_time} late={late} missed={missed}; duplicates_prevented={dups} abandoned={abandoned}"
    );
    let counts: Vec<String> = store
        .counters()?
        .iter()
        .map(|(s, n)| format!("{s}={n}"))
        .collect();
    println!("counters: {}", counts.join(" "));
    Ok(())
}
