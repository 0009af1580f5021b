//! The gate's state in the store, shared by every instance on one
//! PostgreSQL (on SQLite, one instance, the same code path): a round trip
//! when a batch starts and, only if something changed, one when it ends.
//!
//! At the start ([`Reminders::open_batch`]): the tokens the batch's
//! deliveries of each account need are taken from the account's bucket in
//! one atomic update, minus those of deliveries coming back on a token
//! they reserved when deferred (their reservation is taken out in the same
//! statement); the batch's destinations' breakers are read, and the probe
//! of each half-open one taken when no live instance holds it. `rate.rs`
//! then hands out the tokens in the claim's order; the deliveries left
//! without one reserve the next ones (a second round trip, only then).
//! At the end ([`Reminders::close_batch`]): what the sends taught of each
//! destination is merged (`gate::merge`) into its row as stored then, and
//! the tokens of deliveries that took one but were held back by an open
//! circuit are given back.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use super::claim::Claimed;
use super::gate::{Breaker, PROBE_STALE_MS, Tally, destination, merge};
use super::worker::Options;
use super::{Db, Reminders, rate};
use crate::store::StoreError;

/// A reservation older than this is dropped (its delivery was cancelled;
/// one this late takes a new token).
pub(crate) const RESERVATION_TTL_MS: i64 = 3_600_000;

/// The gate's part of one claimed batch.
#[derive(Default)]
pub(crate) struct Batch {
    /// Deliveries over their account's rate: (account, delivery) → when
    /// their reserved token comes.
    deferred: HashMap<(String, String), i64>,
    /// Tokens to give back, by account.
    refunds: Mutex<HashMap<String, u32>>,
    /// The breakers as seeded (with the probes taken), by destination.
    seeds: HashMap<String, Breaker>,
    /// The destination of each webhook URL of the batch (`destination`
    /// parses the URL: once a URL a batch, not once a delivery).
    webhooks: HashMap<String, String>,
}

impl Batch {
    /// When the reserved token of `delivery` comes, if it is over the rate.
    pub(crate) fn rate(&self, account: &str, delivery: &str) -> Option<i64> {
        self.deferred
            .get(&(account.to_owned(), delivery.to_owned()))
            .copied()
    }

    /// [`Batch::rate`] of a claimed delivery (its name built only when
    /// some delivery of the batch is over its rate).
    pub(crate) fn rate_of(&self, c: &Claimed) -> Option<i64> {
        if self.deferred.is_empty() {
            return None;
        }
        self.rate(&c.account, &delivery(c))
    }

    /// `gate::destination` of `c`, from the batch's memo when there.
    pub(crate) fn destination(&self, c: &Claimed) -> String {
        match self.webhooks.get(&c.target) {
            Some(d) if c.channel == "webhook" => d.clone(),
            _ => destination(&c.channel, &c.target),
        }
    }

    /// `account`'s delivery took a token and was not sent.
    pub(crate) fn refund(&self, account: &str) {
        let mut r = self
            .refunds
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *r.entry(account.to_owned()).or_default() += 1;
    }
}

/// A delivery's name in its account's reservations.
pub(crate) fn delivery(c: &Claimed) -> String {
    c.name()
}

/// Whether the batch tries to send `c` (not cancelled).
pub(crate) fn sends(c: &Claimed) -> bool {
    c.state != "withdrawn" && (c.state != "acked" || c.always)
}

/// What the start of a batch read and took.
#[derive(Default)]
pub(crate) struct Taken {
    /// Deliveries that came back on a reserved token.
    pub reserved: HashSet<(String, String)>,
    /// (account, tokens before the take, tokens taken).
    pub buckets: Vec<(String, f64, usize)>,
    /// (destination, row, this instance took its probe).
    pub breakers: Vec<(String, Breaker, bool)>,
}

/// What the end of a batch writes.
pub(crate) struct Changes {
    /// (destination, what the batch learnt of it).
    pub tallies: Vec<(String, Tally)>,
    /// (account, tokens given back).
    pub refunds: Vec<(String, u32)>,
}

/// The fixed parts of the statements.
#[derive(Clone)]
pub(crate) struct Ctx {
    pub owner: String,
    pub now: i64,
    pub limits: super::gate::Limits,
}

impl Reminders {
    /// The gate's part of a claimed batch (`rows`, in the claim's order):
    /// tokens taken, breakers seeded into this instance's view.
    pub(crate) async fn open_batch(
        &self,
        rows: &[Claimed],
        opts: &Options,
        now: i64,
    ) -> Result<Batch, StoreError> {
        let mut cands: Vec<(String, String)> = Vec::new();
        let mut dests: Vec<String> = Vec::new();
        let mut webhooks: HashMap<String, String> = HashMap::new();
        for c in rows.iter().filter(|c| sends(c)) {
            cands.push((c.account.clone(), delivery(c)));
            let d = match webhooks.get(&c.target) {
                Some(d) if c.channel == "webhook" => d.clone(),
                _ => destination(&c.channel, &c.target),
            };
            if c.channel == "webhook" && !webhooks.contains_key(&c.target) {
                webhooks.insert(c.target.clone(), d.clone());
            }
            if !dests.contains(&d) {
                dests.push(d);
            }
        }
        if cands.is_empty() {
            return Ok(Batch::default());
        }
        if opts.limits.per_minute == 0 {
            cands.clear();
        }
        let ctx = Ctx {
            owner: opts.owner.clone(),
            now,
            limits: opts.limits,
        };
        let taken = match &self.db {
            Db::Sqlite(s) => {
                let (cands, dests, ctx) = (cands.clone(), dests.clone(), ctx.clone());
                s.run(move |c| super::shared_sql::take_sqlite(c, &cands, &dests, &ctx))
                    .await?
            }
            Db::Postgres(p) => {
                super::shared_sql::take_pg(&p.get().await?, &cands, &dests, &ctx).await?
            }
        };
        let mut batch = Batch {
            webhooks,
            ..Batch::default()
        };
        let mut reserve = Vec::new();
        for (account, before, n) in &taken.buckets {
            let mine = cands
                .iter()
                .filter(|c| &c.0 == account && !taken.reserved.contains(*c));
            let slots = rate::ration(*before, *n, now, opts.limits.per_minute);
            for (c, slot) in mine.zip(slots) {
                if let Some(at) = slot {
                    batch.deferred.insert(c.clone(), at);
                    reserve.push((c.0.clone(), c.1.clone(), at));
                }
            }
        }
        if !reserve.is_empty() {
            match &self.db {
                Db::Sqlite(s) => {
                    s.run(move |c| super::shared_sql::reserve_sqlite(c, &reserve))
                        .await?;
                }
                Db::Postgres(p) => super::shared_sql::reserve_pg(&p.get().await?, &reserve).await?,
            }
        }
        let mut gate = self.gate();
        // No row: closed with no failure (perhaps closed by another
        // instance since this one last saw it).
        for d in &dests {
            gate.seed(d, &Breaker::default(), false, now);
        }
        for (dest, mut row, ours) in taken.breakers {
            gate.seed(&dest, &row, ours, now);
            if ours {
                row.probe_owner = Some(opts.owner.clone());
                row.probe_until = now + PROBE_STALE_MS;
            }
            batch.seeds.insert(dest, row);
        }
        Ok(batch)
    }

    /// Writes back what `batch` changed, if anything did.
    pub(crate) async fn close_batch(
        &self,
        batch: Batch,
        opts: &Options,
        now: i64,
    ) -> Result<(), StoreError> {
        let limits = opts.limits;
        let tallies: Vec<(String, Tally)> = self
            .gate()
            .changes()
            .into_iter()
            .filter(|(d, t)| {
                let seed = batch.seeds.get(d).cloned().unwrap_or_default();
                merge(&seed, t, &limits, &opts.owner, now) != seed
            })
            .collect();
        let refunds: Vec<(String, u32)> = batch
            .refunds
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .into_iter()
            .filter(|_| limits.per_minute > 0)
            .collect();
        if tallies.is_empty() && refunds.is_empty() {
            return Ok(());
        }
        let ctx = Ctx {
            owner: opts.owner.clone(),
            now,
            limits,
        };
        let changes = Changes { tallies, refunds };
        match &self.db {
            Db::Sqlite(s) => {
                s.run(move |c| super::shared_sql::write_sqlite(c, &changes, &ctx))
                    .await
            }
            Db::Postgres(p) => {
                super::shared_sql::write_pg(&mut p.get().await?, &changes, &ctx).await
            }
        }
    }
}
