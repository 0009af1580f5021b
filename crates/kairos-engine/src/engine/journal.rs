//! The delivery journal, `<database>-fired`: what the engine delivered and
//! has not yet recorded in the database.
//!
//! Outcomes are committed to SQLite in groups (one transaction for many
//! reminders keeps a burst fast), so a process killed between a delivery
//! and its group's commit would deliver again everything of the group. The
//! journal closes that window: one line just before each attempt
//! (`["b", key, channel]`) and one just after a successful one (`["d", key,
//! channel, at_ms, latency_ms]`), each a single `write(2)` into the page
//! cache, which a SIGKILL does not lose (about 0.2 µs each, measured with
//! `dd bs=100` here). It is emptied after each group commit.
//!
//! At start-up ([`super::Engine::recover`]) a `d` line of an instance still
//! `firing` is recorded as the delivery it was (not delivered again); a `b`
//! without its `d` is the one attempt in flight when the process died: it is
//! delivered again marked `repeat` (it may have been shown). An instance
//! still `firing` with no line was claimed but never attempted: delivered
//! normally. So a SIGKILL repeats at most the attempt in flight, one per
//! channel.
//!
//! The journal is not `fsync`ed: after a power cut the group commit's own
//! bound ([`super::AT_RISK`]) holds instead, and a repeat may then be
//! unmarked. If the journal cannot be written (disk full), it is switched
//! off and the database alone decides, as before it existed.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

/// A delivery the journal says happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Done {
    pub key: String,
    pub channel: String,
    pub at: DateTime<Utc>,
    pub latency_ms: i64,
}

/// What a journal left by an earlier run says.
#[derive(Debug, Default)]
pub(super) struct Replay {
    /// Deliveries that happened (maybe recorded since, maybe not).
    pub delivered: Vec<Done>,
    /// `(key, channel)` attempts begun and never finished: maybe shown.
    pub in_flight: HashSet<(String, String)>,
}

/// The open journal of one engine.
pub(super) struct Journal {
    path: PathBuf,
    /// `None` once a write failed: the journal is off.
    file: Option<File>,
    /// Holds nothing since it was last emptied.
    empty: bool,
    /// One line, reused.
    buf: Vec<u8>,
}

impl Journal {
    /// The journal beside the database at `db` (`None` for an in-memory
    /// database, or when it cannot be opened: then the database alone
    /// decides).
    pub(super) fn beside(db: &str) -> Option<Self> {
        if db.is_empty() || db == ":memory:" || db.starts_with("file::memory:") {
            return None;
        }
        let path = PathBuf::from(format!("{db}-fired"));
        let mut options = OpenOptions::new();
        options.read(true).append(true).create(true);
        // It names reminders: readable by the database's owner only.
        crate::platform::perms::on_create(&mut options);
        let file = options.open(&path).ok()?;
        let empty = file.metadata().map(|m| m.len() == 0).unwrap_or(false);
        Some(Self {
            path,
            file: Some(file),
            empty,
            buf: Vec::with_capacity(256),
        })
    }

    /// Notes an attempt about to begin.
    pub(super) fn began(&mut self, key: &str, channel: &str) {
        self.buf.clear();
        let _ = serde_json::to_writer(&mut self.buf, &("b", key, channel));
        self.append();
    }

    /// Notes a successful delivery.
    pub(super) fn delivered(
        &mut self,
        key: &str,
        channel: &str,
        at: DateTime<Utc>,
        latency_ms: i64,
    ) {
        self.buf.clear();
        let line = ("d", key, channel, at.timestamp_millis(), latency_ms);
        let _ = serde_json::to_writer(&mut self.buf, &line);
        self.append();
    }

    fn append(&mut self) {
        self.buf.push(b'\n');
        let Some(file) = self.file.as_mut() else {
            return;
        };
        // One write per line: a kill leaves whole lines (a torn last line,
        // after a power cut, is skipped when read).
        if file.write_all(&self.buf).is_err() {
            self.file = None;
        } else {
            self.empty = false;
        }
    }

    /// Empties the journal: everything in it is recorded in the database.
    pub(super) fn clear(&mut self) {
        if self.empty {
            return;
        }
        if let Some(file) = self.file.as_ref() {
            if file.set_len(0).is_err() {
                self.file = None;
            } else {
                self.empty = true;
            }
        }
    }

    /// Reads what an earlier run left.
    pub(super) fn replay(&self) -> Replay {
        read(&self.path)
    }
}

fn read(path: &Path) -> Replay {
    let mut out = Replay::default();
    let Ok(file) = File::open(path) else {
        return out;
    };
    for line in BufReader::new(file).lines() {
        let Ok(line) = line else { break };
        let Ok(v) = serde_json::from_str::<Vec<serde_json::Value>>(&line) else {
            continue;
        };
        let text = |i: usize| v.get(i).and_then(serde_json::Value::as_str);
        let num = |i: usize| v.get(i).and_then(serde_json::Value::as_i64);
        let (Some(kind), Some(key), Some(channel)) = (text(0), text(1), text(2)) else {
            continue;
        };
        let id = (key.to_owned(), channel.to_owned());
        match (
            kind,
            num(3).and_then(DateTime::from_timestamp_millis),
            num(4),
        ) {
            ("b", ..) => {
                out.in_flight.insert(id);
            }
            ("d", Some(at), Some(latency_ms)) => {
                out.in_flight.remove(&id);
                out.delivered.push(Done {
                    key: id.0,
                    channel: id.1,
                    at,
                    latency_ms,
                });
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_begun_attempt_without_its_end_is_in_flight_and_torn_lines_are_skipped() {
        let dir = tempfile::tempdir().expect("tmp");
        let db = dir.path().join("k.db");
        let mut j = Journal::beside(&db.to_string_lossy()).expect("open");
        let at = DateTime::from_timestamp_millis(1_700_000_000_123).expect("valid");
        j.began("k1", "stdout");
        j.delivered("k1", "stdout", at, 7);
        j.began("k\t2\"", "stdout");
        drop(j);
        // A power cut can tear the last line.
        let path = dir.path().join("k.db-fired");
        let mut f = OpenOptions::new().append(true).open(&path).expect("open");
        f.write_all(b"[\"d\",\"k3").expect("write");
        let j = Journal::beside(&db.to_string_lossy()).expect("reopen");
        let r = j.replay();
        assert_eq!(
            r.delivered,
            [Done {
                key: "k1".into(),
                channel: "stdout".into(),
                at,
                latency_ms: 7
            }]
        );
        assert_eq!(
            r.in_flight,
            HashSet::from([("k\t2\"".to_owned(), "stdout".to_owned())])
        );
    }

    #[test]
    fn clearing_empties_the_file_and_an_in_memory_database_has_no_journal() {
        assert!(Journal::beside(":memory:").is_none());
        let dir = tempfile::tempdir().expect("tmp");
        let db = dir.path().join("k.db");
        let mut j = Journal::beside(&db.to_string_lossy()).expect("open");
        j.began("k1", "stdout");
        j.clear();
        assert_eq!(
            std::fs::metadata(dir.path().join("k.db-fired"))
                .expect("file")
                .len(),
            0
        );
        j.began("k2", "stdout");
        assert_eq!(j.replay().in_flight.len(), 1);
    }
}
