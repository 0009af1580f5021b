//! Formatting and checks for what `kairos-bench` prints.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use kairos_core::Limits;
use kairos_core::alarms::{self, AlarmHit};
use kairos_core::model::Calendar;
use kairos_core::query::Occurrence;

use crate::dateutil::Report;
use crate::events::Spec;

/// A duration at a readable scale.
pub fn fmt_dur(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 {
        format!("{s:.3} s")
    } else if s >= 1e-3 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

fn sorted(times: &[Duration]) -> Vec<Duration> {
    let mut v = times.to_vec();
    v.sort_unstable();
    v
}

/// The `p`-th percentile (nearest rank); zero for no samples.
pub fn percentile(times: &[Duration], p: usize) -> Duration {
    let v = sorted(times);
    if v.is_empty() {
        return Duration::ZERO;
    }
    let rank = (p * v.len()).div_ceil(100).clamp(1, v.len());
    v[rank - 1]
}

/// The median (the lower one for an even count).
pub fn median(times: &[Duration]) -> Duration {
    let v = sorted(times);
    v.get(v.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or_default()
}

/// Wall-clock times of repeated runs, and their mean CPU time.
pub struct Timing {
    /// Wall-clock time of each run.
    pub wall: Vec<Duration>,
    /// Process CPU time per run (mean), when the OS tells it: steadier than
    /// wall-clock time when other work shares the two cores.
    pub cpu: Option<Duration>,
}

impl Timing {
    fn cpu_text(&self) -> String {
        self.cpu
            .map_or_else(String::new, |c| format!(", CPU {}/run", fmt_dur(c)))
    }

    /// `median X (min Y, N runs, CPU Z/run)`.
    pub fn summary(&self) -> String {
        let min = self.wall.iter().min().copied().unwrap_or_default();
        format!(
            "median {} (min {}, {} runs{})",
            fmt_dur(median(&self.wall)),
            fmt_dur(min),
            self.wall.len(),
            self.cpu_text()
        )
    }

    /// `min / median / p99 / max`, and CPU per run.
    pub fn percentiles(&self) -> String {
        let v = sorted(&self.wall);
        format!(
            "min {}, median {}, p99 {}, max {}{}",
            fmt_dur(v.first().copied().unwrap_or_default()),
            fmt_dur(median(&v)),
            fmt_dur(percentile(&v, 99)),
            fmt_dur(v.last().copied().unwrap_or_default()),
            self.cpu_text()
        )
    }
}

/// User + system CPU time of this process so far (Linux `/proc/self/stat`,
/// in clock ticks of 10 ms).
pub fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after ')'.
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // USER_HZ is 100 on every Linux architecture that /proc reports to.
    Some(Duration::from_millis(ticks * 10))
}

/// CPU model, core count and load, from the OS.
pub fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    // The load tells whether other work shared the cores during the run.
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into());
    format!("{model}, {cores} cores, load average {load} at start")
}

fn counts<K: std::fmt::Display>(m: BTreeMap<K, usize>) -> String {
    m.into_iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// How many events of each rule shape and zone, and with which rule parts.
pub fn mix(specs: &[Spec]) -> String {
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    let mut zones: BTreeMap<&str, usize> = BTreeMap::new();
    let (mut count, mut until, mut ex, mut interval, mut two_alarms) = (0, 0, 0, 0, 0);
    for s in specs {
        *kinds.entry(format!("{:?}", s.kind)).or_default() += 1;
        let zone = if s.all_day {
            "all-day"
        } else {
            s.tzid.unwrap_or("floating")
        };
        *zones.entry(zone).or_default() += 1;
        count += usize::from(s.rrule.contains("COUNT="));
        interval += usize::from(s.rrule.contains("INTERVAL="));
        until += usize::from(s.until_utc.is_some() || s.until_local.is_some());
        ex += usize::from(!s.exdates.is_empty());
        two_alarms += usize::from(s.triggers.len() > 1);
    }
    format!(
        "{}\n     zones: {}\n     INTERVAL>1 {interval}, COUNT {count}, UNTIL {until}, \
         EXDATE {ex}, two VALARMs {two_alarms}",
        counts(kinds),
        counts(zones),
    )
}

/// Prints the dateutil figures, the speed ratio and whether the counts agree.
pub fn compare(
    py: &Report,
    kairos: &Timing,
    occ: &[Occurrence<'_>],
    specs: &[Spec],
    python: &Path,
) {
    let secs = |x: f64| Duration::from_secs_f64(x.max(0.0));
    println!(
        "dateutil:     {} (1 run, CPU {})  ({} occurrences; python {}, dateutil {}, {}; \
         rrulestr() parse {} not counted)",
        fmt_dur(secs(py.seconds)),
        fmt_dur(secs(py.cpu_seconds)),
        py.occurrences,
        py.python,
        py.dateutil,
        python.display(),
        fmt_dur(secs(py.parse_seconds)),
    );
    let wall = py.seconds / median(&kairos.wall).as_secs_f64().max(1e-9);
    let cpu = kairos
        .cpu
        .map(|c| {
            format!(
                ", {:.1}x by CPU time",
                py.cpu_seconds / c.as_secs_f64().max(1e-9)
            )
        })
        .unwrap_or_default();
    println!(
        "ratio:        Kairos occurrences() is {wall:.1}x faster than dateutil by wall clock{cpu} \
         (target >= 20x by wall clock: {})",
        if wall >= 20.0 { "met" } else { "NOT met" }
    );
    let mut ours: HashMap<&str, usize> = HashMap::new();
    for o in occ {
        *ours.entry(o.event.uid.as_str()).or_default() += 1;
    }
    if py.occurrences == occ.len()
        && specs.iter().all(|s| {
            ours.get(s.uid.as_str()).copied().unwrap_or(0)
                == py.per_uid.get(&s.uid).copied().unwrap_or(0)
        })
    {
        println!(
            "counts:       agree: kairos {} = dateutil {}",
            occ.len(),
            py.occurrences
        );
        return;
    }
    let diff = i128::try_from(occ.len()).unwrap_or(0) - i128::try_from(py.occurrences).unwrap_or(0);
    let differing: Vec<&Spec> = specs
        .iter()
        .filter(|s| {
            ours.get(s.uid.as_str()).copied().unwrap_or(0)
                != py.per_uid.get(&s.uid).copied().unwrap_or(0)
        })
        .collect();
    println!(
        "WARNING: occurrence counts differ: kairos {} vs dateutil {} (kairos {diff:+}); {} events differ, first ones:",
        occ.len(),
        py.occurrences,
        differing.len()
    );
    for s in differing.iter().take(8) {
        println!(
            "  {}  kairos {} dateutil {}  DTSTART {} {}  RRULE {}{}{}  EXDATE {:?}",
            s.uid,
            ours.get(s.uid.as_str()).copied().unwrap_or(0),
            py.per_uid.get(&s.uid).copied().unwrap_or(0),
            s.dtstart,
            if s.all_day {
                "all-day"
            } else {
                s.tzid.unwrap_or("floating")
            },
            s.rrule,
            s.until_utc
                .map(|u| format!(";UNTIL={u}Z"))
                .unwrap_or_default(),
            s.until_local
                .map(|u| format!(";UNTIL={u}"))
                .unwrap_or_default(),
            s.exdates,
        );
    }
}

/// Checks `next_alarm` against the first hit of `alarms` from `now`.
///
/// # Errors
/// `alarms` fails.
pub fn check_next(
    next: Option<&AlarmHit<'_>>,
    cal: &Calendar,
    now: DateTime<Utc>,
    to: DateTime<Utc>,
    floating: Tz,
    limits: &Limits,
) -> Result<()> {
    let desc = |h: &AlarmHit<'_>| {
        format!(
            "{} {} alarm #{}",
            h.trigger.format("%Y-%m-%dT%H:%M:%SZ"),
            h.occurrence.event.uid,
            h.index
        )
    };
    println!(
        "  next trigger: {}",
        next.map_or_else(|| "none".to_owned(), desc)
    );
    if now >= to {
        return Ok(());
    }
    let window = alarms::alarms(cal, now, to, floating, limits)?;
    let expected = window.first();
    let same = match (next, expected) {
        (Some(a), Some(b)) => {
            (a.trigger, &a.occurrence.event.uid, a.index, a.repetition)
                == (b.trigger, &b.occurrence.event.uid, b.index, b.repetition)
        }
        (None, None) => true,
        _ => false,
    };
    if same {
        println!("  agrees with the first hit of alarms([now, window end))");
    } else {
        println!(
            "WARNING: next_alarm disagrees with alarms(): expected {}",
            expected.map_or_else(|| "none".to_owned(), desc)
        );
    }
    Ok(())
}
