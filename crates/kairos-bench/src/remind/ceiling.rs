//! The ceiling: how many POSTs a second the receiver takes from the
//! server's own client ([`Poster`]) with no queue at all. `workers` tasks
//! (as the Redis baseline's and the Kairos instances), each with its own
//! `Poster`, POST their share of the bodies the baseline would pop,
//! `concurrency` at a time, all made before the clock starts. No store, no
//! claim, no record: what is left is the bench's receiver, the HTTP client,
//! the JSON body and its HMAC, on this machine. Draining `N` due in one
//! second with a 1 s p99 needs about `N` POSTs a second end to end; this
//! says whether that is possible here at all.

use std::sync::Arc;

use anyhow::Result;
use futures_util::StreamExt;
use kairos_server::remind::webhook::{Outcome, Poster};

use super::receiver::Receiver;
use super::redis::member;
use super::{Drain, wait_drained};

/// POSTs `n` bodies over `accounts` accounts from `workers` tasks,
/// `concurrency` in flight each, as soon as they are made.
///
/// # Errors
/// No port, or a worker panicked.
pub async fn run(n: usize, accounts: usize, workers: usize, concurrency: usize) -> Result<Drain> {
    let hook = Receiver::start().await?;
    let per = n / accounts;
    let due_ms = chrono::Utc::now().timestamp_millis().div_euclid(1000) * 1000;
    let due = kairos_proto::utc::format(
        &chrono::DateTime::from_timestamp_millis(due_ms).unwrap_or_default(),
    );
    let workers = workers.max(1);
    let mut shares: Vec<Vec<(String, String)>> = vec![Vec::new(); workers];
    for (k, (a, i)) in (0..accounts)
        .flat_map(|a| (0..per).map(move |i| (a, i)))
        .enumerate()
    {
        let account = format!("bench{a}");
        let body = member(&account, i, &due);
        let delivery = format!("{account}/c1/e{i}/{due}/#0@bench/webhook");
        shares[k % workers].push((delivery, body));
    }
    let url = Arc::new(hook.url.clone());
    let t0 = std::time::Instant::now();
    let tasks: Vec<_> = shares
        .into_iter()
        .map(|share| {
            let url = Arc::clone(&url);
            tokio::spawn(async move {
                let poster = Poster::new().map_err(anyhow::Error::msg)?;
                let (poster, url) = (&poster, &*url);
                let failed = futures_util::stream::iter(share)
                    .map(|(delivery, body)| async move {
                        let ts = chrono::Utc::now().timestamp();
                        poster
                            .post(url, "s3cret", &delivery, ts, body.into_bytes())
                            .await
                    })
                    .buffer_unordered(concurrency.max(1))
                    .filter(|o| std::future::ready(*o != Outcome::Sent))
                    .count()
                    .await;
                anyhow::Ok(failed)
            })
        })
        .collect();
    let mut failed = 0;
    for t in tasks {
        failed += t.await??;
    }
    let posted = t0.elapsed();
    let total = per * accounts;
    let mut d = wait_drained(&hook, total, due_ms, || Ok(0)).await?;
    println!(
        "  {total} POSTs from {workers} workers × {concurrency} in {posted:.2?}: {:.0} POSTs/s ({failed} failed)",
        total as f64 / posted.as_secs_f64().max(1e-6)
    );
    d.n = total;
    Ok(d)
}
