//! Runs `dateutil_bench.py` on the JSON copy of the events and reads its answer.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde::Deserialize;

/// What the script prints (one JSON object).
#[derive(Debug, Deserialize)]
pub struct Report {
    /// Wall-clock seconds spent expanding (the timed loop only).
    pub seconds: f64,
    /// CPU seconds of the same loop.
    pub cpu_seconds: f64,
    /// Seconds spent in `rrulestr()`, not counted in `seconds`.
    pub parse_seconds: f64,
    /// Occurrences in the window, all events.
    pub occurrences: usize,
    /// Occurrences by UID, to name the events where the two sides disagree.
    pub per_uid: HashMap<String, usize>,
    /// `platform.python_version()`.
    pub python: String,
    /// `dateutil.__version__`.
    pub dateutil: String,
}

/// The interpreter: `KAIROS_BENCH_PYTHON`, else the workspace venv if it
/// exists, else `python3` from `PATH`.
pub fn interpreter(workspace: &Path) -> PathBuf {
    if let Some(p) = std::env::var_os("KAIROS_BENCH_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = workspace.join("target/pyenv/bin/python");
    if venv.exists() {
        venv
    } else {
        PathBuf::from("python3")
    }
}

/// Runs `script` on `json` with `python`.
///
/// # Errors
/// The interpreter cannot be started, the script fails (e.g. dateutil is not
/// installed), or its output is not the expected JSON.
pub fn run(python: &Path, script: &Path, json: &Path) -> Result<Report> {
    let out = Command::new(python)
        .arg(script)
        .arg(json)
        .output()
        .with_context(|| format!("cannot start {}", python.display()))?;
    if !out.status.success() {
        bail!(
            "{} {} failed ({}): {}\n  (install dateutil: python3 -m venv target/pyenv && \
             target/pyenv/bin/pip install -r crates/kairos-bench/requirements.txt, \
             or set KAIROS_BENCH_PYTHON)",
            python.display(),
            script.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    serde_json::from_slice(&out.stdout)
        .context("dateutil_bench.py printed something other than its JSON report")
}
