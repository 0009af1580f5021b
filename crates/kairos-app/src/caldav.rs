//! CalDAV accounts in the desktop: sign in and see the calendars
//! (discovery), add the account with the calendars chosen, list the
//! accounts with their background sync's state, sync one now, remove one.
//! All of it is `kairos_caldav` (the code `kairos caldav …` runs); this
//! only checks the request and turns the answers into IPC types.
//!
//! Like Settings → Sync and the feeds these wait on the network, so the
//! shell runs them on the blocking pool through a [`CaldavAccounts`]
//! handle with a store connection of its own, without the app's lock.
//! Adding an account does not sync it: the host's CalDAV loop does, in the
//! background, once woken (a new account is due at once); the window
//! reads the outcome from [`CaldavAccounts::list`].
//!
//! Passwords go where the CLI puts them (`kairos_caldav::secret::for_database`):
//! the OS secret store, or a 0600 file beside the database when none
//! answers (`KAIROS_SECRET_STORE=file|keyring` chooses).

use std::path::{Path, PathBuf};

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use chrono_tz::Tz;
use kairos_caldav::secret::{self, SecretStore};
use kairos_caldav::status::{self, Status};
use kairos_caldav::{When, account};
use kairos_store::{CaldavAccount, CaldavCalendar, Store};

use crate::api::{
    ApiError, CaldavAccountView, CaldavAddRequest, CaldavCalendarView, CaldavDiscovery,
    CaldavLogin, CaldavProblem, RemoteCalendarView,
};
use crate::caldav_errors::kind_of_message;
use crate::error::ApiResult;

/// The longest URL, user name or password taken (far above any real one).
const MAX_FIELD: usize = 2048;
/// The longest CA text taken (a few certificates in PEM).
const MAX_CA: usize = 64 * 1024;

/// CalDAV accounts of one database.
#[derive(Debug, Clone)]
pub struct CaldavAccounts {
    db: PathBuf,
    /// Floating times' zone (the display zone).
    floating: Tz,
    /// The engine's horizon.
    horizon: Duration,
    /// `file` or `keyring` (`KAIROS_SECRET_STORE`); `None`: the OS store,
    /// else the file.
    secret_store: Option<String>,
}

fn rfc(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// The field checks shared by discovery and add.
fn check(url: &str, user: &str, password: &str) -> ApiResult<()> {
    for (name, v) in [("url", url), ("user", user), ("password", password)] {
        if v.trim().is_empty() {
            return Err(ApiError::invalid(format!("{name}: required")));
        }
        if v.len() > MAX_FIELD {
            return Err(ApiError::invalid(format!(
                "{name}: at most {MAX_FIELD} bytes"
            )));
        }
    }
    Ok(())
}

fn calendar_view(c: &CaldavCalendar) -> CaldavCalendarView {
    CaldavCalendarView {
        name: c.name.clone(),
        color: c.color.clone(),
        calendar_id: c.calendar_id.map(|id| id.0),
        synced_at: c.synced_at.map(rfc),
    }
}

/// The CA text of a request: `None` when absent or blank; checked.
pub(crate) fn ca_of(ca: Option<&String>) -> ApiResult<Option<&str>> {
    let Some(pem) = ca.map(|s| s.trim()).filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    if pem.len() > MAX_CA {
        return Err(ApiError::invalid(format!("ca_pem: at most {MAX_CA} bytes")));
    }
    kairos_tls::ca_certificates(pem).map_err(|e| ApiError::invalid(format!("ca_pem: {e}")))?;
    Ok(Some(pem))
}

fn account_view(
    a: &CaldavAccount,
    cals: &[CaldavCalendar],
    st: &Status,
    every: Duration,
) -> CaldavAccountView {
    CaldavAccountView {
        id: a.id,
        url: a.url.clone(),
        user: a.username.clone(),
        calendars: cals.iter().map(calendar_view).collect(),
        synced_at: st.synced_at.map(rfc),
        last_error: st.error.as_ref().map(|m| CaldavProblem {
            kind: kind_of_message(m),
            message: m.clone(),
        }),
        error_at: st.error_at.map(rfc),
        next_sync: st.next_at.map(rfc),
        every_seconds: every.num_seconds(),
        private_ca: a.ca_pem.is_some(),
    }
}

impl CaldavAccounts {
    /// Accounts of the database at `db`.
    #[must_use]
    pub fn new(db: &Path, floating: Tz, horizon: Duration) -> Self {
        Self {
            db: db.to_owned(),
            floating,
            horizon,
            secret_store: None,
        }
    }

    /// Chooses where passwords go: `file` (a 0600 file beside the
    /// database) or `keyring` (the OS store only); `None` tries the OS
    /// store, else the file (as `KAIROS_SECRET_STORE` does for the CLI).
    #[must_use]
    pub fn with_secret_store(mut self, choice: Option<&str>) -> Self {
        self.secret_store = choice.map(str::to_owned);
        self
    }

    pub(crate) fn store(&self) -> ApiResult<Store> {
        Ok(Store::open(&self.db)?)
    }

    pub(crate) fn secrets(&self) -> Box<dyn SecretStore> {
        let (s, note) = secret::for_database(&self.db, self.secret_store.as_deref());
        if let Some(note) = note {
            eprintln!("kairos: caldav: {note}");
        }
        s
    }

    pub(crate) fn when(&self, now: DateTime<Utc>) -> When {
        When {
            now,
            horizon: self.horizon,
            floating: self.floating,
        }
    }

    pub(crate) fn one(store: &Store, id: i64) -> ApiResult<(CaldavAccount, Vec<CaldavCalendar>)> {
        account::list(store)?
            .into_iter()
            .find(|(a, _)| a.id == id)
            .ok_or_else(|| ApiError::not_found(format!("no CalDAV account {id}")))
    }

    pub(crate) fn view(store: &Store, id: i64) -> ApiResult<CaldavAccountView> {
        let (a, cals) = Self::one(store, id)?;
        let every = status::every(store, id)?;
        Ok(account_view(&a, &cals, &Status::load(store, id)?, every))
    }

    /// Signs in and lists the account's calendars; stores nothing.
    ///
    /// # Errors
    /// An empty or oversized field (`invalid`); `caldav_*` with what the
    /// server did (401, not CalDAV, unreachable, TLS, timeout, bad URL).
    pub fn discover(&self, req: &CaldavLogin) -> ApiResult<CaldavDiscovery> {
        check(&req.url, &req.user, &req.password)?;
        let (_dav, found) = kairos_caldav::discover::discover(
            req.url.trim(),
            req.user.trim(),
            &req.password,
            None,
        )?;
        let has = |c: &kairos_caldav::discover::RemoteCalendar, k: &str| {
            c.components.iter().any(|x| x.eq_ignore_ascii_case(k))
        };
        Ok(CaldavDiscovery {
            home: found.home.clone(),
            calendars: found
                .calendars
                .iter()
                .map(|c| RemoteCalendarView {
                    name: c.name.clone(),
                    color: c.color.clone(),
                    events: has(c, "VEVENT"),
                    tasks: has(c, "VTODO"),
                })
                .collect(),
        })
    }

    /// Adds the account (discovering again: the server may have changed
    /// since the list was shown), the password in the secret store, a
    /// Kairos calendar for each chosen one. Nothing is synced yet: the
    /// host's loop does that in the background once woken.
    ///
    /// # Errors
    /// As [`Self::discover`]; no calendar chosen, or one the server no
    /// longer has (`invalid`, `not_found`); the account already added
    /// (`invalid`); the secret store (`caldav_secret`).
    pub fn add(&self, req: &CaldavAddRequest, now: DateTime<Utc>) -> ApiResult<CaldavAccountView> {
        check(&req.url, &req.user, &req.password)?;
        if req.calendars.is_empty() {
            return Err(ApiError::invalid("calendars: choose at least one"));
        }
        let (url, user) = (req.url.trim(), req.user.trim());
        let mut store = self.store()?;
        if store
            .read(|r| r.caldav_accounts())?
            .iter()
            .any(|a| a.url == url && a.username == user)
        {
            return Err(ApiError::invalid(format!(
                "url: {user} at {url} is added already (remove it first to add it again)"
            )));
        }
        let secrets = self.secrets();
        let login = account::Login {
            url,
            user,
            password: &req.password,
            ca_pem: ca_of(req.ca_pem.as_ref())?,
        };
        let (a, _) = account::add(
            &mut store,
            secrets.as_ref(),
            &login,
            &req.calendars,
            self.when(now),
        )?;
        Self::view(&store, a.id)
    }

    /// Every account with its calendars and sync state, oldest first.
    ///
    /// # Errors
    /// The database cannot be read.
    pub fn list(&self) -> ApiResult<Vec<CaldavAccountView>> {
        let store = self.store()?;
        account::list(&store)?
            .iter()
            .map(|(a, cals)| {
                let every = status::every(&store, a.id)?;
                Ok(account_view(a, cals, &Status::load(&store, a.id)?, every))
            })
            .collect()
    }

    /// Syncs account `id`'s chosen calendars now and records how it went
    /// (as the background sync does). A failed sync is not an error here:
    /// it is the answer's `last_error`, and nothing local was lost.
    ///
    /// # Errors
    /// No such account; the database.
    pub fn sync_now(&self, id: i64, now: DateTime<Utc>) -> ApiResult<CaldavAccountView> {
        let mut store = self.store()?;
        let (a, _) = Self::one(&store, id)?;
        let secrets = self.secrets();
        let result = account::sync_account(&mut store, secrets.as_ref(), &a, self.when(now));
        let every = status::every(&store, id)?;
        let mut st = Status::load(&store, id)?;
        match result {
            Ok(_) => {
                st.synced_at = Some(now);
                st.error = None;
                st.failures = 0;
            }
            Err(e) => {
                st.error = Some(e.to_string());
                st.error_at = Some(now);
                st.failures = st.failures.saturating_add(1);
            }
        }
        st.next_at = Some(now + every);
        st.save(&mut store, id)?;
        Self::view(&store, id)
    }

    /// Removes account `id`: its password, its calendars' links and sync
    /// state. The Kairos calendars and their events stay, no longer
    /// synced (delete them like any calendar).
    ///
    /// # Errors
    /// No such account; the secret store; the database.
    pub fn remove(&self, id: i64) -> ApiResult<()> {
        let mut store = self.store()?;
        let (a, _) = Self::one(&store, id)?;
        let secrets = self.secrets();
        account::remove(&mut store, secrets.as_ref(), Some(&a.secret_ref))?;
        Ok(())
    }
}

impl crate::App {
    /// CalDAV accounts on this database (used without the app's lock: a
    /// request waits on the network). Floating times are read in the
    /// display zone; passwords where `KAIROS_SECRET_STORE` says (as for
    /// the CLI and the host's background sync).
    #[must_use]
    pub fn caldav(&self) -> CaldavAccounts {
        let choice = std::env::var("KAIROS_SECRET_STORE").ok();
        CaldavAccounts::new(&self.path, self.display_tz(), self.horizon)
            .with_secret_store(choice.as_deref())
    }
}
