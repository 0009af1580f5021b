//! Everything that differs between operating systems, one module per
//! concern, each with a plain fallback so the rest of the workspace compiles
//! (and runs) everywhere. Nothing outside this module names `nix`,
//! `std::os::unix` or `tokio::signal::{unix, windows}`.
//!
//! | concern | Linux | other Unix (macOS) | Windows |
//! |---|---|---|---|
//! | [`wake`]: sleep until a wall-clock instant | `timerfd` on `CLOCK_REALTIME`, cancelled by clock changes | bounded recheck ([`wake::RECHECK`]) | bounded recheck |
//! | [`changed`]: "another process changed the database" | `SIGUSR1` to the lock holder | `SIGUSR1` | a named pipe per holder PID |
//! | [`holder`]: the lock holder's PID | written in the lock file | same | in `<db>.lock.pid` (the lock file itself is unreadable while locked) |
//! | [`perms`]: owner-only files | mode `0600` | mode `0600` | the directory's inherited ACL |
//! | [`stop`]: a request to stop | `SIGTERM`, `SIGINT` | same | Ctrl-C, Ctrl-Break, console close, shutdown |
//! | [`shell`]: the `command:CMD` channel | `sh -c` | `sh -c` | `cmd /C` |
//! | [`dirs`]: where the database lives | `$XDG_DATA_HOME`, `~/.local/share` | same | `%LOCALAPPDATA%` |
//!
//! The lock itself ([`crate::daemon::InstanceLock`]) is `std::fs::File::try_lock`
//! everywhere: `flock` on Unix, `LockFileEx` on Windows; both are released by
//! the OS when the process dies.

pub mod changed;
pub mod dirs;
pub mod holder;
pub mod perms;
pub mod shell;
pub mod stop;
pub mod wake;
