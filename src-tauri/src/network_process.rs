//! WebKit's network process, ended when the last window is gone.
//!
//! Closing the window destroys its web process, but WebKitGTK keeps the
//! network process of the window's `WebContext` for as long as the app runs
//! (≈ 34 MB PSS in the tray, docs/benchmarks.md), and WebKitGTK 4.1 has no
//! call to end it. Tauri keeps that `WebContext` for the app's lifetime on
//! Linux (tauri#14626: a context made anew would start one more network
//! process each time), so the next window uses the same context and WebKit
//! starts a fresh network process for it when the old one is gone, as it
//! does after a network process crash.
//!
//! The network process holds nothing of Kairos's: the UI uses no web
//! storage or cookies, and its pages and IPC come through custom schemes the
//! app process itself answers. So, once no window is left, this process's
//! own `WebKitNetworkProcess` children are sent SIGTERM. (A WebDriver
//! session, as in the end-to-end test, ends with it: WebKit ends automation
//! when its network process goes.)

use std::path::Path;

/// The name WebKitGTK's network process runs under, as `/proc/PID/stat`
/// shows it (the kernel keeps the first 15 bytes of `WebKitNetworkProcess`).
const COMM: &str = "WebKitNetworkPr";

/// The children of `parent` whose command name is `comm`, read from
/// `proc` (a `/proc` directory).
fn children_named(proc: &Path, parent: u32, comm: &str) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir(proc) else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(proc.join(pid.to_string()).join("stat"))
                .ok()
                .is_some_and(|s| parse_stat(&s) == Some((comm, parent)))
        })
        .collect()
}

/// `(comm, ppid)` from a `/proc/PID/stat` line. The name sits in
/// parentheses and may itself hold `)` or spaces: it ends at the last `)`.
fn parse_stat(stat: &str) -> Option<(&str, u32)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let comm = stat.get(open + 1..close)?;
    let mut rest = stat.get(close + 1..)?.split_whitespace();
    let _state = rest.next()?;
    let ppid = rest.next()?.parse().ok()?;
    Some((comm, ppid))
}

/// Sends SIGTERM to this process's WebKit network processes; returns how
/// many were signalled. Call only when no window (no web view) is left.
#[cfg(target_os = "linux")]
pub fn end() -> usize {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let mut n = 0;
    for pid in children_named(Path::new("/proc"), std::process::id(), COMM) {
        let Ok(raw) = i32::try_from(pid) else {
            continue;
        };
        match kill(Pid::from_raw(raw), Signal::SIGTERM) {
            Ok(()) => n += 1,
            Err(e) => eprintln!("kairos: cannot end WebKit's network process {pid}: {e}"),
        }
    }
    n
}

/// No WebKitGTK elsewhere.
#[cfg(not(target_os = "linux"))]
pub fn end() -> usize {
    let _ = (children_named, COMM);
    0
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::process::{Child, Command};
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn stat_lines_with_odd_names() {
        assert_eq!(
            parse_stat("42 (WebKitNetworkPr) S 7 42 42 0 -1"),
            Some(("WebKitNetworkPr", 7))
        );
        assert_eq!(parse_stat("9 (a) b (c)) R 3 9"), Some(("a) b (c)", 3)));
        assert_eq!(parse_stat("garbage"), None);
        assert_eq!(parse_stat("1 (x) S notanumber"), None);
    }

    /// A real child process running under the network process's name.
    fn spawn_named(dir: &Path, name: &str) -> Child {
        let exe = dir.join(name);
        std::fs::copy("/bin/sleep", &exe).expect("copy /bin/sleep");
        Command::new(&exe).arg("60").spawn().expect("spawn")
    }

    /// Waits (bounded) for `child` to exit; whether it did. A child still
    /// running at the limit is killed, so a failing test leaves none behind.
    fn exits_within(mut child: Child, limit: Duration) -> bool {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("pid"));
        let (tx, rx) = mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let _ = tx.send(child.wait().is_ok());
        });
        let exited = rx.recv_timeout(limit).unwrap_or(false);
        if !exited {
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        }
        let _ = waiter.join();
        exited
    }

    #[test]
    fn ends_only_the_network_process_children() {
        let dir = std::env::temp_dir().join(format!("kairos-netproc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let net = spawn_named(&dir, "WebKitNetworkProcess");
        let web = spawn_named(&dir, "WebKitWebProcess");
        // `spawn` returns after the exec, so the kernel already shows the name.
        assert_eq!(
            children_named(Path::new("/proc"), std::process::id(), COMM),
            vec![net.id()]
        );
        assert!(end() >= 1, "one network process signalled");
        assert!(
            exits_within(net, Duration::from_secs(10)),
            "the network process child ended"
        );
        // The web process child is left alone (and then cleaned up).
        assert_eq!(
            children_named(Path::new("/proc"), std::process::id(), "WebKitWebProces"),
            vec![web.id()]
        );
        let mut web = web;
        let _ = web.kill();
        let _ = web.wait();
        let _ = std::fs::remove_dir_all(&dir);
    }
}
