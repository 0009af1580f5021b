//! Child processes that cannot outlive the bench, and what `/proc` says about
//! a running one.
//!
//! Every child (`redis-server`, `kairos daemon`, `strace`) is a [`Guard`]:
//! dropped, it gets SIGTERM, then SIGKILL after a grace period. The bench's
//! own SIGINT/SIGTERM and an overall time limit ([`install_cleanup`]) SIGKILL
//! every child still registered and remove the bench's temporary
//! directories, so neither a Ctrl-C nor a hang leaves anything running.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// PIDs of the children still running.
static CHILDREN: Mutex<Vec<u32>> = Mutex::new(Vec::new());
/// Temporary directories to remove if the bench is stopped early.
static DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Sends `sig` to `pid` (errors ignored: it may have exited already).
pub fn signal(pid: u32, sig: Signal) {
    if let Ok(p) = i32::try_from(pid) {
        let _ = kill(Pid::from_raw(p), sig);
    }
}

/// Remembers `dir` for removal on an early stop.
pub fn register_dir(dir: &Path) {
    DIRS.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(dir.to_owned());
}

fn kill_everything() {
    for &pid in CHILDREN
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
    {
        signal(pid, Signal::SIGKILL);
    }
    for dir in DIRS.lock().unwrap_or_else(PoisonError::into_inner).iter() {
        let _ = fs::remove_dir_all(dir);
    }
}

/// Makes the bench stop by itself: after `limit`, or on SIGINT/SIGTERM, every
/// registered child is killed, the temporary directories are removed and the
/// process exits (status 3 for the time limit, 130 for a signal).
///
/// # Errors
/// The signal handlers cannot be installed.
pub fn install_cleanup(limit: Duration) -> Result<()> {
    std::thread::Builder::new()
        .name("time-limit".into())
        .spawn(move || {
            std::thread::sleep(limit);
            eprintln!("engine-bench: time limit of {limit:?} reached; stopping");
            kill_everything();
            std::process::exit(3);
        })?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    // Installed here, before any child exists, so no signal is missed.
    let (mut term, mut int) = rt.block_on(async {
        use tokio::signal::unix::{SignalKind, signal};
        Ok::<_, std::io::Error>((
            signal(SignalKind::terminate())?,
            signal(SignalKind::interrupt())?,
        ))
    })?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            rt.block_on(async {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            });
            eprintln!("engine-bench: interrupted; stopping child processes");
            kill_everything();
            std::process::exit(130);
        })?;
    Ok(())
}

/// A child process that is stopped when this is dropped.
pub struct Guard {
    child: Child,
    name: String,
    done: Option<ExitStatus>,
}

impl Guard {
    /// Spawns `cmd` and registers it.
    ///
    /// # Errors
    /// The program cannot be started.
    pub fn spawn(cmd: &mut Command, name: &str) -> Result<Self> {
        let child = cmd
            .spawn()
            .with_context(|| format!("cannot start {name} ({:?})", cmd.get_program()))?;
        CHILDREN
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(child.id());
        Ok(Self {
            child,
            name: name.to_owned(),
            done: None,
        })
    }

    /// Its PID.
    #[must_use]
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its standard output, if it was piped (once). Used by `chaos-bench`;
    /// the other bins include this file too.
    #[allow(dead_code)]
    pub fn take_stdout(&mut self) -> Option<std::process::ChildStdout> {
        self.child.stdout.take()
    }

    /// `Some(status)` once it has exited.
    ///
    /// # Errors
    /// `waitpid` failed.
    pub fn exited(&mut self) -> Result<Option<ExitStatus>> {
        if self.done.is_none() {
            self.done = self.child.try_wait()?;
            if self.done.is_some() {
                let pid = self.child.id();
                CHILDREN
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .retain(|&p| p != pid);
            }
        }
        Ok(self.done)
    }

    /// Waits up to `grace` for it to exit by itself.
    ///
    /// # Errors
    /// `waitpid` failed.
    pub fn wait_for(&mut self, grace: Duration) -> Result<Option<ExitStatus>> {
        let until = Instant::now() + grace;
        while Instant::now() < until {
            if let Some(s) = self.exited()? {
                return Ok(Some(s));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        self.exited()
    }

    /// SIGTERM, then SIGKILL if it is still running after `grace`. Returns
    /// its exit status and whether it needed the SIGKILL.
    ///
    /// # Errors
    /// `waitpid` failed.
    pub fn stop(&mut self, grace: Duration) -> Result<(ExitStatus, bool)> {
        if let Some(s) = self.exited()? {
            return Ok((s, false));
        }
        signal(self.pid(), Signal::SIGTERM);
        if let Some(s) = self.wait_for(grace)? {
            return Ok((s, false));
        }
        eprintln!("engine-bench: {} ignored SIGTERM; killing it", self.name);
        signal(self.pid(), Signal::SIGKILL);
        match self.wait_for(Duration::from_secs(5))? {
            Some(s) => Ok((s, true)),
            None => bail!("{} (pid {}) survived SIGKILL", self.name, self.pid()),
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.stop(Duration::from_secs(2));
    }
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
///
/// # Errors
/// No port can be bound.
pub fn free_port() -> Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}

/// A `Name:  value …` field of `/proc/PID/status` (or of a task's status), as
/// the number that starts the value (kB for the `Vm*` fields).
#[must_use]
pub fn status_field(status_file: &Path, field: &str) -> Option<u64> {
    let text = fs::read_to_string(status_file).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

/// Context switches summed over every thread of `pid`: (voluntary,
/// involuntary, threads). A thread asleep in `epoll_wait` adds nothing; each
/// wake-up adds one voluntary switch when it goes back to sleep.
///
/// # Errors
/// The process is gone.
pub fn ctxt_switches(pid: u32) -> Result<(u64, u64, usize)> {
    let mut vol = 0;
    let mut invol = 0;
    let mut threads = 0;
    for task in fs::read_dir(format!("/proc/{pid}/task"))? {
        let status = task?.path().join("status");
        vol += status_field(&status, "voluntary_ctxt_switches").unwrap_or(0);
        invol += status_field(&status, "nonvoluntary_ctxt_switches").unwrap_or(0);
        threads += 1;
    }
    Ok((vol, invol, threads))
}

/// Whether `pid` holds an armed `timerfd`: one whose `/proc/PID/fdinfo`
/// shows a non-zero `it_value` (the time left). `None` while it has no
/// timerfd at all.
#[must_use]
pub fn timerfd_armed(pid: u32) -> Option<bool> {
    let mut seen = false;
    for fd in fs::read_dir(format!("/proc/{pid}/fd")).ok()?.flatten() {
        let Ok(target) = fs::read_link(fd.path()) else {
            continue;
        };
        if target.as_os_str() != "anon_inode:[timerfd]" {
            continue;
        }
        seen = true;
        let info = fs::read_to_string(format!(
            "/proc/{pid}/fdinfo/{}",
            fd.file_name().to_string_lossy()
        ))
        .unwrap_or_default();
        // `it_value: (3599, 999730025)`: seconds and nanoseconds left.
        let armed = info
            .lines()
            .find_map(|l| l.strip_prefix("it_value:"))
            .is_some_and(|v| v.chars().any(|c| c.is_ascii_digit() && c != '0'));
        if armed {
            return Some(true);
        }
    }
    seen.then_some(false)
}

/// The child of `pid` whose command name is `comm` (e.g. the program
/// `strace` runs: strace also forks short-lived test children at start).
#[must_use]
pub fn child_named(pid: u32, comm: &str) -> Option<u32> {
    fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .ok()?
        .split_whitespace()
        .filter_map(|c| c.parse::<u32>().ok())
        .find(|c| fs::read_to_string(format!("/proc/{c}/comm")).is_ok_and(|n| n.trim_end() == comm))
}

/// A process that is not our child (a program run by `strace`): registered
/// for the cleanup, SIGKILLed on drop if it is still there.
pub struct Grandchild(pub u32);

impl Grandchild {
    /// Registers `pid`.
    #[must_use]
    pub fn new(pid: u32) -> Self {
        CHILDREN
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(pid);
        Self(pid)
    }
}

impl Drop for Grandchild {
    fn drop(&mut self) {
        // Still ours only while it is alive: after it exits its PID may be reused,
        // but not before its parent (strace) has reaped it, which we wait for.
        if Path::new(&format!("/proc/{}", self.0)).exists() {
            signal(self.0, Signal::SIGKILL);
        }
        let pid = self.0;
        CHILDREN
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|&p| p != pid);
    }
}

/// Drops `path`'s pages from the page cache (after writing them back), so the
/// next reader reads from the disk. Affects only this file.
///
/// # Errors
/// The file cannot be opened or synced.
pub fn evict_from_cache(path: &Path) -> Result<()> {
    use nix::fcntl::{PosixFadviseAdvice, posix_fadvise};
    let f = fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    f.sync_all()?;
    posix_fadvise(&f, 0, 0, PosixFadviseAdvice::POSIX_FADV_DONTNEED)
        .with_context(|| format!("posix_fadvise({})", path.display()))?;
    Ok(())
}
