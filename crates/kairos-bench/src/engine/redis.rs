//! Part 2, Redis side: the same burst through a Redis sorted set, the usual
//! "delay queue in Redis" design.
//!
//! The bench starts Debian's `redis-server` itself on 127.0.0.1 and a free
//! port, in a temporary directory, and stops it at the end. Two modes:
//! `--save '' --appendonly no` (nothing reaches the disk: **not durable**) and
//! `--appendonly yes --appendfsync always` (each write is in the AOF and
//! fsynced before its reply: durable, the fair comparison with Kairos).
//!
//! Load: `ZADD burst <trigger ms> <key>` for the same `n` keys, 1,000 members
//! per command (not timed as drain). Drain: one `EVAL` of
//! [`POP`] (`ZRANGEBYSCORE … LIMIT 0 1000` + `ZREM` of those, atomic) per
//! round, each returned member handed to a null sink (counted), until a round
//! returns nothing. A minimal RESP2 client over `TcpStream`, no dependency.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration as StdDuration, Instant};

use anyhow::{Context, Result, bail};

use super::procs::{Guard, free_port};
use super::{now, whole_ms};

/// Pops up to `ARGV[2]` members with score ≤ `ARGV[1]`, atomically.
pub const POP: &str = "local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], \
                       'LIMIT', 0, tonumber(ARGV[2])) \
                       if #due > 0 then redis.call('ZREM', KEYS[1], unpack(due)) end \
                       return due";

/// Members per `ZADD` and per pop.
const BATCH: usize = 1000;

/// A RESP2 reply.
#[derive(Debug)]
enum Reply {
    Status(String),
    Error(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<Reply>>),
}

/// One connection.
struct Conn {
    r: BufReader<TcpStream>,
    w: BufWriter<TcpStream>,
}

impl Conn {
    fn connect(port: u16) -> Result<Self> {
        let s = TcpStream::connect(("127.0.0.1", port))?;
        s.set_nodelay(true)?;
        s.set_read_timeout(Some(StdDuration::from_secs(60)))?;
        Ok(Self {
            r: BufReader::new(s.try_clone()?),
            w: BufWriter::new(s),
        })
    }

    fn cmd(&mut self, args: &[&[u8]]) -> Result<Reply> {
        write!(self.w, "*{}\r\n", args.len())?;
        for a in args {
            write!(self.w, "${}\r\n", a.len())?;
            self.w.write_all(a)?;
            self.w.write_all(b"\r\n")?;
        }
        self.w.flush()?;
        match self.read()? {
            Reply::Error(e) => bail!("redis: {e}"),
            r => Ok(r),
        }
    }

    fn line(&mut self) -> Result<String> {
        let mut buf = Vec::new();
        self.r.read_until(b'\n', &mut buf)?;
        if !buf.ends_with(b"\r\n") {
            bail!("redis closed the connection");
        }
        buf.truncate(buf.len() - 2);
        Ok(String::from_utf8(buf)?)
    }

    fn read(&mut self) -> Result<Reply> {
        let line = self.line()?;
        let (kind, rest) = line.split_at(1.min(line.len()));
        Ok(match kind {
            "+" => Reply::Status(rest.to_owned()),
            "-" => Reply::Error(rest.to_owned()),
            ":" => Reply::Int(rest.parse()?),
            "$" => {
                let len: i64 = rest.parse()?;
                if len < 0 {
                    Reply::Bulk(None)
                } else {
                    let mut data = vec![0; usize::try_from(len)? + 2];
                    std::io::Read::read_exact(&mut self.r, &mut data)?;
                    data.truncate(data.len() - 2);
                    Reply::Bulk(Some(data))
                }
            }
            "*" => {
                let len: i64 = rest.parse()?;
                if len < 0 {
                    Reply::Array(None)
                } else {
                    let items = (0..len).map(|_| self.read()).collect::<Result<_>>()?;
                    Reply::Array(Some(items))
                }
            }
            _ => bail!("redis: unexpected reply {line:?}"),
        })
    }
}

/// `redis-server --version`, or why not.
#[must_use]
pub fn version() -> String {
    Command::new("redis-server")
        .arg("--version")
        .output()
        .ok()
        .map_or_else(
            || "redis-server not found (apt-get install -y redis-server)".to_owned(),
            |o| String::from_utf8_lossy(&o.stdout).trim().to_owned(),
        )
}

/// A running `redis-server`, stopped on drop.
struct Server {
    _guard: Guard,
    port: u16,
}

fn start(dir: &Path, durable: bool) -> Result<Server> {
    let port = free_port()?;
    let work = dir.join(if durable { "redis-aof" } else { "redis-mem" });
    std::fs::create_dir_all(&work)?;
    let mut cmd = Command::new("redis-server");
    cmd.args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--daemonize", "no", "--protected-mode", "yes"])
        .arg("--dir")
        .arg(&work)
        .args(["--logfile", "redis.log"]);
    if durable {
        cmd.args(["--appendonly", "yes", "--appendfsync", "always"]);
    } else {
        cmd.args(["--appendonly", "no"]);
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut guard = Guard::spawn(&mut cmd, "redis-server")?;
    // Ready when it answers PING (polling the connect: there is no other
    // readiness signal from a server we did not write).
    let until = Instant::now() + StdDuration::from_secs(10);
    loop {
        if let Some(status) = guard.exited()? {
            bail!(
                "redis-server exited at start ({status}); see {}",
                work.join("redis.log").display()
            );
        }
        if let Ok(mut c) = Conn::connect(port)
            && matches!(c.cmd(&[b"PING"]), Ok(Reply::Status(s)) if s == "PONG")
        {
            return Ok(Server {
                _guard: guard,
                port,
            });
        }
        if Instant::now() > until {
            bail!("redis-server did not answer PING on 127.0.0.1:{port} within 10 s");
        }
        std::thread::sleep(StdDuration::from_millis(5));
    }
}

/// What one mode measured.
#[derive(Debug, Clone)]
pub struct Report {
    /// Members loaded.
    pub n: usize,
    /// Time to `ZADD` them.
    pub load: StdDuration,
    /// First `EVAL` → the round that returned nothing.
    pub drain: StdDuration,
    /// Members popped (must be `n`).
    pub popped: usize,
    /// `EVAL` rounds.
    pub rounds: usize,
    /// `ZCARD` afterwards (must be 0).
    pub left: i64,
}

/// Loads and drains the burst in one mode, within `deadline`.
///
/// # Errors
/// redis-server is missing, fails, or the deadline passes.
pub fn burst(dir: &Path, n: usize, durable: bool, deadline: StdDuration) -> Result<Report> {
    let server = start(dir, durable).context("starting redis-server")?;
    let mut c = Conn::connect(server.port)?;
    let when = whole_ms(now());
    let trigger = when.timestamp_millis();
    // The same keys as the Kairos instances (same length, same shape).
    let occurrence = (when + chrono::Duration::minutes(15)).format("%Y-%m-%dT%H:%M:%SZ");
    let keys: Vec<String> = (0..n)
        .map(|i| format!("bench/b{i}/{occurrence}/#0@5eed0001"))
        .collect();
    let t0 = Instant::now();
    let score = trigger.to_string();
    for chunk in keys.chunks(BATCH) {
        let mut args: Vec<&[u8]> = vec![b"ZADD", b"burst"];
        for k in chunk {
            args.push(score.as_bytes());
            args.push(k.as_bytes());
        }
        c.cmd(&args)?;
    }
    let load = t0.elapsed();
    // "Now" for the pop: 1 s after the trigger, as for Kairos.
    let at = (trigger + 1000).to_string();
    let limit = BATCH.to_string();
    let mut popped = 0;
    let mut rounds = 0;
    let mut sink_bytes = 0usize;
    let t0 = Instant::now();
    loop {
        rounds += 1;
        let reply = c.cmd(&[
            b"EVAL",
            POP.as_bytes(),
            b"1",
            b"burst",
            at.as_bytes(),
            limit.as_bytes(),
        ])?;
        let Reply::Array(Some(items)) = reply else {
            bail!("redis: the pop script returned {reply:?}");
        };
        if items.is_empty() {
            break;
        }
        for it in items {
            // The null sink: look at each reminder, tell no one.
            if let Reply::Bulk(Some(b)) = it {
                sink_bytes += b.len();
                popped += 1;
            }
        }
        if t0.elapsed() > deadline {
            bail!("the Redis drain did not finish within {deadline:?}");
        }
    }
    let drain = t0.elapsed();
    std::hint::black_box(sink_bytes);
    let left = match c.cmd(&[b"ZCARD", b"burst"])? {
        Reply::Int(v) => v,
        r => bail!("redis: ZCARD returned {r:?}"),
    };
    drop(c);
    drop(server);
    Ok(Report {
        n,
        load,
        drain,
        popped,
        rounds,
        left,
    })
}
