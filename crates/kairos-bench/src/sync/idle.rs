//! Part 3: idle authenticated connections. A freshly started server on the
//! fleet's data directory; its memory is read once it printed `listening`
//! and settled (1 s), then `n` sessions are opened (each: upgrade with its
//! bearer token, `hello`, `welcome`, `caught_up`) and left idle; its memory
//! is read again after 2 s, and once more 10 s later (still idle).
//!
//! Memory: `VmRSS` from `/proc/PID/status` (resident pages, shared ones
//! counted whole) and `Pss` from `/proc/PID/smaps_rollup` (shared pages
//! divided among their users); bytes per connection = (after − before) / n.

use std::time::{Duration, Instant};

use anyhow::Result;

use super::ack::connect_all;
use super::client::Creds;
use super::server::Server;
use super::{Row, thousands};

/// Runs the part on a started server with the fleet's devices.
///
/// # Errors
/// A session cannot be opened.
pub async fn run(server: &Server, devices: &[Creds], rows: &mut Vec<Row>) -> Result<()> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (rss0, pss0, _) = server.memory();
    println!("  before: VmRSS {rss0} kB, Pss {pss0} kB");
    let t = Instant::now();
    let sessions = connect_all(&[&server.url], devices).await?;
    let connect = t.elapsed();
    let n = sessions.len() as u64;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (rss1, pss1, hwm1) = server.memory();
    println!(
        "  {} sessions caught up in {connect:.2?}; after: VmRSS {rss1} kB, Pss {pss1} kB, VmHWM {hwm1} kB",
        thousands(n)
    );
    let cpu0 = server.cpu();
    tokio::time::sleep(Duration::from_secs(10)).await;
    let (rss2, pss2, hwm2) = server.memory();
    let idle_cpu = server.cpu() - cpu0;
    println!(
        "  10 s later: VmRSS {rss2} kB, Pss {pss2} kB, VmHWM {hwm2} kB; server CPU in those 10 s {idle_cpu:.2?}"
    );
    let per = |a: u64, b: u64| (b.saturating_sub(a) * 1024) / n.max(1);
    #[allow(clippy::cast_precision_loss)]
    let mb = |kb: u64| kb as f64 / 1024.0;
    rows.push(Row::info(
        "idle: connections open",
        format!("{} (opened in {connect:.2?})", thousands(n)),
    ));
    rows.push(Row::new(
        "idle: server RSS with them open",
        "≤ 150 MB",
        format!(
            "{:.1} MiB (before {:.1} MiB; 10 s later {:.1} MiB; peak {:.1} MiB)",
            mb(rss1),
            mb(rss0),
            mb(rss2),
            mb(hwm2)
        ),
        rss1.max(rss2) * 1024 <= 150_000_000,
    ));
    rows.push(Row::info(
        "idle: per connection",
        format!(
            "{} bytes RSS, {} bytes PSS (PSS {:.1} → {:.1} MiB)",
            thousands(per(rss0, rss1)),
            thousands(per(pss0, pss1)),
            mb(pss0),
            mb(pss1)
        ),
    ));
    rows.push(Row::info(
        "idle: server CPU, 10 s idle",
        format!("{idle_cpu:.2?}"),
    ));
    drop(sessions);
    Ok(())
}
