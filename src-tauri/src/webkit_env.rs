//! WebKitGTK's DMA-BUF renderer, off. It is chosen from the environment
//! only (`WEBKIT_DISABLE_DMABUF_RENDERER`), read when GTK and WebKit start,
//! and the workspace forbids `unsafe` (`std::env::set_var`). So, when it is
//! not set, the app replaces its own image with itself with the variable
//! set (`exec`: the same process id, arguments and everything else).
//!
//! Why: the window renders without the GPU (`window.rs`), and the DMA-BUF
//! path still costs ≈ 9 MB (the web process 112 → 105 MB PSS, the app 2 MB,
//! five threads fewer) on the dense calendar (docs/benchmarks.md 2026-12-06
//! "app memory"). The variable goes on to WebKit's child processes, which
//! is where it is meant for; nothing else reads it. `KAIROS_WEBVIEW_GPU=1`
//! (WebKit's own rendering) leaves it alone, and so does a value the person
//! set themselves.

use std::ffi::OsString;

const VAR: &str = "WEBKIT_DISABLE_DMABUF_RENDERER";

/// Whether the app should restart itself with [`VAR`] set, given the
/// environment `get`.
// Off Linux there is no WebKitGTK: only the tests call it there.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn wants_restart(get: impl Fn(&str) -> Option<OsString>) -> bool {
    get(VAR).is_none() && get("KAIROS_WEBVIEW_GPU").is_none_or(|v| v != "1")
}

/// Call first thing in `main`: returns only when nothing needs doing or the
/// restart failed (said on stderr; the app then runs as it is).
#[cfg(target_os = "linux")]
pub fn ensure() {
    use std::os::unix::process::CommandExt;
    if !wants_restart(|k| std::env::var_os(k)) {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut args = std::env::args_os();
    let mut cmd = std::process::Command::new(exe);
    if let Some(arg0) = args.next() {
        cmd.arg0(arg0);
    }
    let err = cmd.args(args).env(VAR, "1").exec();
    eprintln!("kairos: could not restart with {VAR}=1 ({err}); the window may use more memory");
}

#[cfg(not(target_os = "linux"))]
pub fn ensure() {}

#[cfg(test)]
mod tests {
    use super::wants_restart;

    fn env(
        pairs: &'static [(&'static str, &'static str)],
    ) -> impl Fn(&str) -> Option<std::ffi::OsString> {
        move |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.into())
    }

    #[test]
    fn restarts_only_when_the_variable_is_unset_and_the_gpu_is_not_asked_for() {
        assert!(wants_restart(env(&[])));
        assert!(wants_restart(env(&[("KAIROS_WEBVIEW_GPU", "0")])));
        // Already set (by the restart, or by the person, either way): never again.
        assert!(!wants_restart(env(&[(
            "WEBKIT_DISABLE_DMABUF_RENDERER",
            "1"
        )])));
        assert!(!wants_restart(env(&[(
            "WEBKIT_DISABLE_DMABUF_RENDERER",
            "0"
        )])));
        assert!(!wants_restart(env(&[("KAIROS_WEBVIEW_GPU", "1")])));
    }
}
