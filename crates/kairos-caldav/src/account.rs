//! Accounts: add (discover, keep the password in the secret store, list
//! the calendars, choose which to sync), list, sync, remove.

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use kairos_store::{CaldavAccount, CaldavCalendar, CalendarId, Store};

use crate::dav::{Dav, parse_url};
use crate::discover::discover;
use crate::error::{CaldavError, Result};
use crate::local::Apply;
use crate::secret::SecretStore;
use crate::sync::{SyncReport, sync_calendar};

/// The clock and planning inputs of a change (the caller's clock).
#[derive(Debug, Clone, Copy)]
pub struct When {
    /// Now.
    pub now: DateTime<Utc>,
    /// The engine's horizon.
    pub horizon: Duration,
    /// The zone for floating times.
    pub floating: Tz,
}

/// What a person gives to add an account.
#[derive(Debug, Clone, Copy)]
pub struct Login<'a> {
    /// The server URL (or an e-mail address: its domain).
    pub url: &'a str,
    /// The user name.
    pub user: &'a str,
    /// The password (or app password).
    pub password: &'a str,
    /// A CA certificate (PEM) to trust for this account in addition to
    /// the web's roots: a server whose certificate a private CA signed.
    pub ca_pem: Option<&'a str>,
}

/// Discovers `user`'s calendars at `url`, stores the account (the password
/// in `secrets`, the CA with the account) and its calendars, and chooses
/// `chosen` for sync (by name; empty: every calendar).
///
/// # Errors
/// Discovery's errors (nothing is stored then); a chosen name that is not
/// among the calendars; the secret store; the database.
pub fn add(
    store: &mut Store,
    secrets: &dyn SecretStore,
    login: &Login<'_>,
    chosen: &[String],
    when: When,
) -> Result<(CaldavAccount, Vec<CaldavCalendar>)> {
    let Login {
        url,
        user,
        password,
        ca_pem,
    } = *login;
    let (_dav, found) = discover(url, user, password, ca_pem)?;
    for name in chosen {
        if !found.calendars.iter().any(|c| &c.name == name) {
            let names: Vec<&str> = found.calendars.iter().map(|c| c.name.as_str()).collect();
            return Err(CaldavError::NotFound(format!(
                "no calendar called {name:?} in this account (it has: {})",
                names.join(", ")
            )));
        }
    }
    let secret_ref = format!("{user}@{}", parse_url(url)?);
    secrets.set(&secret_ref, password)?;
    let account = CaldavAccount {
        id: 0,
        url: url.to_owned(),
        username: user.to_owned(),
        principal: found.principal,
        home: found.home,
        secret_ref,
        created_at: when.now,
        ca_pem: ca_pem.map(str::to_owned),
    };
    let id = store.write(|tx| tx.caldav_account_put(&account, when.now))?;
    let mut ids = Vec::new();
    for c in &found.calendars {
        let row = unlinked_row(id, c);
        let cid = store.write(|tx| tx.caldav_calendar_put(&row))?;
        if chosen.is_empty() || chosen.contains(&c.name) {
            ids.push(cid);
        }
    }
    let cals = store.read(|r| r.caldav_calendars(id))?;
    for cc in cals
        .iter()
        .filter(|c| ids.contains(&c.id) && c.calendar_id.is_none())
    {
        link(store, cc, when)?;
    }
    let account = CaldavAccount { id, ..account };
    Ok((account, store.read(|r| r.caldav_calendars(id))?))
}

/// Links `cc` to its Kairos calendar: the one whose uid is derived from
/// the collection ([`collection_uid`]) if this device has it already (it
/// came over Kairos sync from another device of the person that syncs the
/// same collection), else a new one named after it (with ` (N)` added
/// when that name is taken). Either way one calendar, with the same keys
/// on every device: two devices adding the same account never make two
/// copies of it that both ring.
pub(crate) fn link(store: &mut Store, cc: &CaldavCalendar, when: When) -> Result<CalendarId> {
    let account = store
        .read(|r| r.caldav_accounts())?
        .into_iter()
        .find(|a| a.id == cc.account_id)
        .ok_or_else(|| CaldavError::NotFound(format!("the account of calendar {:?}", cc.name)))?;
    let uid = collection_uid(&account.home, &account.username, &cc.href);
    let local = kairos_engine::import::calendar_with_uid(store, &uid, &cc.name, when.now)?;
    let name = local.name.clone();
    let colour = cc
        .color
        .as_deref()
        .filter(|c| c.len() >= 7)
        .map(|c| c[..7].to_lowercase());
    store.write(|tx| -> Result<()> {
        tx.caldav_calendar_link(cc.id, local.id)?;
        if colour.is_some() {
            tx.rename_calendar(local.id, &name, colour.as_deref())?;
        }
        Ok(())
    })?;
    Ok(local.id)
}

/// The Kairos calendar `cc` is linked to, `local`, moved to the uid derived
/// from the collection ([`collection_uid`]) when a version before 12-06
/// linked it under a random one: its series, reminders' acknowledgements
/// and link go to the derived calendar, the old one is deleted, all
/// recorded for Kairos sync, so every device ends with one calendar and
/// the same keys (`kairos_engine::sync::caldav_rekey`). Returns the id
/// and how many series moved.
fn relink(
    store: &mut Store,
    account: &CaldavAccount,
    cc: &CaldavCalendar,
    local: CalendarId,
    when: When,
) -> Result<(CalendarId, usize)> {
    let uid = collection_uid(&account.home, &account.username, &cc.href);
    let moved = kairos_engine::sync::caldav_rekey::rekey(
        store,
        local,
        &uid,
        when.now,
        when.horizon,
        when.floating,
    )?;
    Ok(moved.map_or((local, 0), |m| (m.calendar, m.moved)))
}

/// Every account with its calendars.
///
/// # Errors
/// The database.
pub fn list(store: &Store) -> Result<Vec<(CaldavAccount, Vec<CaldavCalendar>)>> {
    let accounts = store.read(|r| r.caldav_accounts())?;
    accounts
        .into_iter()
        .map(|a| {
            let cals = store.read(|r| r.caldav_calendars(a.id))?;
            Ok((a, cals))
        })
        .collect()
}

/// Syncs the chosen calendars of every account, or only the calendar
/// called `only` (choosing it if it was not).
///
/// # Errors
/// The first failure (earlier calendars stay synced); `only` naming no
/// calendar.
pub fn sync(
    store: &mut Store,
    secrets: &dyn SecretStore,
    only: Option<&str>,
    when: When,
) -> Result<Vec<SyncReport>> {
    let mut reports = Vec::new();
    let mut matched = false;
    for (account, cals) in list(store)? {
        let wanted: Vec<CaldavCalendar> = cals
            .into_iter()
            .filter(|c| only.map_or(c.calendar_id.is_some(), |n| c.name == n))
            .collect();
        if wanted.is_empty() {
            continue;
        }
        matched = true;
        reports.extend(sync_calendars(store, secrets, &account, &wanted, when)?);
    }
    if let (Some(n), false) = (only, matched) {
        return Err(CaldavError::NotFound(format!(
            "no CalDAV calendar called {n:?} (see `kairos caldav calendars`)"
        )));
    }
    Ok(reports)
}

/// Syncs the chosen calendars of one account (the background sync's step).
///
/// # Errors
/// The first failure (earlier calendars stay synced).
pub fn sync_account(
    store: &mut Store,
    secrets: &dyn SecretStore,
    account: &CaldavAccount,
    when: When,
) -> Result<Vec<SyncReport>> {
    let wanted: Vec<CaldavCalendar> = store
        .read(|r| r.caldav_calendars(account.id))?
        .into_iter()
        .filter(|c| c.calendar_id.is_some())
        .collect();
    sync_calendars(store, secrets, account, &wanted, when)
}

/// Whether a chosen calendar of `account` holds a change made here that
/// the server has not seen (an edit, a deletion, a new series): read from
/// the database alone, no request.
///
/// # Errors
/// The database.
pub fn changed_here(store: &Store, account: &CaldavAccount) -> Result<bool> {
    for cc in store.read(|r| r.caldav_calendars(account.id))? {
        if let Some(local) = cc.calendar_id
            && crate::sync::pending_here(store, &cc, local)?
        {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The account's password from the secret store.
///
/// # Errors
/// None there (it says how to give it again); the secret store.
pub(crate) fn password_of(secrets: &dyn SecretStore, account: &CaldavAccount) -> Result<String> {
    secrets.get(&account.secret_ref)?.ok_or_else(|| {
        CaldavError::Secret(format!(
            "no password for {} in {}: give it again with `kairos caldav edit {} \
             --password-stdin`",
            account.secret_ref,
            secrets.describe(),
            account.url,
        ))
    })
}

fn sync_calendars(
    store: &mut Store,
    secrets: &dyn SecretStore,
    account: &CaldavAccount,
    wanted: &[CaldavCalendar],
    when: When,
) -> Result<Vec<SyncReport>> {
    let mut reports = Vec::new();
    let dav = password_of(secrets, account).and_then(|password| {
        Dav::new(
            parse_url(&account.home)?,
            &account.username,
            &password,
            account.ca_pem.as_deref(),
        )
    });
    let dav = match dav {
        Ok(d) => d,
        Err(e) => {
            for local in wanted.iter().filter_map(|c| c.calendar_id) {
                attempted(store, local, false, when)?;
            }
            return Err(e);
        }
    };
    for cc in wanted {
        let (local, moved) = match cc.calendar_id {
            Some(id) => relink(store, account, cc, id, when)?,
            None => (link(store, cc, when)?, 0),
        };
        let cc = store
            .read(|r| r.caldav_calendars(account.id))?
            .into_iter()
            .find(|c| c.id == cc.id)
            .unwrap_or_else(|| cc.clone());
        let Some(name) = store.read(|r| r.calendar_by_id(local))?.map(|c| c.name) else {
            continue;
        };
        let apply = Apply {
            calendar: &name,
            now: when.now,
            horizon: when.horizon,
            floating: when.floating,
        };
        let r = sync_calendar(store, &dav, &cc, local, apply);
        attempted(store, local, r.is_ok(), when)?;
        let mut r = r?;
        // Series moved by the re-key changed here too (their keys): a host
        // that re-plans or redraws on changes must hear of them.
        r.changed_here += moved;
        reports.push(r);
    }
    Ok(reports)
}

/// Tells the engine how a calendar's sync attempt ended: while it fails,
/// Kairos sync brings the calendar's changes in full
/// (`kairos_engine::sync::caldav::sync_attempted`).
fn attempted(store: &mut Store, local: CalendarId, ok: bool, when: When) -> Result<()> {
    kairos_engine::sync::caldav::sync_attempted(store, local, ok, when.now)?;
    Ok(())
}

/// Removes the account at `url` (or the only one, when `url` is `None`):
/// its password, its calendars' links and sync state (the fallback's
/// `caldav.failing.*` / `caldav.taken.*` marks too). The Kairos calendars
/// and their events stay (delete them like any calendar). Returns the
/// account removed.
///
/// # Errors
/// No such account, or several and no `url`; the secret store.
pub fn remove(
    store: &mut Store,
    secrets: &dyn SecretStore,
    url: Option<&str>,
) -> Result<CaldavAccount> {
    let a = crate::manage::pick(store, url, "remove")?;
    secrets.delete(&a.secret_ref)?;
    let cals = store.read(|r| r.caldav_calendars(a.id))?;
    store.write(|tx| {
        // The fallback's state of each linked calendar goes with the link.
        for local in cals.iter().filter_map(|c| c.calendar_id) {
            kairos_engine::sync::caldav::forget(tx, local)?;
        }
        tx.caldav_account_delete(a.id)
    })?;
    crate::status::forget(store, a.id)?;
    Ok(a)
}

/// The Kairos calendar uid of a CalDAV collection: 32 hex digits of the
/// SHA-256 of the user and the collection's absolute URL (the origin of
/// the account's calendar home and the collection's path), so every
/// device that syncs the collection as that user names it alike.
#[must_use]
pub fn collection_uid(home: &str, user: &str, href: &str) -> String {
    let url = if href.starts_with("http://") || href.starts_with("https://") {
        href.to_owned()
    } else {
        let origin = home
            .find("://")
            .and_then(|i| home[i + 3..].find('/').map(|j| &home[..i + 3 + j]))
            .unwrap_or(home);
        format!(
            "{}/{}",
            origin.trim_end_matches('/'),
            href.trim_start_matches('/')
        )
    };
    crate::local::hash(&format!("caldav\n{user}\n{url}"))[..32].to_owned()
}

/// The stored row of a calendar discovered on the server: not linked to a
/// Kairos calendar yet, never synced.
pub(crate) fn unlinked_row(account_id: i64, c: &crate::discover::RemoteCalendar) -> CaldavCalendar {
    CaldavCalendar {
        id: 0,
        account_id,
        href: c.href.clone(),
        name: c.name.clone(),
        color: c.color.clone(),
        components: c.components.join(","),
        calendar_id: None,
        sync_token: None,
        synced_at: None,
    }
}
