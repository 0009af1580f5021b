//! Which devices have a session on which instance (migration 0014): each
//! instance writes what changed since its last round (`presence.rs` at the
//! crate's root) and keeps its own row alive; a device list reads a device
//! as connected while an alive instance holds it.

use super::super::StoreError;
use super::{Postgres, get};

/// Instances gone this long are swept, with their rows (a killed instance
/// never removes its own).
const SWEEP_AFTER_MS: i64 = 60_000;

/// One round of an instance's presence.
pub struct Round<'a> {
    /// The instance.
    pub instance: &'a str,
    /// The wall clock now, in ms.
    pub now_ms: i64,
    /// Until when the instance counts as alive without another round.
    pub alive_until_ms: i64,
    /// Whether `opened` is every session of the instance: its other rows
    /// are removed first.
    pub all: bool,
    /// (account, device) of the sessions opened since the last round.
    pub opened: &'a [(String, String)],
    /// Devices whose last session here closed since the last round.
    pub closed: &'a [String],
}

impl Postgres {
    /// Writes a round. `Ok(false)` when the instance's row was missing (its
    /// first round, or the table was emptied by a crash): then the caller
    /// sends all its sessions as opened in the next round.
    pub(crate) async fn presence(&self, r: &Round<'_>) -> Result<bool, StoreError> {
        let c = get(&self.pool).await?;
        if r.all {
            c.execute("DELETE FROM presence WHERE instance = $1", &[&r.instance])
                .await?;
        }
        let (accounts, devices): (Vec<&str>, Vec<&str>) = r
            .opened
            .iter()
            .map(|(a, d)| (a.as_str(), d.as_str()))
            .unzip();
        let swept_before = r.now_ms - SWEEP_AFTER_MS;
        let (alive, closed, opened, sweep) = tokio::join!(
            async {
                c.query_one(
                    "INSERT INTO instances (id, alive_until_ms) VALUES ($1, $2)
                     ON CONFLICT (id) DO UPDATE SET alive_until_ms = excluded.alive_until_ms
                     RETURNING xmax::text <> '0'",
                    &[&r.instance, &r.alive_until_ms],
                )
                .await
            },
            async {
                if r.closed.is_empty() {
                    return Ok(0);
                }
                c.execute(
                    "DELETE FROM presence WHERE instance = $1 AND device = ANY($2)",
                    &[&r.instance, &r.closed],
                )
                .await
            },
            async {
                if r.opened.is_empty() {
                    return Ok(0);
                }
                c.execute(
                    "INSERT INTO presence (account, device, instance)
                     SELECT a, d, $3 FROM unnest($1::text[], $2::text[]) AS t(a, d)
                     ON CONFLICT DO NOTHING",
                    &[&accounts, &devices, &r.instance],
                )
                .await
            },
            async {
                c.execute(
                    "WITH gone AS (DELETE FROM instances WHERE alive_until_ms < $1 RETURNING id)
                     DELETE FROM presence WHERE instance IN (SELECT id FROM gone)",
                    &[&swept_before],
                )
                .await
            },
        );
        let (updated, ..) = (alive?.get::<_, bool>(0), closed?, opened?, sweep?);
        Ok(updated)
    }
}
