//! The hybrid logical clock (`docs/sync-protocol.md`, "Hybrid logical clock").

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::ids::is_device;

/// The largest wall time a stamp can carry: 16 decimal digits.
pub const MAX_MS: u64 = 9_999_999_999_999_999;
/// The largest counter: 5 decimal digits.
pub const MAX_COUNTER: u32 = 99_999;

/// A stamp: wall milliseconds, a counter, the issuing device; ordered in
/// that order (the derived `Ord` follows the field order). On the wire it is
/// text that sorts like the stamp: `0001764864000123.00002.d_4f1c2a9b0e7d3c5a`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Hlc {
    /// Wall-clock milliseconds since the Unix epoch (at most [`MAX_MS`]).
    pub ms: u64,
    /// Orders stamps issued within one millisecond, or while the wall clock
    /// is behind the last stamp seen (at most [`MAX_COUNTER`]).
    pub counter: u32,
    /// The device that issued it; breaks ties between devices.
    pub device: String,
}

impl Hlc {
    /// Whether this stamp is more than 24 h ahead of `now_ms`: still applied
    /// (the receiver's clock may be the wrong one) but worth a log line.
    #[must_use]
    pub fn is_far_ahead(&self, now_ms: u64) -> bool {
        self.ms > now_ms.saturating_add(24 * 3_600_000)
    }

    fn time(&self) -> (u64, u32) {
        (self.ms, self.counter)
    }
}

impl fmt::Display for Hlc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016}.{:05}.{}", self.ms, self.counter, self.device)
    }
}

/// Why a stamp's text was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("hlc {text:.60?} is not MS(16 digits).COUNTER(5 digits).DEVICE")]
pub struct HlcParseError {
    text: String,
}

impl FromStr for Hlc {
    type Err = HlcParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || HlcParseError {
            text: s.chars().take(60).collect(),
        };
        let mut parts = s.splitn(3, '.');
        let (Some(ms), Some(counter), Some(device)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(err());
        };
        let digits = |p: &str, n: usize| p.len() == n && p.bytes().all(|b| b.is_ascii_digit());
        if !digits(ms, 16) || !digits(counter, 5) || !is_device(device) {
            return Err(err());
        }
        Ok(Self {
            ms: ms.parse().map_err(|_| err())?,
            counter: counter.parse().map_err(|_| err())?,
            device: device.to_owned(),
        })
    }
}

impl Serialize for Hlc {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Hlc {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = std::borrow::Cow::<str>::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// A device's clock: the last stamp it issued or saw. Keep [`HlcClock::last`]
/// in the device's database so stamps stay increasing across restarts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HlcClock {
    device: String,
    last: Option<Hlc>,
}

impl HlcClock {
    /// The clock of `device`, resuming after `last` (what was stored).
    #[must_use]
    pub fn new(device: impl Into<String>, last: Option<Hlc>) -> Self {
        Self {
            device: device.into(),
            last,
        }
    }

    /// The last stamp issued or observed (to store).
    #[must_use]
    pub fn last(&self) -> Option<&Hlc> {
        self.last.as_ref()
    }

    /// A new stamp at wall time `now_ms`: `(now, 0)` if the wall clock is
    /// past the last stamp, else `(last.ms, last.counter + 1)`; when the
    /// counter is full, `(last.ms + 1, 0)`. Always greater than every stamp
    /// issued or observed before, except at the very end of the range
    /// ([`MAX_MS`], [`MAX_COUNTER`]: year 318,857), where it stays there.
    pub fn issue(&mut self, now_ms: u64) -> Hlc {
        let now_ms = now_ms.min(MAX_MS);
        let (ms, counter) = match self.last.as_ref().map(Hlc::time) {
            None => (now_ms, 0),
            Some((last_ms, _)) if now_ms > last_ms => (now_ms, 0),
            Some((last_ms, c)) if c < MAX_COUNTER => (last_ms, c + 1),
            Some((last_ms, _)) if last_ms < MAX_MS => (last_ms + 1, 0),
            Some(t) => t,
        };
        let stamp = Hlc {
            ms,
            counter,
            device: self.device.clone(),
        };
        self.last = Some(stamp.clone());
        stamp
    }

    /// Records a stamp received from elsewhere: `last = max(last, seen)` by
    /// (ms, counter), so the next issued stamp is greater than it.
    pub fn observe(&mut self, seen: &Hlc) {
        let newer = match &self.last {
            None => true,
            Some(last) => seen.time() > last.time(),
        };
        if newer {
            self.last = Some(seen.clone());
        }
    }
}
