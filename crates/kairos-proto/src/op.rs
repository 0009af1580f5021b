//! Ops: one change made on one device (`docs/sync-protocol.md`, "Ops").

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::MAX_ICS_BYTES;
use crate::hlc::Hlc;
use crate::ids::{check_device, check_id, check_name};

/// One change made on one device. Immutable; identified by its `id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Op {
    /// `DEVICE:N`, N counting up from 1 on that device; unique forever.
    pub id: String,
    /// When it was made, by the device's hybrid logical clock.
    pub hlc: Hlc,
    /// The device that made it (the same as in `id` and `hlc`).
    pub device: String,
    /// For a put or delete: the stamp of the version the device held when
    /// it made this change (absent for a first version and for reminder
    /// ops). Two versions neither of which is based on the other are
    /// concurrent: the loser of such a pair is logged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<Hlc>,
    /// What changed.
    pub body: Body,
}

/// What an op changes, tagged by `"k"` on the wire (decoded by its `k`
/// first: `body_de.rs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "k")]
pub enum Body {
    /// A calendar created or changed.
    #[serde(rename = "calendar.put")]
    CalendarPut {
        /// The calendar's random uid (never its name).
        calendar: String,
        /// Its display name.
        name: String,
        /// Its color, if it has one.
        #[serde(default)]
        color: Option<String>,
    },
    /// A calendar deleted (a tombstone).
    #[serde(rename = "calendar.delete")]
    CalendarDelete {
        /// The calendar's uid.
        calendar: String,
    },
    /// A series (every VEVENT of one UID) created or changed.
    #[serde(rename = "series.put")]
    SeriesPut {
        /// The uid of its calendar.
        calendar: String,
        /// The event UID.
        uid: String,
        /// Every VEVENT of the series: master first, then overrides.
        ics: String,
    },
    /// A series deleted (a tombstone).
    #[serde(rename = "series.delete")]
    SeriesDelete {
        /// The uid of its calendar.
        calendar: String,
        /// The event UID.
        uid: String,
        /// The deletion was fetched from a CalDAV server by a device that
        /// links the calendar (`"caldav": true`; absent, false, for one
        /// made in Kairos): a device that links the calendar too leaves it
        /// to its own CalDAV sync. Added within v1: older peers ignore it.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        caldav: bool,
    },
    /// A calendar's working time, an account setting (protocol feature
    /// [`crate::FEATURE_WORK`]): its working week and whether it is a
    /// holiday feed. Its own register (`work/UID`), so a rename and a week
    /// changed at once on two devices both stay.
    #[serde(rename = "calendar.work")]
    CalendarWork {
        /// The calendar's uid.
        calendar: String,
        /// Working weekdays, Monday = bit 0 … Sunday = bit 6 (1–127).
        week: u8,
        /// Whether its all-day events are non-working days for every
        /// calendar.
        holidays: bool,
    },
    /// A calendar's ICS subscription, an account setting (protocol
    /// feature [`crate::FEATURE_FEED`]): every device that applies it
    /// fetches the feed itself, so the feed's events never travel as
    /// series ops. Its own register (`feed/UID`), last writer wins; a
    /// removal is the same record with `removed` set.
    #[serde(rename = "calendar.feed")]
    CalendarFeed {
        /// The calendar's uid.
        calendar: String,
        /// The feed's URL (`http://` or `https://`; it may carry a secret
        /// token: account data, synced to the account's own devices).
        url: String,
        /// The refresh interval, in seconds
        /// ([`crate::MIN_FEED_EVERY_SECS`]..=[`crate::MAX_FEED_EVERY_SECS`]).
        every: u32,
        /// The subscription ended (the calendar's fetched events go).
        #[serde(default)]
        removed: bool,
    },
    /// A reminder dismissed everywhere (absorbing).
    #[serde(rename = "reminder.dismiss")]
    ReminderDismiss {
        /// The base reminder instance key (no `~snooze@…` part).
        key: String,
    },
    /// A reminder snoozed until an instant.
    #[serde(rename = "reminder.snooze")]
    ReminderSnooze {
        /// The base reminder instance key.
        key: String,
        /// When it comes back (RFC 3339 UTC on the wire).
        #[serde(with = "crate::utc")]
        until: DateTime<Utc>,
    },
    /// The zone the account's floating times (and all-day dates) are read
    /// in, an account setting (protocol feature [`crate::FEATURE_ZONE`]): a
    /// device sends its own when it changes, so that the server plans the
    /// account's reminders in the devices' zone, under the devices' keys.
    /// One register (`zone`), last writer wins; devices do not take it
    /// from each other (each reads floating times in its own zone).
    #[serde(rename = "account.zone")]
    AccountZone {
        /// An IANA zone name (`Europe/Berlin`).
        zone: String,
    },
}

/// What an op does to its entity, for the merge rules and compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// A put or a delete of a last-writer-wins register (calendar, series).
    Write,
    /// A reminder dismissal.
    Dismiss,
    /// A reminder snooze until this instant.
    Snooze(DateTime<Utc>),
}

impl Body {
    /// The entity last-writer-wins is decided per: `calendar/UID`,
    /// `work/UID`, `feed/UID`, `series/CAL/UID`, `zone` or `reminder/KEY`.
    #[must_use]
    pub fn entity(&self) -> String {
        match self {
            Self::CalendarPut { calendar, .. } | Self::CalendarDelete { calendar } => {
                format!("calendar/{calendar}")
            }
            Self::CalendarWork { calendar, .. } => format!("work/{calendar}"),
            Self::CalendarFeed { calendar, .. } => format!("feed/{calendar}"),
            Self::SeriesPut { calendar, uid, .. } | Self::SeriesDelete { calendar, uid, .. } => {
                format!("series/{calendar}/{uid}")
            }
            Self::ReminderDismiss { key } | Self::ReminderSnooze { key, .. } => {
                format!("reminder/{key}")
            }
            Self::AccountZone { .. } => "zone".to_owned(),
        }
    }

    /// The wire name of its kind (`"series.put"`, …).
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            Self::CalendarPut { .. } => "calendar.put",
            Self::CalendarDelete { .. } => "calendar.delete",
            Self::CalendarWork { .. } => crate::FEATURE_WORK,
            Self::CalendarFeed { .. } => crate::FEATURE_FEED,
            Self::SeriesPut { .. } => "series.put",
            Self::SeriesDelete { .. } => "series.delete",
            Self::ReminderDismiss { .. } => "reminder.dismiss",
            Self::ReminderSnooze { .. } => "reminder.snooze",
            Self::AccountZone { .. } => crate::FEATURE_ZONE,
        }
    }

    /// The feature a peer must name to take or be sent this op (an op kind
    /// added to v1 after its first release); `None` for v1's own kinds.
    #[must_use]
    pub fn feature(&self) -> Option<&'static str> {
        match self {
            Self::CalendarWork { .. } => Some(crate::FEATURE_WORK),
            Self::CalendarFeed { .. } => Some(crate::FEATURE_FEED),
            Self::AccountZone { .. } => Some(crate::FEATURE_ZONE),
            _ => None,
        }
    }

    /// Whether a peer that named `features` takes (or may be sent) it.
    #[must_use]
    pub fn carried_by<S: AsRef<str>>(&self, features: &[S]) -> bool {
        self.feature()
            .is_none_or(|f| features.iter().any(|n| n.as_ref() == f))
    }

    /// What it does to its entity.
    #[must_use]
    pub fn effect(&self) -> Effect {
        match self {
            Self::ReminderDismiss { .. } => Effect::Dismiss,
            Self::ReminderSnooze { until, .. } => Effect::Snooze(*until),
            _ => Effect::Write,
        }
    }

    /// Whether it is a tombstone (`*.delete`).
    #[must_use]
    pub fn is_delete(&self) -> bool {
        matches!(
            self,
            Self::CalendarDelete { .. } | Self::SeriesDelete { .. }
        )
    }

    fn validate(&self) -> Result<(), String> {
        match self {
            Self::CalendarPut {
                calendar,
                name,
                color,
            } => {
                check_id("calendar", calendar)?;
                check_name("name", name)?;
                color.as_deref().map_or(Ok(()), |c| check_name("color", c))
            }
            Self::CalendarDelete { calendar } => check_id("calendar", calendar),
            Self::CalendarWork { calendar, week, .. } => {
                check_id("calendar", calendar)?;
                if (1..=127).contains(week) {
                    Ok(())
                } else {
                    Err(format!(
                        "week {week} is not a set of weekdays (1–127, Monday = 1)"
                    ))
                }
            }
            Self::CalendarFeed {
                calendar,
                url,
                every,
                ..
            } => {
                check_id("calendar", calendar)?;
                check_feed_url(url)?;
                let (lo, hi) = (crate::MIN_FEED_EVERY_SECS, crate::MAX_FEED_EVERY_SECS);
                if (lo..=hi).contains(every) {
                    Ok(())
                } else {
                    Err(format!("every {every} s is outside {lo}–{hi} s"))
                }
            }
            Self::SeriesPut { calendar, uid, ics } => {
                check_id("calendar", calendar)?;
                check_id("uid", uid)?;
                if ics.len() > MAX_ICS_BYTES {
                    return Err(format!("ics is {} bytes, over {MAX_ICS_BYTES}", ics.len()));
                }
                if ics
                    .chars()
                    .any(|c| c.is_control() && !matches!(c, '\t' | '\r' | '\n'))
                {
                    return Err("ics contains a control character other than tab, CR, LF".into());
                }
                Ok(())
            }
            Self::SeriesDelete { calendar, uid, .. } => {
                check_id("calendar", calendar)?;
                check_id("uid", uid)
            }
            Self::ReminderDismiss { key } | Self::ReminderSnooze { key, .. } => {
                check_id("key", key)
            }
            Self::AccountZone { zone } => check_zone(zone),
        }
    }
}

/// A zone's name: 1–[`crate::MAX_ZONE_BYTES`] bytes of the characters IANA
/// names use (letters, digits, `/`, `_`, `+`, `-`). Whether the zone is
/// known is the reader's to decide (its zone database may be older).
fn check_zone(zone: &str) -> Result<(), String> {
    let shaped = !zone.is_empty()
        && zone.len() <= crate::MAX_ZONE_BYTES
        && zone
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/_+-".contains(&b));
    if shaped {
        Ok(())
    } else {
        Err(format!("zone {zone:.80?} is not a zone name"))
    }
}

/// A feed URL: `http://` or `https://`, at most
/// [`crate::MAX_URL_BYTES`], no whitespace or control characters.
fn check_feed_url(url: &str) -> Result<(), String> {
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    if !(lower.starts_with("http://") || lower.starts_with("https://")) {
        return Err(format!("url {url:.80?} is not http:// or https://"));
    }
    if url.len() > crate::MAX_URL_BYTES {
        return Err(format!(
            "url is {} bytes, over {}",
            url.len(),
            crate::MAX_URL_BYTES
        ));
    }
    if url.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err("url contains whitespace or a control character".into());
    }
    Ok(())
}

impl Op {
    /// The op numbered `n` (from 1) of `hlc.device`.
    #[must_use]
    pub fn new(n: u64, hlc: Hlc, body: Body) -> Self {
        Self {
            id: format!("{}:{n}", hlc.device),
            device: hlc.device.clone(),
            hlc,
            base: None,
            body,
        }
    }

    /// The entity it changes (see [`Body::entity`]).
    #[must_use]
    pub fn entity(&self) -> String {
        self.body.entity()
    }

    /// Checks the bounds of `docs/sync-protocol.md`: `device` is a device
    /// id, `id` is `DEVICE:N` with N ≥ 1 and the same device, the stamp was
    /// issued by that device, and the body's fields are within their bounds.
    ///
    /// # Errors
    /// A message naming the field.
    pub fn validate(&self) -> Result<(), String> {
        check_device("device", &self.device)?;
        check_id("id", &self.id)?;
        let n = self
            .id
            .strip_prefix(self.device.as_str())
            .and_then(|rest| rest.strip_prefix(':'));
        let counted = n.is_some_and(|n| {
            !n.is_empty()
                && !n.starts_with('0')
                && n.len() <= 19
                && n.bytes().all(|b| b.is_ascii_digit())
        });
        if !counted {
            return Err(format!(
                "id {:.80?} is not {}:N with N a number from 1",
                self.id, self.device
            ));
        }
        if self.hlc.device != self.device {
            return Err(format!(
                "hlc {} was not issued by the op's device {}",
                self.hlc, self.device
            ));
        }
        self.body.validate()
    }
}
