//! Instants on the wire: RFC 3339 in UTC, written and required with `Z`.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Deserializer, Serializer};

/// `2026-12-04T16:15:00Z` (fractional seconds only when there are some).
#[must_use]
pub fn format(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

/// Parses an RFC 3339 instant that is in UTC (ends in `Z`).
///
/// # Errors
/// A message quoting the text.
pub fn parse(s: &str) -> Result<DateTime<Utc>, String> {
    let bad = || format!("{s:.40?} is not an RFC 3339 instant in UTC (…Z)");
    if !s.ends_with('Z') {
        return Err(bad());
    }
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| bad())
}

pub(crate) fn serialize<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format(t))
}

pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
    let text = std::borrow::Cow::<str>::deserialize(d)?;
    parse(&text).map_err(serde::de::Error::custom)
}

/// The same for an optional instant (`null` when absent).
pub(crate) mod option {
    use super::{DateTime, Deserialize, Deserializer, Serializer, Utc};

    pub(crate) fn serialize<S: Serializer>(
        t: &Option<DateTime<Utc>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match t {
            Some(t) => super::serialize(t, s),
            None => s.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<DateTime<Utc>>, D::Error> {
        let text = Option::<std::borrow::Cow<str>>::deserialize(d)?;
        text.map(|t| super::parse(&t).map_err(serde::de::Error::custom))
            .transpose()
    }
}
