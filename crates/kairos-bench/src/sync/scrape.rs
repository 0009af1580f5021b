//! The server's own view of a run: its `/metrics` read before and after,
//! and the two latency histograms that split an op's trip inside the
//! server — `kairos_store_write_seconds` (a push handed to the store to its
//! results: the writer's queue and commit) and `kairos_fan_out_seconds`
//! (the commit to the frame written to another device's session). With
//! the bench's end-to-end figures they say where a tail is spent: in the
//! store, in the fan-out, or outside the server (the sockets, the bench's
//! own clients, the scheduler).
//!
//! The histograms have fixed buckets, so a quantile is given as the
//! bucket's upper bound ("p99 ≤ 5 ms").

use std::time::Duration;

use anyhow::{Context, Result, bail};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The histograms read.
const NAMES: [(&str, &str); 2] = [
    ("kairos_store_write_seconds", "push → durable"),
    ("kairos_fan_out_seconds", "commit → frame written"),
];

/// `/metrics` of the server at `ws_url` (`ws://HOST:PORT`), the body only.
///
/// # Errors
/// The server does not answer within 5 s, or not with 200.
pub async fn metrics(ws_url: &str) -> Result<String> {
    let host = ws_url
        .strip_prefix("ws://")
        .with_context(|| format!("not a ws:// URL: {ws_url}"))?;
    let get = async {
        let mut s = TcpStream::connect(host).await?;
        s.write_all(
            format!("GET /metrics HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .await?;
        let mut out = String::new();
        s.read_to_string(&mut out).await?;
        anyhow::Ok(out)
    };
    let text = tokio::time::timeout(Duration::from_secs(5), get)
        .await
        .with_context(|| format!("GET {host}/metrics: no answer in 5 s"))??;
    let Some((head, body)) = text.split_once("\r\n\r\n") else {
        bail!("GET {host}/metrics: no end of headers");
    };
    if !head.starts_with("HTTP/1.1 200") {
        bail!("GET {host}/metrics: {}", head.lines().next().unwrap_or(""));
    }
    Ok(body.to_owned())
}

/// A histogram's cumulative bucket counts, by upper bound (seconds;
/// `+Inf` last).
#[derive(Debug, Clone, PartialEq)]
pub struct Buckets(Vec<(f64, u64)>);

impl Buckets {
    /// The buckets of histogram `name` in an exposition (empty if absent).
    #[must_use]
    pub fn parse(text: &str, name: &str) -> Self {
        let prefix = format!("{name}_bucket{{le=\"");
        let mut out = Vec::new();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix(&prefix) else {
                continue;
            };
            let Some((le, n)) = rest.split_once("\"} ") else {
                continue;
            };
            let le = if le == "+Inf" {
                f64::INFINITY
            } else {
                le.parse().unwrap_or(f64::NAN)
            };
            if let (false, Ok(n)) = (le.is_nan(), n.trim().parse()) {
                out.push((le, n));
            }
        }
        Self(out)
    }

    /// What was observed between `before` and `self` (same buckets).
    #[must_use]
    pub fn since(&self, before: &Self) -> Self {
        Self(
            self.0
                .iter()
                .map(|&(le, n)| {
                    let was = before.0.iter().find(|b| b.0 == le).map_or(0, |b| b.1);
                    (le, n.saturating_sub(was))
                })
                .collect(),
        )
    }

    /// Observations in all.
    #[must_use]
    pub fn count(&self) -> u64 {
        self.0.last().map_or(0, |b| b.1)
    }

    /// The upper bound of the bucket holding quantile `q` (0–1), or `None`
    /// with no observations.
    #[must_use]
    pub fn quantile(&self, q: f64) -> Option<f64> {
        let total = self.count();
        if total == 0 {
            return None;
        }
        #[allow(clippy::cast_precision_loss)]
        let want = (q * total as f64).ceil();
        #[allow(clippy::cast_precision_loss)]
        self.0.iter().find(|b| b.1 as f64 >= want).map(|b| b.0)
    }
}

/// "≤ 2.5 ms", "> 10 s".
fn bound(le: Option<f64>) -> String {
    match le {
        None => "–".into(),
        Some(s) if s.is_infinite() => "> the last bucket".into(),
        Some(s) if s < 1.0 => format!("≤ {} ms", s * 1000.0),
        Some(s) => format!("≤ {s} s"),
    }
}

/// One line per histogram: what the server observed between two
/// expositions.
#[must_use]
pub fn report(before: &str, after: &str) -> Vec<String> {
    NAMES
        .iter()
        .map(|(name, what)| {
            let d = Buckets::parse(after, name).since(&Buckets::parse(before, name));
            format!(
                "server {what}: n {}, p50 {}, p99 {}, p99.9 {} (its /metrics, bucket bounds)",
                d.count(),
                bound(d.quantile(0.5)),
                bound(d.quantile(0.99)),
                bound(d.quantile(0.999)),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str = "kairos_fan_out_seconds_bucket{le=\"0.001\"} 10\n\
        kairos_fan_out_seconds_bucket{le=\"0.005\"} 10\n\
        kairos_fan_out_seconds_bucket{le=\"+Inf\"} 10\n";
    const AFTER: &str = "# HELP kairos_fan_out_seconds x\n\
        kairos_fan_out_seconds_bucket{le=\"0.001\"} 908\n\
        kairos_fan_out_seconds_bucket{le=\"0.005\"} 1008\n\
        kairos_fan_out_seconds_bucket{le=\"+Inf\"} 1010\n\
        kairos_fan_out_seconds_sum 1.5\n";

    #[test]
    fn quantiles_are_the_bounds_of_the_buckets_holding_them() {
        let d = Buckets::parse(AFTER, "kairos_fan_out_seconds")
            .since(&Buckets::parse(BEFORE, "kairos_fan_out_seconds"));
        assert_eq!(d.count(), 1000);
        // 898 of 1,000 at most 1 ms: the median is there, p99 is not.
        assert_eq!(d.quantile(0.5), Some(0.001));
        assert_eq!(d.quantile(0.99), Some(0.005));
        assert_eq!(d.quantile(0.999), Some(f64::INFINITY));
        assert_eq!(bound(d.quantile(0.99)), "≤ 5 ms");
    }

    #[test]
    fn an_absent_histogram_reports_no_observations() {
        let lines = report(BEFORE, AFTER);
        assert!(lines[0].contains("n 0, p50 –"), "{lines:?}");
        assert!(lines[1].contains("n 1000, p50 ≤ 1 ms"), "{lines:?}");
    }
}
