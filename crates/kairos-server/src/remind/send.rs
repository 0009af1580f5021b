//! Sending one claimed delivery by its channel (webhook, e-mail), and what
//! a failed attempt turns into (retry after 10 s / 30 s / 2 min, then
//! abandoned with the reason).

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::claim::{Claimed, Finish};
use super::webhook::{Outcome, Poster};
use super::{from_ms, ms};

/// The waits after the first, second and third failed attempt; after the
/// fourth the delivery is abandoned.
pub const RETRIES: [Duration; 3] = [
    Duration::from_secs(10),
    Duration::from_secs(30),
    Duration::from_secs(120),
];

/// Sends claimed deliveries.
#[derive(Clone)]
pub struct Channels {
    /// Webhooks.
    pub poster: Poster,
    /// E-mail, if the server has an SMTP relay.
    pub mailer: Option<Arc<super::email::Mailer>>,
}

/// What a failed attempt turns into.
#[must_use]
pub fn after_failure(attempts_before: u32, outcome: Outcome, now: DateTime<Utc>) -> Finish {
    match outcome {
        Outcome::Sent => Finish::Sent,
        Outcome::Permanent(why) => Finish::Abandon(format!("permanent: {why}")),
        Outcome::Retryable(why) => match RETRIES.get(attempts_before as usize) {
            Some(wait) => Finish::Retry {
                at_ms: ms(now) + i64::try_from(wait.as_millis()).unwrap_or(i64::MAX),
                reason: why,
            },
            None => Finish::Abandon(format!(
                "gave up after {} attempts: {why}",
                attempts_before + 1
            )),
        },
    }
}

impl Channels {
    pub(super) async fn send(&self, c: &Claimed, now: DateTime<Utc>) -> Outcome {
        let payload: serde_json::Value =
            serde_json::from_str(&c.payload).unwrap_or(serde_json::Value::Null);
        let body = serde_json::json!({
            "account": c.account,
            "key": c.key,
            "calendar": c.calendar,
            "due": kairos_proto::utc::format(&from_ms(c.due_ms)),
            "acknowledged": c.state == "acked",
            "attempt": c.attempts + 1,
            "reminder": payload,
        });
        match c.channel.as_str() {
            "webhook" => {
                let delivery = format!("{}/{}/{}", c.account, c.key, c.channel);
                let body = serde_json::to_vec(&body).unwrap_or_default();
                let secret = c.secret.as_deref().unwrap_or_default();
                self.poster
                    .post(&c.target, secret, &delivery, now.timestamp(), body)
                    .await
            }
            "email" => match &self.mailer {
                Some(m) => m.send(&c.target, &body).await,
                None => Outcome::Permanent("this server has no SMTP relay (--smtp)".into()),
            },
            other => Outcome::Permanent(format!("unknown channel {other:?}")),
        }
    }
}
