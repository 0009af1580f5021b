//! `meta`: small settings, and the advisory single-writer lease.
//!
//! The lease is two rows, `lease.owner` and `lease.until` (unix ms). Every
//! write transaction is `BEGIN IMMEDIATE`, so read-check-write of the lease is
//! atomic across processes: two engines cannot both acquire it.

use chrono::{DateTime, TimeDelta, Utc};
use rusqlite::{OptionalExtension, params};

use super::ms;
use crate::error::{At, Result, StoreError};
use crate::store::{Reader, Tx};
use crate::types::Lease;

const OWNER: &str = "lease.owner";
const UNTIL: &str = "lease.until";

fn expiry(now: DateTime<Utc>, ttl: TimeDelta) -> DateTime<Utc> {
    now.checked_add_signed(ttl)
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

impl Tx<'_> {
    /// Sets `k` to `v`. Keys starting `lease.` belong to the lease.
    pub fn meta_set(&self, k: &str, v: &str) -> Result<()> {
        self.conn
            .prepare_cached("INSERT INTO meta (k, v) VALUES (?1, ?2) ON CONFLICT (k) DO UPDATE SET v = excluded.v")
            .and_then(|mut s| s.execute(params![k, v]))
            .at(self.ctx)?;
        Ok(())
    }

    /// Removes `k`.
    pub fn meta_delete(&self, k: &str) -> Result<()> {
        self.conn
            .prepare_cached("DELETE FROM meta WHERE k = ?1")
            .and_then(|mut s| s.execute([k]))
            .at(self.ctx)?;
        Ok(())
    }

    fn write_lease(&self, owner: &str, until: DateTime<Utc>) -> Result<Lease> {
        self.meta_set(OWNER, owner)?;
        self.meta_set(UNTIL, &ms(until).to_string())?;
        Ok(Lease {
            owner: owner.to_owned(),
            until,
        })
    }

    /// Takes the single-writer lease for `owner` until `now + ttl`, if nobody
    /// else holds a valid one (`until > now`). Re-acquiring one's own lease
    /// extends it.
    ///
    /// The lease is advisory: the store does not check it on writes. It lets
    /// a second daemon refuse to start with a clear message; double delivery
    /// is prevented by the guarded transitions regardless.
    ///
    /// # Errors
    /// [`StoreError::LeaseHeld`] naming the holder and its expiry.
    pub fn try_acquire_lease(
        &self,
        owner: &str,
        now: DateTime<Utc>,
        ttl: TimeDelta,
    ) -> Result<Lease> {
        if let Some(held) = self.lease()?
            && held.owner != owner
            && held.until > now
        {
            return Err(StoreError::LeaseHeld {
                path: self.ctx.path.clone(),
                owner: held.owner,
                until: held.until,
            });
        }
        self.write_lease(owner, expiry(now, ttl))
    }

    /// Extends `owner`'s lease to `now + ttl`. Succeeds as long as nobody else
    /// took it, even if it had expired meanwhile.
    ///
    /// # Errors
    /// [`StoreError::LeaseLost`] if it was released or another owner took it:
    /// stop writing and acquire again.
    pub fn renew_lease(&self, owner: &str, now: DateTime<Utc>, ttl: TimeDelta) -> Result<Lease> {
        match self.lease()? {
            Some(held) if held.owner == owner => self.write_lease(owner, expiry(now, ttl)),
            other => Err(StoreError::LeaseLost {
                path: self.ctx.path.clone(),
                detail: match other {
                    Some(h) => format!("now held by {} until {}", h.owner, h.until),
                    None => "it was released".to_owned(),
                },
            }),
        }
    }

    /// Gives up `owner`'s lease. Returns `false` (and changes nothing) if
    /// `owner` did not hold it.
    pub fn release_lease(&self, owner: &str) -> Result<bool> {
        match self.lease()? {
            Some(held) if held.owner == owner => {
                self.conn
                    .execute(
                        "DELETE FROM meta WHERE k IN (?1, ?2)",
                        params![OWNER, UNTIL],
                    )
                    .at(self.ctx)?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}

impl Reader<'_> {
    /// The value of `k`, if set.
    pub fn meta_get(&self, k: &str) -> Result<Option<String>> {
        self.conn
            .prepare_cached("SELECT v FROM meta WHERE k = ?1")
            .and_then(|mut s| s.query_row([k], |r| r.get(0)).optional())
            .at(self.ctx)
    }

    /// The lease as stored, valid or expired; `None` if nobody holds it.
    pub fn lease(&self) -> Result<Option<Lease>> {
        // One statement, so owner and expiry come from the same snapshot.
        let (owner, until): (Option<String>, Option<String>) = self
            .conn
            .query_row(
                "SELECT (SELECT v FROM meta WHERE k = ?1), (SELECT v FROM meta WHERE k = ?2)",
                params![OWNER, UNTIL],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .at(self.ctx)?;
        let (Some(owner), Some(until)) = (owner, until) else {
            return Ok(None);
        };
        let until = until
            .parse::<i64>()
            .ok()
            .and_then(DateTime::from_timestamp_millis)
            .ok_or_else(|| {
                self.ctx
                    .corrupt(format!("{UNTIL} is {until:?}, not a time"))
            })?;
        Ok(Some(Lease { owner, until }))
    }
}
