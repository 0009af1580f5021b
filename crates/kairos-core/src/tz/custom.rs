//! A zone defined only by a file's own `VTIMEZONE` (RFC 5545 §3.6.5): its
//! `STANDARD`/`DAYLIGHT` observances, used as written when they match no
//! IANA zone.
//!
//! [`CustomTz`] is a `Copy` handle, like `chrono_tz::Tz`, so that
//! [`Zone`](crate::model::Zone) stays `Copy`. Zones are interned: each
//! distinct block text is built once per process and shared by every event
//! (and every re-read of the same text, as the engine re-reads stored events),
//! so memory grows with the number of *distinct* custom zones, which
//! [`MAX_CUSTOM_ZONES`] bounds (past it a new block is read as if it had no
//! usable rules: by its name, else as floating time, with a warning).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Mutex, OnceLock, PoisonError};

use chrono::{DateTime, FixedOffset, NaiveDateTime, Offset, Utc};

use super::Onset;
use crate::error::Error;
use crate::ics::lexer::Component;

/// Years over which a custom zone's transitions are computed; outside them
/// the offset in force at the nearer end applies.
const YEARS: (i32, i32) = (1900, 2200);
/// Distinct custom zones one process keeps.
/// Each keeps its transitions (about 600 for a zone with DST, 10 KB): the
/// bound keeps a long-running process under ~10 MB for them.
pub const MAX_CUSTOM_ZONES: usize = 1024;

/// A zone built from a `VTIMEZONE` block.
struct CustomZone {
    /// The `TZID` as written.
    name: String,
    /// The block's content lines, `BEGIN:VTIMEZONE` to `END:VTIMEZONE`,
    /// written back on export so the zone round-trips.
    lines: Vec<String>,
    /// Offset changes in time order: (UTC seconds, offset before, offset after).
    changes: Vec<(i64, i32, i32)>,
}

/// A handle on a custom zone; equal handles are the same zone.
#[derive(Clone, Copy)]
pub struct CustomTz(&'static CustomZone);

impl PartialEq for CustomTz {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for CustomTz {}

impl fmt::Debug for CustomTz {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CustomTz({:?})", self.0.name)
    }
}

fn lines_of(c: &Component, out: &mut Vec<String>) {
    out.push(format!("BEGIN:{}", c.name));
    out.extend(c.props.iter().map(|p| crate::ics::raw(p).line));
    for child in &c.children {
        lines_of(child, out);
    }
    out.push(format!("END:{}", c.name));
}

impl CustomTz {
    /// The zone `block` defines, or `None` when it defines no observances
    /// (or [`MAX_CUSTOM_ZONES`] distinct custom zones are already kept).
    ///
    /// # Errors
    /// Malformed observances.
    pub(crate) fn from_block(block: &Component, name: &str) -> Result<Option<Self>, Error> {
        let mut lines = Vec::new();
        lines_of(block, &mut lines);
        let key = lines.join("\n");
        static ZONES: OnceLock<Mutex<HashMap<String, &'static CustomZone>>> = OnceLock::new();
        let registry = ZONES.get_or_init(Mutex::default);
        if let Some(z) = registry
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
        {
            return Ok(Some(Self(z)));
        }
        let onsets: Vec<Onset> = super::onsets(block, YEARS)?;
        if onsets.is_empty() {
            return Ok(None);
        }
        let changes = onsets
            .iter()
            .map(|(at, from, to)| (at.timestamp(), *from, *to))
            .collect();
        let mut zones = registry.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(z) = zones.get(&key) {
            return Ok(Some(Self(z)));
        }
        if zones.len() >= MAX_CUSTOM_ZONES {
            // Full: this block is read as if it had no rules (its name, else
            // floating time, with a warning) rather than failing the file.
            return Ok(None);
        }
        // Leaked on purpose: interned for the life of the process (see above).
        let zone: &'static CustomZone = Box::leak(Box::new(CustomZone {
            name: name.to_owned(),
            lines,
            changes,
        }));
        zones.insert(key, zone);
        Ok(Some(Self(zone)))
    }

    /// The zone a `VTIMEZONE` block's text defines, as [`CustomTz::vtimezone`]
    /// gives it (lines joined by line breaks): how a stored custom zone is
    /// read back. Interned like every custom zone, so the same text gives
    /// the same handle.
    ///
    /// # Errors
    /// Text that is not one `VTIMEZONE` with a `TZID` and usable
    /// observances.
    pub fn from_vtimezone(text: &str) -> Result<Self, Error> {
        let top = crate::ics::lexer::parse(text.as_bytes(), &crate::Limits::default())?;
        let [block] = top.as_slice() else {
            return Err(Error::syntax(
                1,
                format!(
                    "expected one VTIMEZONE block, found {} components",
                    top.len()
                ),
            ));
        };
        if block.name != "VTIMEZONE" {
            return Err(Error::syntax(
                block.line,
                format!("expected BEGIN:VTIMEZONE, found BEGIN:{}", block.name),
            ));
        }
        let Some(id) = block.prop("TZID") else {
            return Err(Error::syntax(block.line, "the VTIMEZONE has no TZID"));
        };
        let name = crate::ics::zone_name(&id.value);
        Self::from_block(block, &name)?.ok_or_else(|| {
            Error::syntax(
                block.line,
                format!("VTIMEZONE {name:?} defines no usable observances"),
            )
        })
    }

    /// The `TZID` as written in the file.
    #[must_use]
    pub fn name(self) -> &'static str {
        &self.0.name
    }

    /// The `VTIMEZONE` block's content lines, for writing it back.
    #[must_use]
    pub fn vtimezone(self) -> &'static [String] {
        &self.0.lines
    }

    fn offset_secs(self, utc: i64) -> i32 {
        let ch = &self.0.changes;
        match ch.partition_point(|c| c.0 <= utc).checked_sub(1) {
            Some(i) => ch[i].2,
            None => ch.first().map_or(0, |c| c.1),
        }
    }

    /// The offset in force at `t`.
    #[must_use]
    pub fn offset_at(self, t: DateTime<Utc>) -> FixedOffset {
        let secs = self.offset_secs(t.timestamp());
        // Offsets come from `utc_offset`, which keeps them under a day.
        FixedOffset::east_opt(secs).unwrap_or(Utc.fix())
    }

    /// The wall-clock time at `t`.
    #[must_use]
    pub fn local(self, t: DateTime<Utc>) -> NaiveDateTime {
        let off = i64::from(self.offset_secs(t.timestamp()));
        t.naive_utc()
            .checked_add_signed(chrono::Duration::seconds(off))
            .unwrap_or(t.naive_utc())
    }

    /// The instant of a wall-clock time (RFC 5545 §3.3.5): in a gap, the
    /// offset before the gap; in an overlap, the first of the two.
    #[must_use]
    pub fn resolve(self, local: NaiveDateTime) -> DateTime<Utc> {
        let l = local.and_utc().timestamp();
        let at = |off: i32| {
            local
                .checked_sub_signed(chrono::Duration::seconds(i64::from(off)))
                .map_or(local.and_utc(), |u| u.and_utc())
        };
        let ch = &self.0.changes;
        // Offsets are under a day, so only changes within a day of `l` matter.
        let first = ch.partition_point(|c| c.0 < l - 86_400);
        for &(utc, before, after) in ch[first..].iter().take_while(|c| c.0 <= l + 86_400) {
            let (old_ends, new_starts) = (utc + i64::from(before), utc + i64::from(after));
            let in_gap = after > before && (old_ends..new_starts).contains(&l);
            let in_overlap = after < before && (new_starts..old_ends).contains(&l);
            if in_gap || in_overlap {
                return at(before);
            }
        }
        at(self.offset_secs(l - i64::from(self.offset_secs(l))))
    }

    /// Does the wall-clock time `local` fall in a gap of this zone?
    #[must_use]
    pub fn in_gap(self, local: NaiveDateTime) -> bool {
        let t = self.resolve(local);
        self.local(t) != local
    }
}
