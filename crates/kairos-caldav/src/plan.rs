//! Pure decisions of a sync: when did each side last change an object,
//! and which version wins a conflict.
//!
//! Kairos sync resolves two concurrent versions by last writer wins and
//! logs the loser (`kairos log`); CalDAV gives no hybrid clock, so the
//! server version's time is its `LAST-MODIFIED` (else `DTSTAMP`) and the
//! local one's the time Kairos last wrote the series. The later one wins;
//! on a tie, or when the server's object carries no time, the server's
//! copy (the one other clients already see) wins. The loser is written to
//! `kairos log` in full, so nothing is lost.

use chrono::{DateTime, NaiveDateTime, Utc};

/// Which side's version is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Winner {
    /// The server's copy.
    Server,
    /// The version edited in Kairos.
    Here,
}

/// The latest `LAST-MODIFIED` in an object, else its latest `DTSTAMP`
/// (UTC values only; anything else is not a time to compare).
#[must_use]
pub fn modified(data: &str) -> Option<DateTime<Utc>> {
    let latest = |name: &str| {
        data.lines()
            .filter_map(|l| {
                let (head, value) = l.split_once(':')?;
                let prop = head.split(';').next()?;
                if !prop.eq_ignore_ascii_case(name) {
                    return None;
                }
                NaiveDateTime::parse_from_str(value.trim(), "%Y%m%dT%H%M%SZ")
                    .ok()
                    .map(|t| t.and_utc())
            })
            .max()
    };
    latest("LAST-MODIFIED").or_else(|| latest("DTSTAMP"))
}

/// The winner of a conflict between the server's version (changed at
/// `server`) and the local one (written at `here`).
#[must_use]
pub fn winner(server: Option<DateTime<Utc>>, here: DateTime<Utc>) -> Winner {
    match server {
        Some(t) if t < here => Winner::Here,
        _ => Winner::Server,
    }
}

/// A name for a new object on the server: the `UID` with anything but
/// letters, digits, `-`, `_` and `.` replaced, plus `.ics`.
#[must_use]
pub fn object_name(uid: &str) -> String {
    let mut s: String = uid
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .take(120)
        .collect();
    if s.is_empty() || s.starts_with('.') {
        s.insert(0, 'x');
    }
    s.push_str(".ics");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn last_modified_beats_dtstamp_and_the_latest_is_taken() {
        let data = "BEGIN:VEVENT\r\nDTSTAMP:20300101T000000Z\r\nLAST-MODIFIED:20260102T030405Z\r\n\
                    END:VEVENT\r\nBEGIN:VEVENT\r\nLAST-MODIFIED;X=1:20260105T000000Z\r\nEND:VEVENT\r\n";
        assert_eq!(
            modified(data),
            Some(Utc.with_ymd_and_hms(2026, 1, 5, 0, 0, 0).unwrap())
        );
    }

    #[test]
    fn dtstamp_when_no_last_modified_and_none_for_local_times() {
        assert_eq!(
            modified("DTSTAMP:20260102T030405Z\r\n"),
            Some(Utc.with_ymd_and_hms(2026, 1, 2, 3, 4, 5).unwrap())
        );
        assert_eq!(modified("LAST-MODIFIED:20260102T030405\r\n"), None);
    }

    #[test]
    fn later_side_wins_and_ties_or_unknown_go_to_the_server() {
        let t = Utc.with_ymd_and_hms(2026, 1, 2, 0, 0, 0).unwrap();
        let later = t + chrono::Duration::seconds(1);
        assert_eq!(winner(Some(t), later), Winner::Here);
        assert_eq!(winner(Some(later), t), Winner::Server);
        assert_eq!(winner(Some(t), t), Winner::Server);
        assert_eq!(winner(None, later), Winner::Server);
    }

    #[test]
    fn object_names_are_safe_path_segments() {
        assert_eq!(object_name("a@b c/d"), "a_b_c_d.ics");
        assert_eq!(object_name(""), "x.ics");
        assert_eq!(object_name("..x"), "x..x.ics");
    }
}
