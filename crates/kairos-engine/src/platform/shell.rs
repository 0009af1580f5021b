//! Running a user's command line (the `command:CMD` channel): `sh -c` on
//! Unix, `cmd /C` on Windows (the line passed verbatim, as `cmd` parses its
//! own quoting).

/// A command that runs `line` through the platform's shell.
#[must_use]
pub fn command(line: &str) -> tokio::process::Command {
    #[cfg(windows)]
    {
        let mut c = tokio::process::Command::new("cmd");
        c.arg("/C").raw_arg(line);
        c
    }
    #[cfg(not(windows))]
    {
        let mut c = tokio::process::Command::new("sh");
        c.arg("-c").arg(line);
        c
    }
}

/// The shell's name, for messages.
pub const NAME: &str = if cfg!(windows) { "cmd" } else { "sh" };

/// The exit status of a command the shell could not find: 127 from `sh`,
/// 9009 from `cmd`.
pub const NOT_FOUND: i32 = if cfg!(windows) { 9009 } else { 127 };
