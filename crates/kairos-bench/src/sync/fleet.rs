//! Many accounts, two devices each, made once per run and reused by every
//! part that needs them (each part starts its own server process on the
//! same data directory, so the figures of one part do not carry another's
//! connections).
//!
//! Per account `bench-NNNNN`: two `kairos-server invite` runs (each a
//! process of its own, as a person would run it), then devices `a` and `b`
//! join with those codes over `/v1/join`. All invites come first
//! (`INVITING` at a time), then all joins (`JOINING` at a time): before
//! commit 5b085d0 (the server's writer now begins with `BEGIN IMMEDIATE`),
//! an `invite` process writing while the server handled a join made the
//! join fail with HTTP 503 ("database is locked" in the server's log), so
//! the two are not mixed. The set-up time is reported apart from every measurement.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use futures_util::StreamExt;

use super::client::{Creds, join};
use super::server::{Bin, Server};

/// `invite` processes at once.
const INVITING: usize = 4;
/// Joins in flight at once.
const JOINING: usize = 32;

/// The accounts made.
pub struct Fleet {
    /// `[a, b]` per account, in account order.
    pub accounts: Vec<[Creds; 2]>,
    /// Wall time of all the invites.
    pub invites: Duration,
    /// Wall time of all the joins.
    pub joins: Duration,
    /// Invites that failed and were run again (see the module doc).
    pub retried: u64,
}

/// One `invite`, run again (up to 20 times) when it fails: two `invite`
/// processes writing at once can get "database is locked" (see the module
/// doc).
async fn invite(bin: &Bin, server: &Server, account: &str, retried: &AtomicU64) -> Result<String> {
    let mut tries = 0;
    loop {
        match bin.invite(&server.data, account).await {
            Ok(code) => return Ok(code),
            Err(e) if tries < 20 => {
                tries += 1;
                if retried.fetch_add(1, Ordering::Relaxed) == 0 {
                    println!("  note: an invite failed and is run again: {e:#}");
                }
            }
            Err(e) => return Err(e),
        }
    }
}

/// Makes `n` accounts with two devices each on the running `server`.
///
/// # Errors
/// An invite or a join failed.
pub async fn provision(bin: &Bin, server: &Server, n: usize) -> Result<Fleet> {
    let retried = AtomicU64::new(0);
    let t0 = Instant::now();
    let codes: Vec<(String, String)> = futures_util::stream::iter(0..2 * n)
        .map(|i| {
            let retried = &retried;
            async move {
                let account = format!("bench-{:05}", i / 2);
                let code = invite(bin, server, &account, retried).await?;
                Ok::<_, anyhow::Error>((account, code))
            }
        })
        .buffered(INVITING)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<Result<_>>()?;
    let invites = t0.elapsed();
    println!(
        "  {} invites in {invites:.2?}",
        super::thousands(2 * n as u64)
    );
    let t1 = Instant::now();
    let creds: Vec<Creds> = futures_util::stream::iter(codes.iter().enumerate())
        .map(|(i, (account, code))| async move {
            let name = if i % 2 == 0 { "a" } else { "b" };
            join(&server.url, code, name)
                .await
                .with_context(|| format!("{account}: joining {name}"))
        })
        .buffered(JOINING)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<Result<_>>()?;
    let joins = t1.elapsed();
    let mut it = creds.into_iter();
    let mut accounts = Vec::with_capacity(n);
    while let (Some(a), Some(b)) = (it.next(), it.next()) {
        accounts.push([a, b]);
    }
    Ok(Fleet {
        accounts,
        invites,
        joins,
        retried: retried.load(Ordering::Relaxed),
    })
}
