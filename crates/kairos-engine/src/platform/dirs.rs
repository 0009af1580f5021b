//! Where Kairos keeps its database when not told (`--db`, `$KAIROS_DB`).

use std::path::PathBuf;

/// The default database: `$XDG_DATA_HOME/kairos/kairos.db`, else
/// `~/.local/share/kairos/kairos.db` (Unix, macOS included: the same path
/// the CLI has always used); `%LOCALAPPDATA%\kairos\kairos.db` on Windows.
/// `./kairos/kairos.db` when none of these is set.
#[must_use]
pub fn default_db() -> PathBuf {
    data_dir()
        .unwrap_or_else(|| PathBuf::from("."))
        .join("kairos")
        .join("kairos.db")
}

fn data_dir() -> Option<PathBuf> {
    let absolute = |var: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    if cfg!(windows) {
        absolute("LOCALAPPDATA")
    } else {
        absolute("XDG_DATA_HOME")
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
    }
}
