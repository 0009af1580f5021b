//! The real daemon when the wall clock jumps forward and back.
//!
//! The machine's clock is not moved (other processes depend on it). The
//! daemon runs on `--clock-offset-file`: the real clock plus a shift it
//! re-reads **only** when the kernel reports that the real-time clock was
//! set. The test rewrites the shift, then sets the real clock to the value it
//! already has (`clock_settime`, needs CAP_SYS_TIME: tests run as root here):
//! the kernel cancels the daemon's `timerfd` (`TFD_TIMER_CANCEL_ON_SET`), and
//! the daemon sees a jump exactly as it would see a real one. Were that path
//! broken, the daemon would sleep on its old plan: an hour, in the forward
//! case below.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use crate::daemon::{Daemon, kairos, read, start_with, wait_for_file};

const HOUR: i64 = 3600;

fn ics(events: &[(&str, DateTime<Utc>)]) -> String {
    let mut s = String::from("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\n");
    for (uid, at) in events {
        s += &format!(
            "BEGIN:VEVENT\r\nUID:{uid}\r\nDTSTART:{}\r\nSUMMARY:{uid}\r\nBEGIN:VALARM\r\n\
             ACTION:DISPLAY\r\nTRIGGER:PT0S\r\nEND:VALARM\r\nEND:VEVENT\r\n",
            at.format("%Y%m%dT%H%M%SZ")
        );
    }
    s + "END:VCALENDAR\r\n"
}

fn import(db: &Path, clock_arg: &str, text: &str) {
    let file = db.with_extension(format!("{}.ics", text.len()));
    std::fs::write(&file, text).expect("write ics");
    let out = kairos(db)
        .arg(clock_arg)
        .arg("import")
        .arg(&file)
        .args(["--tz", "UTC"])
        .output()
        .expect("import");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Seconds until the daemon's `timerfd` expires, from
/// `/proc/PID/fdinfo` (`it_value: (s, ns)`; `(0, 0)` when disarmed).
fn armed_in(pid: u32) -> Option<u64> {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
    for fd in fds.flatten() {
        let link = std::fs::read_link(fd.path()).unwrap_or_default();
        if link.to_string_lossy() != "anon_inode:[timerfd]" {
            continue;
        }
        let info = std::fs::read_to_string(format!(
            "/proc/{pid}/fdinfo/{}",
            fd.file_name().to_string_lossy()
        ))
        .ok()?;
        let value = info.lines().find_map(|l| l.strip_prefix("it_value: ("))?;
        let (s, ns) = value.trim_end_matches(')').split_once(',')?;
        let (s, ns): (u64, u64) = (s.trim().parse().ok()?, ns.trim().parse().ok()?);
        return (s > 0 || ns > 0).then_some(s);
    }
    None
}

/// Waits (at most 20 s) until the daemon sleeps on a deadline `range` seconds
/// away: only an armed timer can be cancelled by a clock change.
fn wait_armed(d: &Daemon, range: std::ops::RangeInclusive<u64>) {
    let until = Instant::now() + Duration::from_secs(20);
    while Instant::now() < until {
        if armed_in(d.child.id()).is_some_and(|s| range.contains(&s)) {
            return;
        }
        std::thread::yield_now();
    }
    panic!(
        "the daemon never armed its timer {range:?} s ahead (now {:?})",
        armed_in(d.child.id())
    );
}

/// Moves the daemon's clock to `shift` seconds ahead of the real one.
fn jump(offset_file: &Path, shift: i64) {
    use nix::time::{ClockId, clock_gettime, clock_settime};
    std::fs::write(offset_file, shift.to_string()).expect("write offset");
    let now = clock_gettime(ClockId::CLOCK_REALTIME).expect("clock");
    clock_settime(ClockId::CLOCK_REALTIME, now)
        .expect("setting the clock needs root (CAP_SYS_TIME)");
}

#[test]
fn a_clock_jump_forward_fires_what_it_skipped_and_back_fires_nothing_early_or_twice() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("k.db");
    let offset_file = dir.path().join("offset");
    std::fs::write(&offset_file, "0").expect("offset");
    let clock_arg = format!("--clock-offset-file={}", offset_file.display());
    let t0 = Utc::now();
    import(
        &db,
        &clock_arg,
        &ics(&[
            ("before", t0 + chrono::Duration::seconds(2)),
            ("skipped", t0 + chrono::Duration::seconds(HOUR)),
            ("ahead", t0 + chrono::Duration::seconds(2 * HOUR)),
        ]),
    );
    let mut d = start_with(&db, &clock_arg);
    wait_for_file(Path::new(&format!("{}.lock", db.display())));
    let mut seen = HashMap::new();
    let mut statuses = Vec::new();
    let soon = || Instant::now() + Duration::from_secs(10);
    assert_eq!(read(&d, 1, soon(), &mut seen, &mut statuses), 1);
    assert_eq!(statuses, ["on_time"], "{seen:?}");

    // Forward 2 h while the daemon sleeps until "skipped", an hour away.
    wait_armed(&d, 3000..=3600);
    jump(&offset_file, 2 * HOUR);
    assert_eq!(
        read(&d, 2, soon(), &mut seen, &mut statuses),
        2,
        "the jump woke the daemon: both reminders it jumped over fired at once ({seen:?})"
    );
    // "skipped" is an hour late: missed; "ahead" only seconds late.
    statuses.sort();
    assert_eq!(statuses, ["late", "missed", "on_time"], "{seen:?}");

    // Back 2 h while the daemon sleeps until "back", 3 s ahead on its clock.
    let back = Utc::now() + chrono::Duration::seconds(2 * HOUR + 3);
    import(&db, &clock_arg, &ics(&[("back", back)]));
    wait_armed(&d, 0..=3);
    jump(&offset_file, 0);
    // "back" is now 2 h away. A sentinel due 2 s after the real instant at
    // which "back" would have fired without the jump: when the sentinel
    // fires, "back" must not have.
    let sentinel = back - chrono::Duration::seconds(2 * HOUR) + chrono::Duration::seconds(2);
    import(&db, &clock_arg, &ics(&[("sentinel", sentinel)]));
    let before = seen.len();
    assert_eq!(read(&d, 1, soon(), &mut seen, &mut statuses), 1);
    assert_eq!(seen.len(), before + 1, "a new key, not a repeat: {seen:?}");
    assert!(
        seen.keys().any(|k| k.contains("sentinel")),
        "only the sentinel fired: {seen:?}"
    );
    assert!(seen.values().all(|&n| n == 1), "nothing twice: {seen:?}");
    let why = kairos(&db).args(["upcoming"]).output().expect("upcoming");
    let upcoming = String::from_utf8_lossy(&why.stdout);
    assert!(
        upcoming.contains("back"),
        "\"back\" still waits for its time: {upcoming}"
    );
    d.child.kill().expect("stop");
    d.child.wait().expect("reaped");
}
