//! CalDAV accounts (schema 0008; an account's own CA: 0010): the accounts,
//! the calendars discovered in each, and per server object the ETag and
//! local hash seen at the last sync. No password is stored here (only the
//! secret store's reference).

use chrono::{DateTime, Utc};
use rusqlite::{OptionalExtension, Row, params};

use super::{ms, opt_time_at, time_at};
use crate::error::{At, Result};
use crate::store::{Reader, Tx};
use crate::types::CalendarId;

/// A CalDAV account as discovered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaldavAccount {
    /// Row id.
    pub id: i64,
    /// The URL the person gave (or the e-mail domain's URL).
    pub url: String,
    /// The user name sent with Basic authentication.
    pub username: String,
    /// The `current-user-principal` URL.
    pub principal: String,
    /// The `calendar-home-set` URL.
    pub home: String,
    /// Where the password is in the secret store (never the password).
    pub secret_ref: String,
    /// When it was added.
    pub created_at: DateTime<Utc>,
    /// CA certificate(s), PEM, trusted in addition to the web's roots
    /// (schema 0010; `None`: the web's roots only).
    pub ca_pem: Option<String>,
}

/// One calendar collection of an account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaldavCalendar {
    /// Row id.
    pub id: i64,
    /// Its account.
    pub account_id: i64,
    /// The collection's URL.
    pub href: String,
    /// `displayname` (the last path segment when it has none).
    pub name: String,
    /// `calendar-color` (`#RRGGBB[AA]`), if any.
    pub color: Option<String>,
    /// Supported components, comma-separated (`VEVENT,VTODO`).
    pub components: String,
    /// The Kairos calendar it syncs into; `None`: not chosen.
    pub calendar_id: Option<CalendarId>,
    /// RFC 6578 token of the last complete sync.
    pub sync_token: Option<String>,
    /// When it last synced completely.
    pub synced_at: Option<DateTime<Utc>>,
}

/// One calendar object resource as last synced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaldavObject {
    /// Its URL path on the server.
    pub href: String,
    /// The `UID` it holds.
    pub uid: String,
    /// Its `ETag` when last seen.
    pub etag: String,
    /// Hash of the series as stored here right after that sync.
    pub local_hash: String,
}

const ACCOUNT_COLS: &str = "id, url, username, principal, home, secret_ref, created_at, ca_pem";
const CALENDAR_COLS: &str =
    "id, account_id, href, name, color, components, calendar_id, sync_token, synced_at";

fn account(r: &Row<'_>) -> rusqlite::Result<CaldavAccount> {
    Ok(CaldavAccount {
        id: r.get(0)?,
        url: r.get(1)?,
        username: r.get(2)?,
        principal: r.get(3)?,
        home: r.get(4)?,
        secret_ref: r.get(5)?,
        created_at: time_at(r, 6)?,
        ca_pem: r.get(7)?,
    })
}

fn calendar(r: &Row<'_>) -> rusqlite::Result<CaldavCalendar> {
    Ok(CaldavCalendar {
        id: r.get(0)?,
        account_id: r.get(1)?,
        href: r.get(2)?,
        name: r.get(3)?,
        color: r.get(4)?,
        components: r.get(5)?,
        calendar_id: r.get::<_, Option<i64>>(6)?.map(CalendarId),
        sync_token: r.get(7)?,
        synced_at: opt_time_at(r, 8)?,
    })
}

impl Reader<'_> {
    /// Every CalDAV account, oldest first.
    pub fn caldav_accounts(&self) -> Result<Vec<CaldavAccount>> {
        let sql = format!("SELECT {ACCOUNT_COLS} FROM caldav_accounts ORDER BY id");
        let mut stmt = self.conn.prepare_cached(&sql).at(self.ctx)?;
        stmt.query_map([], account)
            .and_then(Iterator::collect)
            .at(self.ctx)
    }

    /// The calendars of `account`, by name.
    pub fn caldav_calendars(&self, account: i64) -> Result<Vec<CaldavCalendar>> {
        let sql = format!(
            "SELECT {CALENDAR_COLS} FROM caldav_calendars WHERE account_id = ?1 ORDER BY name, id"
        );
        let mut stmt = self.conn.prepare_cached(&sql).at(self.ctx)?;
        stmt.query_map([account], calendar)
            .and_then(Iterator::collect)
            .at(self.ctx)
    }

    /// The CalDAV calendar that syncs into Kairos calendar `id`, if any.
    pub fn caldav_calendar_of(&self, id: CalendarId) -> Result<Option<CaldavCalendar>> {
        let sql = format!("SELECT {CALENDAR_COLS} FROM caldav_calendars WHERE calendar_id = ?1");
        self.conn
            .prepare_cached(&sql)
            .and_then(|mut s| s.query_row([id.0], calendar).optional())
            .at(self.ctx)
    }

    /// The objects last synced in CalDAV calendar `id`, by href.
    pub fn caldav_objects(&self, id: i64) -> Result<Vec<CaldavObject>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT href, uid, etag, local_hash FROM caldav_objects
                 WHERE caldav_calendar_id = ?1 ORDER BY href",
            )
            .at(self.ctx)?;
        stmt.query_map([id], |r| {
            Ok(CaldavObject {
                href: r.get(0)?,
                uid: r.get(1)?,
                etag: r.get(2)?,
                local_hash: r.get(3)?,
            })
        })
        .and_then(Iterator::collect)
        .at(self.ctx)
    }
}

impl Tx<'_> {
    /// Adds the account (or updates the one with the same URL and user)
    /// and returns its id.
    pub fn caldav_account_put(&self, a: &CaldavAccount, now: DateTime<Utc>) -> Result<i64> {
        self.conn
            .prepare_cached(
                "INSERT INTO caldav_accounts
                     (url, username, principal, home, secret_ref, created_at, ca_pem)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT (url, username) DO UPDATE SET principal = excluded.principal,
                     home = excluded.home, secret_ref = excluded.secret_ref,
                     ca_pem = excluded.ca_pem
                 RETURNING id",
            )
            .and_then(|mut s| {
                s.query_row(
                    params![
                        a.url,
                        a.username,
                        a.principal,
                        a.home,
                        a.secret_ref,
                        ms(now),
                        a.ca_pem
                    ],
                    |r| r.get(0),
                )
            })
            .at(self.ctx)
    }

    /// Sets the CA certificate (PEM) account `id` trusts; `None`: only the
    /// web's roots. Returns false when there is no such account.
    pub fn caldav_account_set_ca(&self, id: i64, ca_pem: Option<&str>) -> Result<bool> {
        let n = self
            .conn
            .prepare_cached("UPDATE caldav_accounts SET ca_pem = ?2 WHERE id = ?1")
            .and_then(|mut s| s.execute(params![id, ca_pem]))
            .at(self.ctx)?;
        Ok(n > 0)
    }

    /// Removes an account, its calendars' links and objects (not the Kairos
    /// calendars or their events). Returns false when there was none.
    pub fn caldav_account_delete(&self, id: i64) -> Result<bool> {
        let n = self
            .conn
            .prepare_cached("DELETE FROM caldav_accounts WHERE id = ?1")
            .and_then(|mut s| s.execute([id]))
            .at(self.ctx)?;
        Ok(n > 0)
    }

    /// Adds or refreshes a discovered calendar (name, colour, components),
    /// keeping its link and token. Returns its id.
    pub fn caldav_calendar_put(&self, c: &CaldavCalendar) -> Result<i64> {
        self.conn
            .prepare_cached(
                "INSERT INTO caldav_calendars (account_id, href, name, color, components)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (account_id, href) DO UPDATE SET name = excluded.name,
                     color = excluded.color, components = excluded.components
                 RETURNING id",
            )
            .and_then(|mut s| {
                s.query_row(
                    params![c.account_id, c.href, c.name, c.color, c.components],
                    |r| r.get(0),
                )
            })
            .at(self.ctx)
    }

    /// Forgets discovered calendar `id` (gone from the server), its sync
    /// state and objects; not the Kairos calendar it synced into.
    pub fn caldav_calendar_delete(&self, id: i64) -> Result<()> {
        self.conn
            .prepare_cached("DELETE FROM caldav_calendars WHERE id = ?1")
            .and_then(|mut s| s.execute([id]))
            .at(self.ctx)?;
        Ok(())
    }

    /// Stops syncing CalDAV calendar `id` (no link). Its token and objects
    /// stay, so choosing it again resumes where it stopped; the Kairos
    /// calendar it synced into and its events stay.
    pub fn caldav_calendar_unlink(&self, id: i64) -> Result<()> {
        self.conn
            .prepare_cached("UPDATE caldav_calendars SET calendar_id = NULL WHERE id = ?1")
            .and_then(|mut s| s.execute([id]))
            .at(self.ctx)?;
        Ok(())
    }

    /// Forgets the sync state of CalDAV calendar `id` (token, objects):
    /// its next sync starts afresh.
    pub fn caldav_calendar_reset(&self, id: i64) -> Result<()> {
        self.conn
            .prepare_cached(
                "UPDATE caldav_calendars SET sync_token = NULL, synced_at = NULL WHERE id = ?1",
            )
            .and_then(|mut s| s.execute([id]))
            .at(self.ctx)?;
        self.conn
            .prepare_cached("DELETE FROM caldav_objects WHERE caldav_calendar_id = ?1")
            .and_then(|mut s| s.execute([id]))
            .at(self.ctx)?;
        Ok(())
    }

    /// Links CalDAV calendar `id` to Kairos calendar `local` (chosen to sync).
    pub fn caldav_calendar_link(&self, id: i64, local: CalendarId) -> Result<()> {
        self.conn
            .prepare_cached("UPDATE caldav_calendars SET calendar_id = ?2 WHERE id = ?1")
            .and_then(|mut s| s.execute(params![id, local.0]))
            .at(self.ctx)?;
        Ok(())
    }

    /// Records a complete sync of CalDAV calendar `id`.
    pub fn caldav_calendar_synced(
        &self,
        id: i64,
        token: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<()> {
        self.conn
            .prepare_cached(
                "UPDATE caldav_calendars SET sync_token = ?2, synced_at = ?3 WHERE id = ?1",
            )
            .and_then(|mut s| s.execute(params![id, token, ms(now)]))
            .at(self.ctx)?;
        Ok(())
    }

    /// Records object `o` of CalDAV calendar `id` as synced.
    pub fn caldav_object_put(&self, id: i64, o: &CaldavObject) -> Result<()> {
        self.conn
            .prepare_cached(
                "INSERT INTO caldav_objects (caldav_calendar_id, href, uid, etag, local_hash)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (caldav_calendar_id, href) DO UPDATE SET uid = excluded.uid,
                     etag = excluded.etag, local_hash = excluded.local_hash",
            )
            .and_then(|mut s| s.execute(params![id, o.href, o.uid, o.etag, o.local_hash]))
            .at(self.ctx)?;
        Ok(())
    }

    /// Forgets object `href` of CalDAV calendar `id`.
    pub fn caldav_object_delete(&self, id: i64, href: &str) -> Result<()> {
        self.conn
            .prepare_cached(
                "DELETE FROM caldav_objects WHERE caldav_calendar_id = ?1 AND href = ?2",
            )
            .and_then(|mut s| s.execute(params![id, href]))
            .at(self.ctx)?;
        Ok(())
    }
}
