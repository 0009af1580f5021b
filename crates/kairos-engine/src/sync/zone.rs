//! The zone this device reads floating times (and all-day dates) in, told
//! to the account as an `account.zone` op (protocol feature
//! [`kairos_proto::FEATURE_ZONE`]) whenever it is not the one this device
//! told last: the server plans the account's reminders for its fallbacks
//! in it, so that a floating or all-day event's reminder has the devices'
//! key and time there, and a dismissal on a device cancels the server's
//! e-mail. Joining an account forgets what was told ([`super::join`]), so
//! the zone goes to the new account at the next round.
//!
//! Each device sends its own zone only when it changes (not in answer to
//! another's), so two devices in two zones do not take turns: the account
//! holds the zone of the device whose zone changed last.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use kairos_proto::Body;
use kairos_store::{Store, StoreError};

use super::keys;

/// Records an `account.zone` op of `zone` unless it is the zone this
/// device last told the account; nothing on a database that never joined
/// one. Reads only, when nothing changed (it runs on every engine round).
/// Returns whether an op was recorded.
///
/// # Errors
/// Store failures.
pub fn report(store: &mut Store, zone: Tz, now: DateTime<Utc>) -> Result<bool, StoreError> {
    let told = |z: Option<String>| z.as_deref() == Some(zone.name());
    if told(store.meta_get(keys::ZONE_SENT)?) || store.meta_get(keys::DEVICE)?.is_none() {
        return Ok(false);
    }
    store.write(|tx| {
        if told(tx.meta_get(keys::ZONE_SENT)?) {
            return Ok(false);
        }
        let body = Body::AccountZone {
            zone: zone.name().to_owned(),
        };
        let recorded = super::record(tx, body, now)?.is_some();
        if recorded {
            tx.meta_set(keys::ZONE_SENT, zone.name())?;
        }
        Ok(recorded)
    })
}
