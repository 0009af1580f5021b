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
    /// Sends a sample reminder through fallback `f` now, as a delivery
    /// would go (same body, signature, trust and relay): what
    /// `kairos-server test-fallback` runs, so that a webhook that refuses
    /// the POST or a relay that refuses the login shows today, not on the
    /// day of the reminder. Nothing is queued or recorded.
    pub async fn test(&self, f: &super::Fallback, now: DateTime<Utc>) -> Outcome {
        let payload = serde_json::json!({
            "uid": "kairos-server-test",
            "occurrence_start": kairos_proto::utc::format(&now),
            "summary": format!("Kairos test of the {} fallback", f.channel.name()),
            "calendar": f.calendar,
        });
        let c = Claimed {
            account: f.account.clone(),
            key: format!("test/{}", now.timestamp()),
            channel: f.channel.name().to_owned(),
            attempts: 0,
            always: f.always,
            due_ms: ms(now),
            target: f.target.clone(),
            secret: f.secret.clone(),
            payload: payload.to_string(),
            state: "pending".into(),
            calendar: f.calendar.clone(),
            deliver_ms: ms(now),
            next_ms: ms(now),
            rank: 10,
            round: 0,
        };
        self.send(&c, now).await
    }

    pub(super) async fn send(&self, c: &Claimed, now: DateTime<Utc>) -> Outcome {
        match c.channel.as_str() {
            "webhook" => {
                let delivery = format!("{}/{}", c.account, c.name());
                let secret = c.secret.as_deref().unwrap_or_default();
                self.poster
                    .post(&c.target, secret, &delivery, now.timestamp(), body_bytes(c))
                    .await
            }
            "email" => match &self.mailer {
                Some(m) => m.send(&c.target, &body(c)).await,
                None => Outcome::Permanent("this server has no SMTP relay (--smtp)".into()),
            },
            other => Outcome::Permanent(format!("unknown channel {other:?}")),
        }
    }
}

/// The fields of a delivery's body but `reminder`, by name (the order a
/// `serde_json::Map` keeps them in, but for `text`, which [`body_bytes`]
/// writes before `reminder`: the same value, parsed, as [`body`]).
#[derive(serde::Serialize)]
struct Head<'a> {
    account: &'a str,
    acknowledged: bool,
    /// A snooze's return: the snooze's end (absent for the trigger's).
    #[serde(skip_serializing_if = "Option::is_none")]
    after_snooze: Option<String>,
    /// For Discord (see `chat`): notify nobody.
    allowed_mentions: Mentions,
    attempt: u32,
    calendar: &'a str,
    /// For Discord: the sentence.
    content: String,
    due: String,
    key: &'a str,
    /// For Slack and its kin: the sentence, escaped.
    text: String,
}

/// Discord's `allowed_mentions` with nothing allowed.
#[derive(serde::Serialize)]
struct Mentions {
    parse: [&'static str; 0],
}

fn head(c: &Claimed) -> Head<'_> {
    let sentence = super::chat::sentence(c);
    Head {
        account: &c.account,
        acknowledged: c.state == "acked",
        after_snooze: c.after_snooze(),
        allowed_mentions: Mentions { parse: [] },
        attempt: c.attempts + 1,
        calendar: &c.calendar,
        text: super::chat::slack_escaped(&sentence),
        content: sentence,
        due: kairos_proto::utc::format(&from_ms(c.due_ms)),
        key: &c.key,
    }
}

/// The delivery's body as a JSON value (the e-mail channel's input): the
/// fields of [`Head`] and `reminder`, the stored payload (`null` if it is
/// not JSON).
#[must_use]
pub fn body(c: &Claimed) -> serde_json::Value {
    let mut v = serde_json::to_value(head(c)).unwrap_or_default();
    if let serde_json::Value::Object(m) = &mut v {
        let payload = serde_json::from_str(&c.payload).unwrap_or(serde_json::Value::Null);
        m.insert("reminder".into(), payload);
    }
    v
}

/// The webhook's body: the same JSON as [`body`] (the same fields and
/// values), written without building a value: the head serialized, then
/// the stored payload copied as it is (it is JSON the planner wrote with
/// `serde_json`; checked, without allocating, to be one JSON value, else
/// `null` as in [`body`]). Its keys keep the order they were stored in
/// rather than being sorted; the signature covers these exact bytes.
#[must_use]
pub fn body_bytes(c: &Claimed) -> Vec<u8> {
    let payload = c.payload.trim();
    let payload =
        if serde_json::from_str::<serde::de::IgnoredAny>(payload).is_ok() && !payload.is_empty() {
            payload
        } else {
            "null"
        };
    let mut out = Vec::with_capacity(160 + c.account.len() + c.key.len() + payload.len());
    if serde_json::to_writer(&mut out, &head(c)).is_err() || out.pop() != Some(b'}') {
        return serde_json::to_vec(&body(c)).unwrap_or_default();
    }
    out.extend_from_slice(b",\"reminder\":");
    out.extend_from_slice(payload.as_bytes());
    out.push(b'}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claimed(payload: &str) -> Claimed {
        Claimed {
            account: "alice".into(),
            key: "k\"1".into(),
            channel: "webhook".into(),
            attempts: 2,
            always: false,
            due_ms: 1_765_000_000_000,
            target: "http://127.0.0.1:1/".into(),
            secret: Some("s".into()),
            payload: payload.into(),
            state: "acked".into(),
            calendar: "cal".into(),
            deliver_ms: 0,
            next_ms: 0,
            rank: 10,
            round: 0,
        }
    }

    #[test]
    fn the_webhook_body_is_the_value_the_email_gets() {
        for payload in [
            r#"{"summary":"Talk \u00e9 \"x\"","at":[1,2.5,null],"z":{"b":1,"a":2}}"#,
            " {} ",
            "not json",
            "",
            r#"{"a":1} trailing"#,
        ] {
            let c = claimed(payload);
            let bytes = body_bytes(&c);
            let parsed: serde_json::Value =
                serde_json::from_slice(&bytes).expect("the body is JSON");
            assert_eq!(
                parsed,
                body(&c),
                "{payload:?}: {}",
                String::from_utf8_lossy(&bytes)
            );
        }
        let v = body(&claimed("{}"));
        assert_eq!(v["attempt"], 3);
        assert_eq!(v["acknowledged"], true);
        assert_eq!(v["key"], "k\"1");
        assert!(v.get("after_snooze").is_none(), "the trigger's: no field");
        assert_eq!(v["allowed_mentions"], serde_json::json!({"parse": []}));
        assert_eq!(
            (v["content"].as_str(), v["text"].as_str()),
            (
                Some("Reminder: (no title). No device acknowledged it."),
                Some("Reminder: (no title). No device acknowledged it.")
            )
        );
        assert_eq!(claimed("{}").name(), "k\"1/webhook");

        let mut back = claimed(r#"{"summary":"pill"}"#);
        back.round = 1_765_003_600_000;
        let v: serde_json::Value = serde_json::from_slice(&body_bytes(&back)).expect("JSON");
        assert_eq!(v, body(&back));
        assert_eq!(v["after_snooze"], "2025-12-06T06:46:40Z");
        assert_eq!(
            back.name(),
            "k\"1/webhook/after-snooze/2025-12-06T06:46:40Z"
        );
    }
}
