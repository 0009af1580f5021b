//! The engine's settings kept in the store's `meta` table: how far
//! reminders are materialised, and the zone floating times are read in.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use kairos_store::{Store, StoreError};

use crate::error::EngineError;

/// Meta key: instances exist for every trigger before this instant.
pub const MATERIALISED_UNTIL: &str = "materialised_until";

/// `meta` key: the zone floating times of this database are read in, when
/// something (the desktop app: its display zone) set one. It overrides
/// `engine::Config::floating`, so the app and `kairos daemon` agree on it.
pub const FLOATING_ZONE: &str = "engine.floating_zone";

/// Meta's "materialised until", if set.
///
/// # Errors
/// Store failures.
pub fn materialised_until(store: &Store) -> Result<Option<DateTime<Utc>>, StoreError> {
    Ok(store
        .meta_get(MATERIALISED_UNTIL)?
        .and_then(|v| DateTime::parse_from_rfc3339(&v).ok())
        .map(|t| t.with_timezone(&Utc)))
}

/// The zone floating times are planned in: the database's
/// ([`FLOATING_ZONE`], set by the desktop app) when it has one,
/// else `fallback` (`--tz`, the system's). Every planner of this database
/// then agrees, so one alarm never gets two keys from two zones.
///
/// # Errors
/// Store failures.
pub fn database_zone(store: &Store, fallback: Tz) -> Result<Tz, EngineError> {
    Ok(zone_named(store.meta_get(FLOATING_ZONE)?, fallback))
}

/// The zone a `FLOATING_ZONE` value names, else `fallback`.
pub(crate) fn zone_named(value: Option<String>, fallback: Tz) -> Tz {
    value.and_then(|z| z.parse().ok()).unwrap_or(fallback)
}
