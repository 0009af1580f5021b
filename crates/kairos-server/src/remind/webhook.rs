//! The webhook channel: a JSON POST signed with HMAC-SHA256, and how its
//! failures are classified.
//!
//! Headers (documented in README, "Running it for many people"):
//! - `Kairos-Timestamp`: Unix seconds when the request was signed;
//! - `Kairos-Signature`: `v1=` + hex HMAC-SHA256, keyed by the account's
//!   secret, over `TIMESTAMP.BODY` (the timestamp, a dot, the exact body
//!   bytes), so a receiver can refuse old replays;
//! - `Kairos-Delivery`: `ACCOUNT/KEY/CHANNEL` (with `/after-snooze/T` for
//!   a snooze's return), the same on every attempt and on every instance:
//!   the receiver's idempotency key.

use std::time::Duration;

use sha2::{Digest, Sha256};

/// How long one POST may take. Far below the claim's lease, so a live
/// instance never has its claim taken over mid-request.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// What became of one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Delivered (2xx).
    Sent,
    /// Worth retrying: a timeout, a refused connection, 408, 429, 5xx.
    Retryable(String),
    /// Retrying cannot help: a bad URL, another 4xx.
    Permanent(String),
}

/// HMAC-SHA256 (RFC 2104) of `msg` under `key`.
#[must_use]
pub fn hmac_sha256(key: &[u8], msg: &[u8]) -> [u8; 32] {
    hmac_sha256_of(key, &[msg])
}

/// HMAC-SHA256 of the concatenation of `parts` (not copied together).
fn hmac_sha256_of(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut k = [0u8; BLOCK];
    if key.len() > BLOCK {
        k[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| k.map(|b| b ^ byte);
    let mut inner = Sha256::new().chain_update(pad(0x36));
    for part in parts {
        inner.update(part);
    }
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner.finalize())
        .finalize()
        .into()
}

/// The `Kairos-Signature` value for `body` signed at `timestamp`.
#[must_use]
pub fn signature(secret: &str, timestamp: i64, body: &[u8]) -> String {
    signature_at(secret, &timestamp.to_string(), body)
}

/// [`signature`] with the timestamp as written in `Kairos-Timestamp`: the
/// MAC over its digits, a dot and the body, hashed in place (no copy of
/// the body), hex-encoded into one string.
fn signature_at(secret: &str, timestamp: &str, body: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mac = hmac_sha256_of(secret.as_bytes(), &[timestamp.as_bytes(), b".", body]);
    let mut out = String::with_capacity(3 + 2 * mac.len());
    out.push_str("v1=");
    for b in mac {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 15)]));
    }
    out
}

/// The HTTP client every webhook is posted with.
#[derive(Clone)]
pub struct Poster {
    client: reqwest::Client,
}

impl Poster {
    /// A client with rustls (ring) and the web's roots.
    ///
    /// # Errors
    /// The TLS configuration or the client cannot be built.
    pub fn new() -> Result<Self, String> {
        Self::with_ca(None)
    }

    /// A client trusting the web's roots and the CA certificates in
    /// `ca_pem` (an operator's own CA, for webhooks inside their network;
    /// a receiver presenting one of them itself, self-signed, too): the
    /// trust of `kairos sync join --ca` (kairos-tls).
    ///
    /// # Errors
    /// A CA text that holds no usable certificate (named), or the client
    /// cannot be built.
    pub fn with_ca(ca_pem: Option<&str>) -> Result<Self, String> {
        let tls = kairos_tls::client_config(ca_pem)?;
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .redirect(reqwest::redirect::Policy::none())
            .timeout(TIMEOUT)
            .user_agent(concat!("kairos-server/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Self { client })
    }

    /// POSTs `body` to `url`, signed with `secret` at `timestamp`.
    pub async fn post(
        &self,
        url: &str,
        secret: &str,
        delivery: &str,
        timestamp: i64,
        body: Vec<u8>,
    ) -> Outcome {
        let Ok(parsed) = reqwest::Url::parse(url) else {
            return Outcome::Permanent(format!("{url:?} is not a URL"));
        };
        if !matches!(parsed.scheme(), "http" | "https") {
            return Outcome::Permanent(format!("{url:?} is not http(s)"));
        }
        let timestamp = timestamp.to_string();
        let sig = signature_at(secret, &timestamp, &body);
        let sent = self
            .client
            .post(parsed)
            .header("content-type", "application/json")
            .header("kairos-timestamp", timestamp)
            .header("kairos-signature", sig)
            .header("kairos-delivery", delivery)
            .body(body)
            .send()
            .await;
        match sent {
            Ok(r) if r.status().is_success() => Outcome::Sent,
            Ok(r) => classify(r.status().as_u16()),
            Err(e) if e.is_builder() => Outcome::Permanent(format!("request: {e}")),
            // Refused by the trust (expired, another name, an unknown CA):
            // no retry minutes later changes that; say what is wrong.
            Err(e) => match kairos_tls::refused_certificate(&e) {
                Some(problem) => Outcome::Permanent(format!("TLS: {problem}")),
                None => Outcome::Retryable(format!("{e}")),
            },
        }
    }
}

/// 408, 425, 429 and 5xx may pass later; any other status will not.
#[must_use]
pub fn classify(status: u16) -> Outcome {
    let why = format!("HTTP {status}");
    if matches!(status, 408 | 425 | 429) || status >= 500 {
        Outcome::Retryable(why)
    } else {
        Outcome::Permanent(why)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn hmac_matches_rfc_4231() {
        // Test case 2.
        assert_eq!(
            hex(&hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // Test case 6: a key longer than the block.
        assert_eq!(
            hex(&hmac_sha256(
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn the_signature_is_the_hmac_of_timestamp_dot_body() {
        // Python: hmac.new(b"s3cret", b"1700000000." + body, sha256).
        assert_eq!(
            signature("s3cret", 1_700_000_000, br#"{"a":1}"#),
            "v1=1698a50bc74d1ff1db85c4e0a5297c2ad9fdba245d5737cdb789e4cc6e098940"
        );
    }

    #[test]
    fn statuses_are_classified() {
        assert!(matches!(classify(503), Outcome::Retryable(_)));
        assert!(matches!(classify(429), Outcome::Retryable(_)));
        assert!(matches!(classify(404), Outcome::Permanent(_)));
        assert!(matches!(classify(400), Outcome::Permanent(_)));
    }
}
