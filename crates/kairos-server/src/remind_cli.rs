//! `kairos-server fallback`, `test-fallback` and `why`.

use std::time::Duration;

use anyhow::Context;
use clap::Args;
use kairos_server::Database;
use kairos_server::remind::serve::{self, Settings};
use kairos_server::remind::webhook::Outcome;
use kairos_server::remind::{Channel, Fallback, Reminders};

/// Where and when an account's unacknowledged reminders go.
#[derive(Args)]
pub struct FallbackArgs {
    /// The account (as made by `invite`).
    account: String,
    /// POST them to this URL (JSON, signed with --secret).
    #[arg(
        long,
        conflicts_with = "email",
        required_unless_present = "email",
        requires = "secret"
    )]
    webhook: Option<String>,
    /// The webhook's HMAC-SHA256 signing secret.
    #[arg(long)]
    secret: Option<String>,
    /// E-mail them to this address (needs --smtp on the serving instances).
    #[arg(long)]
    email: Option<String>,
    /// Only for this calendar uid (default: every calendar without its own
    /// setting).
    #[arg(long, default_value = "*")]
    calendar: String,
    /// Minutes after the reminder fired with no device's acknowledgement.
    #[arg(long, default_value_t = 5)]
    after_mins: u64,
    /// Send it even when a device acknowledged it (people without a
    /// desktop running).
    #[arg(long)]
    always: bool,
    /// The account's time zone (IANA name, e.g. Europe/Berlin): events
    /// without a zone ("the pill at 08:00") and working hours are read in
    /// it, as on the person's devices. Default: as set before, else UTC.
    #[arg(long)]
    zone: Option<String>,
}

pub async fn fallback(db: &Database, a: FallbackArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        kairos_proto::ids::is_account(&a.account),
        "account {:?} must be 1-64 characters of a-z 0-9 . _ -",
        a.account
    );
    let (channel, target) = match (a.webhook, a.email) {
        (Some(url), None) => {
            let ok = url.starts_with("http://") || url.starts_with("https://");
            anyhow::ensure!(ok, "--webhook {url:?} must be an http:// or https:// URL");
            (Channel::Webhook, url)
        }
        (None, Some(addr)) => {
            anyhow::ensure!(
                addr.contains('@'),
                "--email {addr:?} is not an e-mail address"
            );
            (Channel::Email, addr)
        }
        _ => anyhow::bail!("give exactly one of --webhook URL or --email ADDRESS"),
    };
    let zone = match &a.zone {
        Some(z) => Some(z.parse::<chrono_tz::Tz>().map_err(|_| {
            anyhow::anyhow!("--zone {z:?} is not an IANA time zone name (e.g. Europe/Berlin)")
        })?),
        None => None,
    };
    let f = Fallback {
        account: a.account.clone(),
        calendar: a.calendar,
        channel,
        target,
        secret: a.secret,
        after: Duration::from_secs(a.after_mins.saturating_mul(60)),
        always: a.always,
    };
    let r = Reminders::open(db).await.context("opening the store")?;
    r.configure(f.clone()).await.with_context(|| {
        format!(
            "setting the fallback of {:?} (does the account exist? `invite` makes it)",
            a.account
        )
    })?;
    if let Some(zone) = zone {
        r.set_zone(&f.account, zone)
            .await
            .with_context(|| format!("setting the zone of {:?}", a.account))?;
    }
    println!(
        "{}",
        serde_json::json!({
            "account": f.account, "calendar": f.calendar, "channel": f.channel.name(),
            "target": f.target, "after_secs": f.after.as_secs(), "always": f.always,
            "zone": zone.map(|z| z.name()),
        })
    );
    Ok(())
}

pub async fn why(db: &Database, key: &str) -> anyhow::Result<()> {
    let r = Reminders::open(db).await.context("opening the store")?;
    let trail = r.why(key).await.context("reading the audit trail")?;
    anyhow::ensure!(
        !trail.is_empty(),
        "no reminder {key:?} in this server's queue (is a fallback set for its account?)"
    );
    for (account, at, event) in trail {
        println!(
            "{}",
            serde_json::json!({ "account": account, "at": kairos_proto::utc::format(&at), "event": event })
        );
    }
    Ok(())
}

/// `test-fallback ACCOUNT`: one JSON line per fallback with its outcome.
pub async fn test_fallback(
    db: &Database,
    account: &str,
    settings: &Settings,
) -> anyhow::Result<()> {
    let r = Reminders::open(db).await.context("opening the store")?;
    let fallbacks = r
        .fallbacks(account)
        .await
        .context("reading the fallbacks")?;
    anyhow::ensure!(
        !fallbacks.is_empty(),
        "account {account:?} has no fallback (set one with `fallback`)"
    );
    let channels = serve::channels(settings).map_err(anyhow::Error::msg)?;
    let mut failed = 0;
    for f in &fallbacks {
        let (outcome, reason) = match channels.test(f, chrono::Utc::now()).await {
            Outcome::Sent => ("sent", None),
            Outcome::Retryable(why) => ("failed, would be retried", Some(why)),
            Outcome::Permanent(why) => ("failed, would be abandoned", Some(why)),
        };
        failed += usize::from(reason.is_some());
        println!(
            "{}",
            serde_json::json!({
                "account": account, "calendar": f.calendar, "channel": f.channel.name(),
                "target": f.target, "outcome": outcome, "reason": reason,
            })
        );
    }
    anyhow::ensure!(
        failed == 0,
        "{failed} of {} fallbacks failed",
        fallbacks.len()
    );
    Ok(())
}
