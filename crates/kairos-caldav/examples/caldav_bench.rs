//! `caldav-bench`: the first sync of a 5,000-event CalDAV calendar from a
//! local Radicale, and two no-change re-syncs, by Kairos and by vdirsyncer
//! (PyPI) in the same run, against the same server and calendar. (Kairos's
//! first sync asks for no sync token; its second gets one by an initial
//! `sync-collection`, for which Radicale writes a history entry per object
//! it has none for; its third is the quiet one-request re-sync.)
//!
//! ```text
//! tests/caldav/setup.sh        # Radicale and vdirsyncer in target/caldav-pyenv
//! [KAIROS_BENCH_TMPFS=1] cargo run --release -p kairos-caldav --example caldav_bench [-- EVENTS]
//! ```
//!
//! The events are written straight into Radicale's storage folder (one
//! `.ics` file each, as Radicale itself keeps them) before anyone reads
//! them, so both clients meet the same cold server state. Kairos syncs
//! into a fresh SQLite database (reminders planned, 48 h horizon);
//! vdirsyncer into a fresh filesystem vdir. Wall-clock times of each step.
//! `KAIROS_BENCH_TMPFS=1` puts everything (Radicale's storage too) in
//! `/dev/shm`: on a disk shared with other work, Radicale's `fsync` of each
//! cache and history file it writes makes a step take minutes.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use chrono::{TimeZone, Utc};
use kairos_caldav::secret::FileStore;
use kairos_caldav::{When, account};
use kairos_store::Store;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

const USER: &str = "alice";
const PASSWORD: &str = "bench-pw";

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn venv() -> PathBuf {
    std::env::var("KAIROS_CALDAV_PYENV").map_or_else(
        |_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/caldav-pyenv"),
        PathBuf::from,
    )
}

fn start_radicale(dir: &Path, port: u16) -> Res<Server> {
    let users = dir.join("users");
    std::fs::write(&users, format!("{USER}:{PASSWORD}\n"))?;
    let config = dir.join("config");
    std::fs::write(
        &config,
        format!(
            "[server]\nhosts = 127.0.0.1:{port}\n[auth]\ntype = htpasswd\nhtpasswd_filename = {}\n\
             htpasswd_encryption = plain\n[storage]\nfilesystem_folder = {}\n[logging]\nlevel = info\n",
            users.display(),
            dir.join("collections").display()
        ),
    )?;
    let mut child = Command::new(venv().join("bin/python"))
        .args(["-m", "radicale", "--config"])
        .arg(&config)
        .env("PYTHONUNBUFFERED", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    let err = child.stderr.take().ok_or("no stderr")?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            if line.contains("Listening on") {
                let _ = tx.send(());
            }
        }
    });
    let server = Server(child);
    rx.recv_timeout(Duration::from_secs(60))
        .map_err(|_| "radicale did not start within 60 s")?;
    Ok(server)
}

fn request(port: u16, method: &str, path: &str, body: &str) -> Res<u16> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    let auth = base64_basic();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic {auth}\r\n\
         Connection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )?;
    let mut out = String::new();
    s.read_to_string(&mut out)?;
    Ok(out
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0))
}

fn base64_basic() -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(format!("{USER}:{PASSWORD}"))
}

fn event(i: usize) -> String {
    let day = 1 + i % 28;
    let hour = 8 + i % 10;
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bench//EN\r\nBEGIN:VEVENT\r\nUID:bench-{i}\r\n\
         DTSTAMP:20260101T000000Z\r\nDTSTART:202603{day:02}T{hour:02}0000Z\r\nDURATION:PT1H\r\n\
         SUMMARY:Event {i}\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:r\r\n\
         TRIGGER:-PT15M\r\nEND:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )
}

/// CPU seconds (user + system) the server process has used so far, from
/// `/proc` (Linux; 0 elsewhere): to tell the server's share of a step.
fn server_cpu(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    // Fields after the command name (which is in parentheses).
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime are fields 14 and 15 (1-based), i.e. 11 and 12 here.
    (ticks(11) + ticks(12)) / 100.0
}

fn timed<T>(f: impl FnOnce() -> Res<T>) -> Res<(T, Duration)> {
    let t = Instant::now();
    let v = f()?;
    Ok((v, t.elapsed()))
}

fn vdirsyncer(cfg: &Path, args: &[&str]) -> Res<()> {
    let out = Command::new(venv().join("bin/vdirsyncer"))
        .arg("-c")
        .arg(cfg)
        .args(args)
        .stdin(Stdio::null())
        .output()?;
    if !out.status.success() {
        return Err(format!(
            "vdirsyncer {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(())
}

fn main() -> Res<()> {
    let n: usize = std::env::args().nth(1).map_or(Ok(5000), |a| a.parse())?;
    let tmpfs = std::env::var_os("KAIROS_BENCH_TMPFS").is_some();
    let dir = if tmpfs {
        tempfile::tempdir_in("/dev/shm")?
    } else {
        tempfile::tempdir()?
    };
    let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let server = start_radicale(dir.path(), port)?;
    let pid = server.0.id();
    let status = request(
        port,
        "MKCALENDAR",
        &format!("/{USER}/work/"),
        "<?xml version=\"1.0\"?><C:mkcalendar xmlns:D=\"DAV:\" \
         xmlns:C=\"urn:ietf:params:xml:ns:caldav\"><D:set><D:prop><D:displayname>Work\
         </D:displayname></D:prop></D:set></C:mkcalendar>",
    )?;
    if status != 201 {
        return Err(format!("MKCALENDAR: {status}").into());
    }
    let col = dir
        .path()
        .join(format!("collections/collection-root/{USER}/work"));
    for i in 0..n {
        std::fs::write(col.join(format!("bench-{i}.ics")), event(i))?;
    }
    // Radicale reads and indexes every item on first access (its cache):
    // one PROPFIND with ETags first, untimed, so both clients meet a warm
    // server.
    let (_, warm) = timed(|| {
        request(
            port,
            "PROPFIND",
            &format!("/{USER}/work/"),
            "<?xml version=\"1.0\"?><propfind xmlns=\"DAV:\"><prop><getetag/></prop></propfind>",
        )
    })?;
    println!(
        "{n} events in a local Radicale 3.9.0 (port {port}, storage in {}); its cache warmed in {:.1} s\n",
        if tmpfs { "/dev/shm" } else { "the temp dir" },
        warm.as_secs_f64()
    );

    // Kairos.
    let db = dir.path().join("k.db");
    let mut store = Store::open(&db)?;
    let secrets = FileStore::beside(&db);
    let when = When {
        now: Utc
            .with_ymd_and_hms(2026, 3, 1, 8, 0, 0)
            .single()
            .ok_or("date")?,
        horizon: chrono::Duration::hours(48),
        floating: chrono_tz::UTC,
    };
    let url = format!("http://127.0.0.1:{port}/");
    let (_, add) = timed(|| {
        Ok(account::add(
            &mut store,
            &secrets,
            &account::Login {
                url: &url,
                user: USER,
                password: PASSWORD,
                ca_pem: None,
            },
            &[],
            when,
        )?)
    })?;
    let c0 = server_cpu(pid);
    let (first, t_first) = timed(|| Ok(account::sync(&mut store, &secrets, None, when)?))?;
    let k_server = server_cpu(pid) - c0;
    let c0 = server_cpu(pid);
    let (second, t_second) = timed(|| Ok(account::sync(&mut store, &secrets, None, when)?))?;
    let k_server2 = server_cpu(pid) - c0;
    let c0 = server_cpu(pid);
    let (again, t_again) = timed(|| Ok(account::sync(&mut store, &secrets, None, when)?))?;
    let k_server3 = server_cpu(pid) - c0;
    let (f, s, a) = (&first[0], &second[0], &again[0]);
    assert_eq!(f.changed_here, n, "every event arrived");
    assert_eq!(s.fetched + a.fetched, 0, "nothing changed");

    // vdirsyncer, same server, same calendar.
    let vdir = dir.path().join("vdir");
    std::fs::create_dir_all(&vdir)?;
    let cfg = dir.path().join("vdirsyncer.cfg");
    std::fs::write(
        &cfg,
        format!(
            "[general]\nstatus_path = \"{}/status/\"\n\n[pair bench]\na = \"remote\"\nb = \"local\"\n\
             collections = null\n\n[storage remote]\ntype = \"caldav\"\n\
             url = \"http://127.0.0.1:{port}/{USER}/work/\"\nusername = \"{USER}\"\n\
             password = \"{PASSWORD}\"\n\n[storage local]\ntype = \"filesystem\"\npath = \"{}/\"\n\
             fileext = \".ics\"\n",
            dir.path().display(),
            vdir.display()
        ),
    )?;
    let ((), v_discover) = timed(|| vdirsyncer(&cfg, &["discover"]))?;
    let c0 = server_cpu(pid);
    let ((), v_first) = timed(|| vdirsyncer(&cfg, &["sync"]))?;
    let v_server = server_cpu(pid) - c0;
    let c0 = server_cpu(pid);
    let ((), v_second) = timed(|| vdirsyncer(&cfg, &["sync"]))?;
    let v_server2 = server_cpu(pid) - c0;
    let c0 = server_cpu(pid);
    let ((), v_again) = timed(|| vdirsyncer(&cfg, &["sync"]))?;
    let v_server3 = server_cpu(pid) - c0;
    let files = std::fs::read_dir(&vdir)?.count();
    assert_eq!(files, n, "vdirsyncer copied every event");

    println!("| step | Kairos | vdirsyncer 0.21.0 |");
    println!("|---|---|---|");
    println!(
        "| add account (discovery) / `discover` | {:.2} s | {:.2} s |",
        add.as_secs_f64(),
        v_discover.as_secs_f64()
    );
    println!(
        "| first sync of {n} events | {:.2} s ({} requests, `{}`) | {:.2} s |",
        t_first.as_secs_f64(),
        f.requests,
        f.method,
        v_first.as_secs_f64()
    );
    println!("| … of which Radicale's CPU | {k_server:.2} s | {v_server:.2} s |");
    println!(
        "| second sync, no change (Kairos: its first token) | {:.3} s ({} request{}, `{}`) | {:.3} s |",
        t_second.as_secs_f64(),
        s.requests,
        if s.requests == 1 { "" } else { "s" },
        s.method,
        v_second.as_secs_f64()
    );
    println!("| … of which Radicale's CPU | {k_server2:.2} s | {v_server2:.2} s |");
    println!(
        "| third sync, no change | {:.3} s ({} request{}, `{}`) | {:.3} s |",
        t_again.as_secs_f64(),
        a.requests,
        if a.requests == 1 { "" } else { "s" },
        a.method,
        v_again.as_secs_f64()
    );
    println!("| … of which Radicale's CPU | {k_server3:.2} s | {v_server3:.2} s |");
    Ok(())
}
