//! One HTTP(S) GET of a feed, with the validators of the last good copy,
//! within explicit limits: redirects, connect and total time, body size
//! (read incrementally and stopped at the limit: a 200 MB answer is never
//! held in memory). `gzip` is accepted and decoded; the size limit applies
//! to the decoded body.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use reqwest::header::{
    CONTENT_LENGTH, CONTENT_TYPE, ETAG, HeaderMap, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED,
    RETRY_AFTER,
};
use reqwest::{StatusCode, redirect};

use crate::error::FeedError;

/// The bounds of one fetch.
#[derive(Debug, Clone)]
pub struct Limits {
    /// The largest body accepted (decoded), in bytes.
    pub max_bytes: usize,
    /// How long connecting (TCP + TLS) may take.
    pub connect_timeout: Duration,
    /// How long the whole request, body included, may take.
    pub timeout: Duration,
    /// How many redirects are followed.
    pub max_redirects: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_bytes: 32 << 20,
            connect_timeout: Duration::from_secs(10),
            timeout: Duration::from_secs(60),
            max_redirects: 5,
        }
    }
}

/// The validators of the last good body, sent back so an unchanged feed
/// answers 304.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Validators {
    /// Its `ETag`, sent as `If-None-Match`.
    pub etag: Option<String>,
    /// Its `Last-Modified`, sent as `If-Modified-Since`.
    pub last_modified: Option<String>,
}

/// What a fetch brought.
#[derive(Debug)]
pub enum Fetched {
    /// 304: the last good copy is current.
    NotModified,
    /// A 2xx body.
    Body {
        /// The decoded body.
        bytes: Vec<u8>,
        /// Its `Content-Type`, if any.
        content_type: Option<String>,
        /// Its validators, for the next fetch.
        validators: Validators,
    },
}

/// A failed fetch: why, and when the server asked to be tried again.
#[derive(Debug)]
pub struct Failure {
    /// Why.
    pub error: FeedError,
    /// `Retry-After` of a 429/503 answer, as an instant.
    pub retry_after: Option<DateTime<Utc>>,
}

impl From<FeedError> for Failure {
    fn from(error: FeedError) -> Self {
        Self {
            error,
            retry_after: None,
        }
    }
}

/// An HTTP client for feeds (keeps connections open between refreshes).
#[derive(Debug, Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    limits: Limits,
}

impl Fetcher {
    /// A client with these limits; TLS by rustls (ring) with the web's roots.
    ///
    /// # Errors
    /// The TLS configuration or the client cannot be built.
    pub fn new(limits: Limits) -> Result<Self, FeedError> {
        let mut roots = rustls::RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| FeedError::Client(e.to_string()))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .redirect(redirect::Policy::limited(limits.max_redirects))
            .connect_timeout(limits.connect_timeout)
            .timeout(limits.timeout)
            .gzip(true)
            .user_agent(concat!("Kairos/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| FeedError::Client(e.to_string()))?;
        Ok(Self { client, limits })
    }

    /// The limits it applies.
    #[must_use]
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// GETs `url` (http or https) with `v`'s validators.
    ///
    /// # Errors
    /// Each failure names its problem (see [`FeedError`]); a 429 or 503
    /// carries its `Retry-After`.
    pub async fn fetch(
        &self,
        url: &str,
        v: &Validators,
        now: DateTime<Utc>,
    ) -> Result<Fetched, Failure> {
        let mut req = self
            .client
            .get(url)
            .header("Accept", "text/calendar, */*;q=0.5");
        if let Some(etag) = &v.etag {
            req = req.header(IF_NONE_MATCH, etag);
        }
        if let Some(lm) = &v.last_modified {
            req = req.header(IF_MODIFIED_SINCE, lm);
        }
        let mut resp = req.send().await.map_err(|e| self.transport(&e))?;
        let status = resp.status();
        if status == StatusCode::NOT_MODIFIED {
            return Ok(Fetched::NotModified);
        }
        if !status.is_success() {
            let retry_after = retry_after(resp.headers(), now);
            return Err(Failure {
                error: FeedError::Status {
                    status: status.as_u16(),
                    reason: status.canonical_reason().unwrap_or("").to_owned(),
                },
                retry_after,
            });
        }
        let headers = resp.headers();
        let text = |h| {
            headers
                .get(h)
                .and_then(|v: &reqwest::header::HeaderValue| v.to_str().ok())
                .map(str::to_owned)
        };
        let content_type = text(CONTENT_TYPE);
        let validators = Validators {
            etag: text(ETAG),
            last_modified: text(LAST_MODIFIED),
        };
        let max = self.limits.max_bytes;
        // A declared length over the limit is refused before any byte is
        // read (with gzip the declared length is the compressed one, so it
        // is only a hint; the count below is the rule).
        let declared = text(CONTENT_LENGTH).and_then(|l| l.parse::<u64>().ok());
        if declared.is_some_and(|l| l > max as u64)
            && !resp.headers().contains_key("content-encoding")
        {
            return Err(FeedError::TooLarge { limit: max }.into());
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| self.transport(&e))? {
            if bytes.len() + chunk.len() > max {
                return Err(FeedError::TooLarge { limit: max }.into());
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(Fetched::Body {
            bytes,
            content_type,
            validators,
        })
    }

    fn transport(&self, e: &reqwest::Error) -> Failure {
        let error = if e.is_redirect() {
            FeedError::Redirects {
                max: self.limits.max_redirects,
            }
        } else if e.is_timeout() {
            FeedError::Timeout {
                secs: self.limits.timeout.as_secs_f64(),
            }
        } else if e.is_connect() {
            FeedError::Connect(chain(e))
        } else if e.is_decode() || e.is_body() {
            FeedError::Body(chain(e))
        } else {
            FeedError::Transport(chain(e))
        };
        error.into()
    }
}

/// An error and its causes on one line (reqwest's own message is terse).
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut src = e.source();
    while let Some(s) = src {
        let t = s.to_string();
        if !out.contains(&t) {
            out.push_str(": ");
            out.push_str(&t);
        }
        src = s.source();
    }
    out
}

/// `Retry-After`: seconds, or an HTTP date.
fn retry_after(headers: &HeaderMap, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let v = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = v.parse::<u32>() {
        return Some(now + chrono::Duration::seconds(i64::from(secs)));
    }
    DateTime::parse_from_rfc2822(v)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}
