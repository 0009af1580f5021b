//! Changing an account once it is added: its calendars' list fetched anew
//! from the server (calendars made there since are listed, unchosen),
//! which calendars sync (choose / unchoose), its password and its CA
//! certificate (checked with the server before they are kept). The sync interval is
//! [`crate::status::set_every`]. Shared by `kairos caldav edit` /
//! `calendars --refresh` and the app.

use kairos_store::{CaldavAccount, CaldavCalendar, Store};

use crate::account::{When, link, password_of};
use crate::discover::discover;
use crate::error::{CaldavError, Result};
use crate::secret::SecretStore;

/// The account at `url` (its URL as added, or its `user@url` reference),
/// or the only one when `url` is `None`. `verb` names what the caller
/// does, for the error when several match.
///
/// # Errors
/// No such account; several and no `url`; the database.
pub fn pick(store: &Store, url: Option<&str>, verb: &str) -> Result<CaldavAccount> {
    let accounts = store.read(|r| r.caldav_accounts())?;
    let pick: Vec<&CaldavAccount> = accounts
        .iter()
        .filter(|a| url.is_none_or(|u| a.url == u || a.secret_ref == u))
        .collect();
    match pick.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(CaldavError::NotFound(match url {
            Some(u) => format!("no CalDAV account {u:?} (see `kairos caldav calendars`)"),
            None => "no CalDAV account".to_owned(),
        })),
        _ => Err(CaldavError::NotFound(format!(
            "several CalDAV accounts: name the one to {verb} by its URL"
        ))),
    }
}

/// What fetching the calendar list anew changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Refreshed {
    /// Calendars made on the server since (listed here now, not chosen).
    pub new: Vec<String>,
    /// Chosen calendars the server no longer lists: kept (and their
    /// Kairos calendars), their syncs fail until they are unchosen.
    pub missing: Vec<String>,
    /// Unchosen calendars the server no longer lists: dropped from the list.
    pub dropped: Vec<String>,
}

/// Discovers the account's calendars again (its stored password and CA):
/// new ones are listed unchosen, names and colours are updated, unchosen
/// ones gone from the server are dropped, chosen ones gone are reported.
///
/// # Errors
/// Discovery's (nothing changes then); the secret store; the database.
pub fn refresh(
    store: &mut Store,
    secrets: &dyn SecretStore,
    account: &CaldavAccount,
) -> Result<Refreshed> {
    let password = password_of(secrets, account)?;
    let (_dav, found) = discover(
        &account.url,
        &account.username,
        &password,
        account.ca_pem.as_deref(),
    )?;
    let before = store.read(|r| r.caldav_calendars(account.id))?;
    let mut out = Refreshed::default();
    store.write(|tx| -> Result<()> {
        for c in &found.calendars {
            if !before.iter().any(|b| b.href == c.href) {
                out.new.push(c.name.clone());
            }
            tx.caldav_calendar_put(&crate::account::unlinked_row(account.id, c))?;
        }
        for b in &before {
            if found.calendars.iter().any(|c| c.href == b.href) {
                continue;
            }
            if b.calendar_id.is_some() {
                out.missing.push(b.name.clone());
            } else {
                tx.caldav_calendar_delete(b.id)?;
                out.dropped.push(b.name.clone());
            }
        }
        Ok(())
    })?;
    Ok(out)
}

fn named(store: &Store, account: &CaldavAccount, name: &str) -> Result<CaldavCalendar> {
    let cals = store.read(|r| r.caldav_calendars(account.id))?;
    if let Some(c) = cals.iter().find(|c| c.name == name) {
        return Ok(c.clone());
    }
    let names: Vec<&str> = cals.iter().map(|c| c.name.as_str()).collect();
    Err(CaldavError::NotFound(format!(
        "no calendar called {name:?} in {} (it has: {}; a calendar made on the server since \
         shows after `kairos caldav calendars --refresh`)",
        account.url,
        names.join(", ")
    )))
}

/// Chooses calendar `name` of the account for sync: it gets its Kairos
/// calendar (the one it had before, if it was chosen once, or one it
/// shares with another device) and syncs from the next sync on. One that
/// was unchosen resumes where it stopped: changes made on either side
/// meanwhile are synced (an event deleted here meanwhile is deleted there
/// too); if its Kairos calendar holds none of what it synced (deleted
/// meanwhile), it starts afresh from the server's copy, deleting nothing
/// there. Choosing a chosen one changes nothing.
///
/// # Errors
/// No calendar of that name (the message lists them); the database.
pub fn choose(
    store: &mut Store,
    account: &CaldavAccount,
    name: &str,
    when: When,
) -> Result<CaldavCalendar> {
    let cc = named(store, account, name)?;
    if cc.calendar_id.is_none() {
        let local = link(store, &cc, when)?;
        let objects = store.read(|r| r.caldav_objects(cc.id))?;
        if !objects.is_empty() {
            let here = crate::local::local_series(store, local)?;
            if !objects.iter().any(|o| here.contains_key(&o.uid)) {
                store.write(|tx| tx.caldav_calendar_reset(cc.id))?;
            }
        }
    }
    named(store, account, name)
}

/// Stops syncing calendar `name` of the account. Its Kairos calendar and
/// events stay, as a local calendar (as when the account is removed); the
/// server's copy is not touched. Its sync state is kept for
/// [`choose`] to resume from. Unchoosing an unchosen one changes nothing.
///
/// # Errors
/// No calendar of that name; the database.
pub fn unchoose(store: &mut Store, account: &CaldavAccount, name: &str) -> Result<CaldavCalendar> {
    let cc = named(store, account, name)?;
    if cc.calendar_id.is_some() {
        store.write(|tx| tx.caldav_calendar_unlink(cc.id))?;
    }
    named(store, account, name)
}

/// Changes the account's password: checked first (the server must accept
/// it: a discovery with it), then kept in the secret store in place of
/// the old one. A refused one leaves the old one.
///
/// # Errors
/// The server refusing it ([`CaldavError::Unauthorized`]) or any
/// discovery error; the secret store.
pub fn set_password(
    secrets: &dyn SecretStore,
    account: &CaldavAccount,
    password: &str,
) -> Result<()> {
    if password.is_empty() {
        return Err(CaldavError::Secret("the new password is empty".to_owned()));
    }
    discover(
        &account.url,
        &account.username,
        password,
        account.ca_pem.as_deref(),
    )?;
    secrets.set(&account.secret_ref, password)
}

/// A new password and/or CA certificate for an account.
#[derive(Debug, Clone, Copy, Default)]
pub struct NewLogin<'a> {
    /// A new password; `None`: the stored one.
    pub password: Option<&'a str>,
    /// A new CA certificate (PEM), or `Some(None)` to trust only the web's
    /// roots again; `None`: unchanged.
    pub ca_pem: Option<Option<&'a str>>,
}

/// Changes the account's password and/or CA certificate: checked first,
/// together (the server must be reached and accept the sign-in with the
/// new pair: a discovery), then kept; a refused change keeps the old ones.
/// Both at once is what a reinstalled server needs (a new certificate and
/// a new password). Returns the account as stored.
///
/// # Errors
/// A CA text that holds no usable certificate ([`CaldavError::BadCa`]);
/// the server refusing the certificate or the password, or any discovery
/// error; the secret store; the database.
pub fn set_login(
    store: &mut Store,
    secrets: &dyn SecretStore,
    account: &CaldavAccount,
    new: NewLogin<'_>,
) -> Result<CaldavAccount> {
    if new.password == Some("") {
        return Err(CaldavError::Secret("the new password is empty".to_owned()));
    }
    let ca = match new.ca_pem {
        Some(ca) => ca,
        None => account.ca_pem.as_deref(),
    };
    if let Some(pem) = ca {
        kairos_tls::ca_certificates(pem).map_err(CaldavError::BadCa)?;
    }
    let stored;
    let password = match new.password {
        Some(p) => p,
        None => {
            stored = password_of(secrets, account)?;
            &stored
        }
    };
    discover(&account.url, &account.username, password, ca)?;
    if let Some(p) = new.password {
        secrets.set(&account.secret_ref, p)?;
    }
    let mut changed = account.clone();
    if let Some(ca) = new.ca_pem {
        store.write(|tx| tx.caldav_account_set_ca(account.id, ca))?;
        changed.ca_pem = ca.map(str::to_owned);
    }
    Ok(changed)
}
