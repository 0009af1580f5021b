//! The OS notification ids of the reminders shown, kept in a file beside the
//! database (`<database>-notified`), so that a restarted app can *replace*
//! the notification an earlier, killed process showed.
//!
//! After a crash the engine delivers again the one attempt that was in
//! flight, marked [`repeat`](kairos_engine::channel::Reminder::repeat): it
//! may already be on screen. The desktop channel then asks the notification
//! server to replace the id remembered here (`replaces_id`) instead of adding
//! a second notification. So the id must reach the disk before the engine can
//! record the delivery: one line per show, `["<key>",<id>,"<server>"]`,
//! written with a single `write(2)` into the page cache as soon as the server
//! has answered (a SIGKILL does not lose it). Like the engine's journal it is
//! not `fsync`ed: after a power cut the repeat may come up as a second
//! notification, never as a lost one.
//!
//! An id means something only to the server instance that issued it (a
//! restarted server, or the next login's, counts from 1 again, and its id 5
//! may be another app's notification): each id is kept with an opaque token
//! naming that instance (the desktop uses the bus id and the server's unique
//! bus name), and is given back only for the same token.
//!
//! Bounded: at start (before the engine recovers) and again after every
//! [`COMPACT_AFTER`] shows, the file is rewritten with only the reminders
//! still `firing` (may be repeated) or `delivered` (still waiting for the
//! person: its notification may be on screen). A torn last line is skipped.
//!
//! This knows neither D-Bus nor Tauri: ids are plain `u32`s (the XDG
//! notification id), servers plain strings.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use kairos_store::State;

/// Shows after which the file is rewritten ([`ShownIds::compact`]): about
/// 60 bytes a line, so the file stays under about 100 KB between rewrites.
pub const COMPACT_AFTER: usize = 1024;

/// Notification ids by instance key, remembered durably.
#[derive(Debug)]
pub struct ShownIds {
    /// `<database>-notified`.
    path: PathBuf,
    /// Open for appending; `None` when it cannot be written (the ids are then
    /// remembered in memory only: a repeat after a crash shows a second
    /// notification, as before this existed).
    file: Option<File>,
    /// The latest id shown for each key, with the server that issued it.
    ids: HashMap<String, (u32, String)>,
    /// Lines appended since the file was last rewritten.
    appended: usize,
}

/// Whether a reminder in `state` still needs its notification id: it may be
/// repeated (`firing`; `failed`: an attempt the engine gave up on after its
/// timeout may have been shown, and its retry says `repeat`) or its
/// notification may still be on screen (`delivered`). Any other state (or a
/// key no longer in the database) is forgotten at the next rewrite.
#[must_use]
pub fn worth_keeping(state: Option<State>) -> bool {
    matches!(
        state,
        Some(State::Firing | State::Failed | State::Delivered)
    )
}

fn options() -> OpenOptions {
    let mut o = OpenOptions::new();
    // It names reminders: readable by the database's owner only.
    kairos_engine::platform::perms::on_create(&mut o);
    o
}

fn line(key: &str, id: u32, server: &str) -> Option<Vec<u8>> {
    let mut b = serde_json::to_vec(&(key, id, server)).ok()?;
    b.push(b'\n');
    Some(b)
}

impl ShownIds {
    /// Loads the ids remembered beside the database at `db`, keeps those
    /// whose reminder is still [`worth_keeping`] (`state_of` tells a key's
    /// state) and rewrites the file with them.
    ///
    /// Call it in the process that delivers reminders (it holds the engine's
    /// instance lock), before the engine recovers: recovery moves the
    /// `firing` instances on. A process that only hands over to a running
    /// app must not call it (it would rewrite the file under the other).
    pub fn open(db: &Path, state_of: impl FnMut(&str) -> Option<State>) -> Self {
        let mut me = Self::unloaded(db);
        me.load(state_of);
        me
    }

    /// The ids beside the database at `db`, not read yet: it remembers what
    /// is shown from now on (in memory) until [`ShownIds::load`] reads the
    /// file. For a channel made before its process holds the engine's lock.
    #[must_use]
    pub fn unloaded(db: &Path) -> Self {
        let mut path = OsString::from(db.as_os_str());
        path.push("-notified");
        Self {
            path: PathBuf::from(path),
            file: None,
            ids: HashMap::new(),
            appended: 0,
        }
    }

    /// [`ShownIds::open`]'s reading and rewriting, for one made
    /// [`ShownIds::unloaded`] (same conditions: the lock held, before the
    /// engine recovers).
    pub fn load(&mut self, state_of: impl FnMut(&str) -> Option<State>) {
        let mut ids = std::fs::read_to_string(&self.path)
            .map(|text| parse(&text))
            .unwrap_or_default();
        // What was shown since it was made is newer than the file.
        ids.extend(self.ids.drain());
        self.ids = ids;
        self.compact(state_of);
    }

    /// The file (`<database>-notified`).
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The id last shown for `key`, if `server` issued it (an empty
    /// `server`, unknown, matches nothing).
    #[must_use]
    pub fn get(&self, key: &str, server: &str) -> Option<u32> {
        match self.ids.get(key) {
            Some((id, s)) if !server.is_empty() && s == server => Some(*id),
            _ => None,
        }
    }

    /// How many keys are remembered.
    #[must_use]
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether no key is remembered.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Remembers that `key` is shown as notification `id` by `server`: one
    /// line, one write. A failed write switches the file off (memory only).
    pub fn remember(&mut self, key: &str, id: u32, server: &str) {
        self.ids.insert(key.to_owned(), (id, server.to_owned()));
        let (Some(file), Some(buf)) = (self.file.as_mut(), line(key, id, server)) else {
            return;
        };
        if file.write_all(&buf).is_err() {
            self.file = None;
        } else {
            self.appended += 1;
        }
    }

    /// Whether enough was appended since the last rewrite that
    /// [`Self::compact`] should run.
    #[must_use]
    pub fn wants_compaction(&self) -> bool {
        self.appended >= COMPACT_AFTER
    }

    /// Forgets the keys no longer [`worth_keeping`] and rewrites the file
    /// with the rest (a new file renamed over the old: a crash leaves one or
    /// the other, whole).
    pub fn compact(&mut self, mut state_of: impl FnMut(&str) -> Option<State>) {
        self.ids.retain(|k, _| worth_keeping(state_of(k)));
        let mut text = Vec::with_capacity(self.ids.len() * 64);
        for (k, (id, server)) in &self.ids {
            if let Some(l) = line(k, *id, server) {
                text.extend_from_slice(&l);
            }
        }
        let mut tmp = OsString::from(self.path.as_os_str());
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        // A leftover from a rewrite that died would keep its own mode.
        let _ = std::fs::remove_file(&tmp);
        let written = options()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)
            .and_then(|mut f| f.write_all(&text))
            .and_then(|()| std::fs::rename(&tmp, &self.path));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        // Appending goes on in whichever file is now at `path` (if the
        // rewrite failed, the old one still holds every line).
        self.file = options().append(true).create(true).open(&self.path).ok();
        self.appended = 0;
    }
}

/// The ids in a file's text; later lines win, a torn or foreign line is
/// skipped.
fn parse(text: &str) -> HashMap<String, (u32, String)> {
    text.lines()
        .filter_map(|l| serde_json::from_str::<(String, u32, String)>(l).ok())
        .map(|(key, id, server)| (key, (id, server)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn states(pairs: &[(&str, State)]) -> impl FnMut(&str) -> Option<State> {
        let m: HashMap<String, State> = pairs.iter().map(|(k, s)| ((*k).to_owned(), *s)).collect();
        move |k| m.get(k).copied()
    }

    /// A notification server (an opaque token).
    const SRV: &str = "bus/:1.7";

    fn lines(path: &Path) -> Vec<String> {
        std::fs::read_to_string(path)
            .expect("read")
            .lines()
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn an_id_remembered_is_there_after_a_restart_and_the_latest_wins() {
        let dir = tempfile::tempdir().expect("tmp");
        let db = dir.path().join("k.db");
        let live = [("a/1", State::Firing), ("b\t\"2", State::Delivered)];
        let mut s = ShownIds::open(&db, states(&live));
        assert!(s.is_empty());
        s.remember("a/1", 7, SRV);
        s.remember("b\t\"2", 8, SRV);
        s.remember("a/1", 9, SRV);
        assert_eq!(s.get("a/1", SRV), Some(9));
        // One line per show, appended.
        assert_eq!(lines(s.path()).len(), 3);
        drop(s);
        let s = ShownIds::open(&db, states(&live));
        assert_eq!(
            (s.get("a/1", SRV), s.get("b\t\"2", SRV), s.get("c", SRV)),
            (Some(9), Some(8), None)
        );
        assert_eq!(s.path(), dir.path().join("k.db-notified"));
    }

    #[test]
    fn made_before_the_lock_it_reads_the_file_only_when_loaded() {
        let dir = tempfile::tempdir().expect("tmp");
        let db = dir.path().join("k.db");
        let live = [("old", State::Firing), ("new", State::Delivered)];
        let mut before = ShownIds::open(&db, states(&live));
        before.remember("old", 4, SRV);
        drop(before);
        let mut s = ShownIds::unloaded(&db);
        assert_eq!(s.get("old", SRV), None, "nothing read before load");
        s.remember("new", 5, SRV);
        s.load(states(&live));
        assert_eq!((s.get("old", SRV), s.get("new", SRV)), (Some(4), Some(5)));
        drop(s);
        let s = ShownIds::open(&db, states(&live));
        assert_eq!((s.get("old", SRV), s.get("new", SRV)), (Some(4), Some(5)));
    }

    #[test]
    fn a_torn_last_line_is_skipped() {
        let dir = tempfile::tempdir().expect("tmp");
        let db = dir.path().join("k.db");
        let path = dir.path().join("k.db-notified");
        let text = "[\"k1\",3,\"s\"]\nnot json\n[\"k2\",4,\"s\"]\n[\"k3\",5,\"";
        std::fs::write(&path, text).expect("write");
        let all = [
            ("k1", State::Firing),
            ("k2", State::Firing),
            ("k3", State::Firing),
        ];
        let s = ShownIds::open(&db, states(&all));
        assert_eq!(
            (s.get("k1", "s"), s.get("k2", "s"), s.get("k3", "s")),
            (Some(3), Some(4), None)
        );
        assert_eq!(s.len(), 2);
        // The rewrite dropped the torn line: appending starts on a fresh line.
        assert_eq!(lines(&path).len(), 2);
    }

    #[test]
    fn opening_keeps_only_firing_failed_and_delivered_reminders() {
        let dir = tempfile::tempdir().expect("tmp");
        let db = dir.path().join("k.db");
        let mut s = ShownIds::open(&db, |_| None);
        for (i, k) in ["firing", "delivered", "acked", "snoozed", "gone", "failed"]
            .iter()
            .enumerate()
        {
            s.remember(k, u32::try_from(i).expect("small") + 1, SRV);
        }
        drop(s);
        let s = ShownIds::open(
            &db,
            states(&[
                ("firing", State::Firing),
                ("delivered", State::Delivered),
                ("acked", State::Acknowledged),
                ("snoozed", State::Snoozed),
                // Timed out: its retry (a repeat) replaces what it showed.
                ("failed", State::Failed),
            ]),
        );
        assert_eq!(
            (
                s.get("firing", SRV),
                s.get("delivered", SRV),
                s.get("failed", SRV)
            ),
            (Some(1), Some(2), Some(6))
        );
        assert_eq!(s.len(), 3);
        let mut kept = lines(s.path());
        kept.sort();
        assert_eq!(
            kept,
            [
                "[\"delivered\",2,\"bus/:1.7\"]",
                "[\"failed\",6,\"bus/:1.7\"]",
                "[\"firing\",1,\"bus/:1.7\"]"
            ]
        );
        assert!(!dir.path().join("k.db-notified.tmp").exists());
    }

    #[test]
    fn many_shows_ask_for_a_rewrite_that_bounds_the_file() {
        let dir = tempfile::tempdir().expect("tmp");
        let db = dir.path().join("k.db");
        let mut s = ShownIds::open(&db, |_| None);
        for i in 0..COMPACT_AFTER {
            assert!(!s.wants_compaction());
            s.remember(&format!("k{i}"), u32::try_from(i).expect("small"), SRV);
        }
        assert!(s.wants_compaction());
        // Only the last one is still waiting for the person.
        let last = format!("k{}", COMPACT_AFTER - 1);
        s.compact(|k| (k == last).then_some(State::Delivered));
        assert!(!s.wants_compaction());
        assert_eq!(lines(s.path()).len(), 1);
        s.remember("next", 1, SRV);
        assert_eq!(lines(s.path()).len(), 2);
        assert_eq!(
            s.get(&last, SRV),
            Some(u32::try_from(COMPACT_AFTER - 1).expect("small"))
        );
    }

    #[test]
    fn an_id_is_given_back_only_for_the_server_that_issued_it() {
        let dir = tempfile::tempdir().expect("tmp");
        let db = dir.path().join("k.db");
        let mut s = ShownIds::open(&db, |_| None);
        s.remember("k", 5, SRV);
        drop(s);
        let s = ShownIds::open(&db, |_| Some(State::Firing));
        assert_eq!(s.get("k", SRV), Some(5));
        // Restarted (new unique name) or another login's bus: its id 5 is
        // somebody else's notification.
        assert_eq!(s.get("k", "bus/:1.9"), None);
        assert_eq!(s.get("k", "other-bus/:1.7"), None);
        // Unknown server: nothing to replace.
        assert_eq!(s.get("k", ""), None);
        let mut s = s;
        s.remember("u", 6, "");
        assert_eq!(s.get("u", ""), None);
    }

    #[cfg(unix)]
    #[test]
    fn the_file_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tmp");
        let s = ShownIds::open(&dir.path().join("k.db"), |_| None);
        let mode = std::fs::metadata(s.path())
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
