//! Files readable by their owner only (the database may hold a sync token,
//! the journal names reminders).
//!
//! Unix: mode `0600`. Windows: nothing is changed; a file takes the ACL of
//! its directory, and the default one (under `%LOCALAPPDATA%`, see
//! [`super::dirs`]) is the user's own (plus SYSTEM and Administrators).
//! Writing an explicit ACL needs the Win32 security API through `unsafe`
//! FFI, which this workspace forbids.

use std::fs::OpenOptions;
use std::path::Path;

/// Makes a file that `options` creates owner-only from its first byte.
pub fn on_create(options: &mut OpenOptions) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = options;
}

/// Makes an existing file owner-only. Best effort: a missing file is fine.
pub fn restrict(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
    }
    #[cfg(not(unix))]
    let _ = path;
}
