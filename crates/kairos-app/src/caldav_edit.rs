//! Changing a CalDAV account in the desktop ("Edit account"): its
//! interval, the calendars it syncs, its password and CA certificate; and
//! its calendar list
//! fetched anew ("Refresh list": calendars made on the server since are
//! listed, not chosen). All of it is `kairos_caldav::manage` (the code
//! `kairos caldav edit` and `calendars --refresh` run).

use chrono::{DateTime, Duration, Utc};
use kairos_caldav::{manage, status};

use crate::api::{ApiError, CaldavAccountView, CaldavEditRequest};
use crate::caldav::CaldavAccounts;
use crate::error::ApiResult;

/// The longest password taken (as for adding an account).
const MAX_PASSWORD: usize = 2048;

impl CaldavAccounts {
    /// Changes account `req.id`: every part is checked first (the
    /// interval's bounds, the calendars' names, the new password and CA
    /// certificate with the server), then the changes are made, and the account's next sync
    /// is due now: the host's loop syncs it when the shell wakes it.
    ///
    /// # Errors
    /// Nothing to change, an interval out of bounds, an unknown calendar,
    /// a name both chosen and unchosen (`invalid`, `not_found`); the
    /// server refusing the new password (`caldav_unauthorized`, …: the old
    /// one stays); the secret store; the database.
    pub fn edit(
        &self,
        req: &CaldavEditRequest,
        now: DateTime<Utc>,
    ) -> ApiResult<CaldavAccountView> {
        let no_ca = req.no_ca == Some(true);
        let given_ca = crate::caldav::ca_of(req.ca_pem.as_ref())?;
        if no_ca && given_ca.is_some() {
            return Err(ApiError::invalid(
                "ca_pem: give a CA certificate or drop it (no_ca), not both",
            ));
        }
        let ca = if no_ca {
            Some(None)
        } else {
            given_ca.map(Some)
        };
        let nothing = req.every_seconds.is_none()
            && req.choose.is_empty()
            && req.unchoose.is_empty()
            && req.password.is_none()
            && ca.is_none();
        if nothing {
            return Err(ApiError::invalid("nothing to change"));
        }
        if let Some(n) = req.choose.iter().find(|n| req.unchoose.contains(n)) {
            return Err(ApiError::invalid(format!(
                "calendars: {n:?} is both chosen and unchosen"
            )));
        }
        let every = req.every_seconds.map(Duration::seconds);
        if let Some(e) = every
            && (e < status::MIN_EVERY || e > status::MAX_EVERY)
        {
            return Err(ApiError::invalid(format!(
                "every_seconds: {} is outside {} to {}",
                e.num_seconds(),
                status::MIN_EVERY.num_seconds(),
                status::MAX_EVERY.num_seconds()
            )));
        }
        if let Some(p) = &req.password
            && (p.is_empty() || p.len() > MAX_PASSWORD)
        {
            return Err(ApiError::invalid(format!(
                "password: 1 to {MAX_PASSWORD} bytes"
            )));
        }
        let mut store = self.store()?;
        let (a, cals) = Self::one(&store, req.id)?;
        if let Some(n) = req
            .choose
            .iter()
            .chain(&req.unchoose)
            .find(|n| !cals.iter().any(|c| &c.name == *n))
        {
            return Err(ApiError::not_found(format!(
                "calendars: no calendar called {n:?} in this account"
            )));
        }
        if req.password.is_some() || ca.is_some() {
            let secrets = self.secrets();
            let new = manage::NewLogin {
                password: req.password.as_deref(),
                ca_pem: ca,
            };
            manage::set_login(&mut store, secrets.as_ref(), &a, new)?;
        }
        if let Some(e) = every {
            status::set_every(&mut store, a.id, e)?;
        }
        for n in &req.choose {
            manage::choose(&mut store, &a, n, self.when(now))?;
        }
        for n in &req.unchoose {
            manage::unchoose(&mut store, &a, n)?;
        }
        status::sync_soon(&mut store, a.id, now)?;
        Self::view(&store, a.id)
    }

    /// Fetches account `id`'s calendar list from its server again:
    /// calendars made there since are listed, not chosen; unchosen ones
    /// gone from the server leave the list; chosen ones stay.
    ///
    /// # Errors
    /// No such account; the server (`caldav_*`: nothing changes then); the
    /// secret store; the database.
    pub fn refresh(&self, id: i64) -> ApiResult<CaldavAccountView> {
        let mut store = self.store()?;
        let (a, _) = Self::one(&store, id)?;
        let secrets = self.secrets();
        manage::refresh(&mut store, secrets.as_ref(), &a)?;
        Self::view(&store, id)
    }
}
