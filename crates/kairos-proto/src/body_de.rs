//! Decoding a [`Body`] by its `"k"` first. Serde's derive for an internally
//! tagged enum copies every field of the object into a buffer (its private
//! `Content` tree) before it knows the variant, then decodes the variant
//! from that copy: one allocation per string and per field, for every op a
//! server takes in. Here, when `"k"` is the object's first key (as every
//! encoder of this crate writes it), the variant's fields are read straight
//! from the input; otherwise the rest of the object is buffered once as a
//! JSON value, and decoded the same way. An unknown `k` is an error naming
//! it (serde's "unknown variant `…`, expected one of …").

use std::fmt;

use chrono::{DateTime, Utc};
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, DeserializeOwned, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use crate::op::Body;

/// The op kinds, as `"k"` spells them.
enum Kind {
    CalendarPut,
    CalendarDelete,
    SeriesPut,
    SeriesDelete,
    CalendarWork,
    CalendarFeed,
    ReminderDismiss,
    ReminderSnooze,
    AccountZone,
}

const KINDS: &[&str] = &[
    "calendar.put",
    "calendar.delete",
    "series.put",
    "series.delete",
    "calendar.work",
    "calendar.feed",
    "reminder.dismiss",
    "reminder.snooze",
    "account.zone",
];

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Kind;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an op kind (a string)")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Kind, E> {
                Ok(match v {
                    "calendar.put" => Kind::CalendarPut,
                    "calendar.delete" => Kind::CalendarDelete,
                    "series.put" => Kind::SeriesPut,
                    "series.delete" => Kind::SeriesDelete,
                    "calendar.work" => Kind::CalendarWork,
                    "calendar.feed" => Kind::CalendarFeed,
                    "reminder.dismiss" => Kind::ReminderDismiss,
                    "reminder.snooze" => Kind::ReminderSnooze,
                    "account.zone" => Kind::AccountZone,
                    _ => return Err(E::unknown_variant(v, KINDS)),
                })
            }
        }
        d.deserialize_str(V)
    }
}

// Each variant's fields, with the attributes `Body` has for them (unknown
// fields are ignored, as the derive did).
#[derive(Deserialize)]
struct CalendarPut {
    calendar: String,
    name: String,
    #[serde(default)]
    color: Option<String>,
}
#[derive(Deserialize)]
struct CalendarDelete {
    calendar: String,
}
#[derive(Deserialize)]
struct SeriesPut {
    calendar: String,
    uid: String,
    ics: String,
}
#[derive(Deserialize)]
struct SeriesDelete {
    calendar: String,
    uid: String,
    #[serde(default)]
    caldav: bool,
}
#[derive(Deserialize)]
struct CalendarWork {
    calendar: String,
    week: u8,
    holidays: bool,
}
#[derive(Deserialize)]
struct CalendarFeed {
    calendar: String,
    url: String,
    every: u32,
    #[serde(default)]
    removed: bool,
}
#[derive(Deserialize)]
struct ReminderDismiss {
    key: String,
}
#[derive(Deserialize)]
struct ReminderSnooze {
    key: String,
    #[serde(with = "crate::utc")]
    until: DateTime<Utc>,
}
#[derive(Deserialize)]
struct AccountZone {
    zone: String,
}

/// The first key: `k`, or another (kept for the buffered path).
enum Key {
    K,
    Other(String),
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
                Ok(if v == "k" {
                    Key::K
                } else {
                    Key::Other(v.to_owned())
                })
            }
        }
        d.deserialize_identifier(V)
    }
}

/// The body of kind `kind` from the fields in `d` (the object without `k`).
fn body<'de, D: Deserializer<'de>>(kind: Kind, d: D) -> Result<Body, D::Error> {
    fn get<'de, T: Deserialize<'de>, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
        T::deserialize(d)
    }
    Ok(match kind {
        Kind::CalendarPut => {
            let CalendarPut {
                calendar,
                name,
                color,
            } = get(d)?;
            Body::CalendarPut {
                calendar,
                name,
                color,
            }
        }
        Kind::CalendarDelete => {
            let CalendarDelete { calendar } = get(d)?;
            Body::CalendarDelete { calendar }
        }
        Kind::SeriesPut => {
            let SeriesPut { calendar, uid, ics } = get(d)?;
            Body::SeriesPut { calendar, uid, ics }
        }
        Kind::SeriesDelete => {
            let SeriesDelete {
                calendar,
                uid,
                caldav,
            } = get(d)?;
            Body::SeriesDelete {
                calendar,
                uid,
                caldav,
            }
        }
        Kind::CalendarWork => {
            let CalendarWork {
                calendar,
                week,
                holidays,
            } = get(d)?;
            Body::CalendarWork {
                calendar,
                week,
                holidays,
            }
        }
        Kind::CalendarFeed => {
            let CalendarFeed {
                calendar,
                url,
                every,
                removed,
            } = get(d)?;
            Body::CalendarFeed {
                calendar,
                url,
                every,
                removed,
            }
        }
        Kind::ReminderDismiss => {
            let ReminderDismiss { key } = get(d)?;
            Body::ReminderDismiss { key }
        }
        Kind::ReminderSnooze => {
            let ReminderSnooze { key, until } = get(d)?;
            Body::ReminderSnooze { key, until }
        }
        Kind::AccountZone => {
            let AccountZone { zone } = get(d)?;
            Body::AccountZone { zone }
        }
    })
}

struct BodyVisitor;

impl<'de> Visitor<'de> for BodyVisitor {
    type Value = Body;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an op body (an object with \"k\")")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Body, A::Error> {
        match map.next_key::<Key>()? {
            None => Err(de::Error::missing_field("k")),
            Some(Key::K) => {
                let kind: Kind = map.next_value()?;
                body(kind, MapAccessDeserializer::new(map))
            }
            Some(Key::Other(first)) => {
                let mut rest = serde_json::Map::new();
                rest.insert(first, map.next_value()?);
                while let Some(k) = map.next_key::<String>()? {
                    let v: serde_json::Value = map.next_value()?;
                    rest.insert(k, v);
                }
                let kind = rest
                    .remove("k")
                    .ok_or_else(|| de::Error::missing_field("k"))?;
                let kind: Kind = from_value(kind)?;
                body(kind, serde_json::Value::Object(rest)).map_err(de::Error::custom)
            }
        }
    }
}

fn from_value<T: DeserializeOwned, E: de::Error>(v: serde_json::Value) -> Result<T, E> {
    T::deserialize(v).map_err(de::Error::custom)
}

impl<'de> Deserialize<'de> for Body {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(BodyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::{Body, KINDS, Kind};

    /// Exhaustive on purpose: a new `Body` variant does not compile here
    /// until this decoder (`Kind`, `KINDS`, `body`) reads it too.
    fn kind_of(b: &Body) -> Kind {
        match b {
            Body::CalendarPut { .. } => Kind::CalendarPut,
            Body::CalendarDelete { .. } => Kind::CalendarDelete,
            Body::SeriesPut { .. } => Kind::SeriesPut,
            Body::SeriesDelete { .. } => Kind::SeriesDelete,
            Body::CalendarWork { .. } => Kind::CalendarWork,
            Body::CalendarFeed { .. } => Kind::CalendarFeed,
            Body::ReminderDismiss { .. } => Kind::ReminderDismiss,
            Body::ReminderSnooze { .. } => Kind::ReminderSnooze,
            Body::AccountZone { .. } => Kind::AccountZone,
        }
    }

    #[test]
    fn each_kind_is_spelled_as_the_body_spells_it() {
        let bodies = [
            Body::CalendarPut {
                calendar: "c".into(),
                name: "n".into(),
                color: None,
            },
            Body::CalendarDelete {
                calendar: "c".into(),
            },
            Body::SeriesPut {
                calendar: "c".into(),
                uid: "u".into(),
                ics: String::new(),
            },
            Body::SeriesDelete {
                calendar: "c".into(),
                uid: "u".into(),
                caldav: false,
            },
            Body::CalendarWork {
                calendar: "c".into(),
                week: 31,
                holidays: false,
            },
            Body::CalendarFeed {
                calendar: "c".into(),
                url: "https://example.com/".into(),
                every: 60,
                removed: false,
            },
            Body::ReminderDismiss { key: "k".into() },
            Body::ReminderSnooze {
                key: "k".into(),
                until: chrono::DateTime::UNIX_EPOCH,
            },
            Body::AccountZone {
                zone: "Europe/Berlin".into(),
            },
        ];
        assert_eq!(bodies.len(), KINDS.len());
        for b in &bodies {
            assert_eq!(KINDS[kind_of(b) as usize], b.kind());
        }
    }
}
