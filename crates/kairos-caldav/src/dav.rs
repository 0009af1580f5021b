//! The network side: libdav's CalDAV client over hyper (rustls with ring,
//! the web's roots plus the account's own CA, if it has one: kairos-tls),
//! Basic authentication, a bound on every request, and
//! libdav's errors turned into [`CaldavError`]s that say what to do.
//!
//! Blocking API over a private current-thread runtime: the callers hold a
//! SQLite store, which must not be used on an async worker (STYLE.md), so
//! every network step is one `block_on` and the store is used between them.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use base64::Engine as _;
use http::{HeaderValue, Request, Response, StatusCode, Uri};
use hyper::body::Incoming;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::{Client, ResponseFuture};
use hyper_util::rt::TokioExecutor;
use libdav::dav::{RequestError, WebDavClient, WebDavError};
use libdav::{CalDavClient, FetchedResource};

use crate::error::{CaldavError, Result};

/// Every request must finish within this (discovery makes several).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// Objects asked for per `calendar-multiget`. Measured on Radicale 3.9
/// with 5,000 events (docs/benchmarks.md, CalDAV): its CPU for fetching
/// them all is 0.81 s in batches of 50, 0.70 s of 100, 0.58 s of 250 and
/// 0.53–0.55 s of 500 to 5,000; 250 keeps an answer of large events to a
/// few megabytes within [`REQUEST_TIMEOUT`] on a slow server.
pub const MULTIGET_BATCH: usize = 250;

type Inner = Client<hyper_rustls::HttpsConnector<HttpConnector>, String>;

/// The HTTP client with the `Authorization` header added to each request.
#[derive(Clone)]
pub struct Authed {
    inner: Inner,
    auth: HeaderValue,
    /// Requests sent, for reports and benchmarks (round trips count).
    sent: Arc<AtomicUsize>,
}

impl tower_service::Service<Request<String>> for Authed {
    type Response = Response<Incoming>;
    type Error = hyper_util::client::legacy::Error;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<String>) -> Self::Future {
        req.headers_mut()
            .insert(http::header::AUTHORIZATION, self.auth.clone());
        self.sent.fetch_add(1, Ordering::Relaxed);
        self.inner.call(req)
    }
}

/// One server, one user: the libdav client and the runtime it runs on.
pub struct Dav {
    rt: tokio::runtime::Runtime,
    sent: Arc<AtomicUsize>,
    /// The CalDAV client (its base URL moves to the context path found).
    pub client: CalDavClient<Authed>,
    user: String,
}

/// Parses a URL given by a person: `https://host/path`, `http://…`, or a
/// bare host or e-mail address (`https://` is assumed; the domain of an
/// address is used).
///
/// # Errors
/// Text that is not a URL.
pub fn parse_url(text: &str) -> Result<Uri> {
    let t = text.trim();
    let t = match t.rsplit_once('@') {
        Some((_, domain)) if !t.contains("://") => domain.to_owned(),
        _ => t.to_owned(),
    };
    let full = if t.contains("://") {
        t
    } else {
        format!("https://{t}")
    };
    let uri: Uri = full
        .parse()
        .map_err(|e: http::uri::InvalidUri| CaldavError::BadUrl {
            url: text.to_owned(),
            reason: e.to_string(),
        })?;
    match uri.scheme_str() {
        Some("http" | "https") if uri.host().is_some() => Ok(uri),
        _ => Err(CaldavError::BadUrl {
            url: text.to_owned(),
            reason: "use an http:// or https:// URL with a host".to_owned(),
        }),
    }
}

impl Dav {
    /// A client for `base` as `user`, trusting the web's roots and
    /// `ca_pem` (the account's own CA, PEM) if given.
    ///
    /// # Errors
    /// The TLS set-up (a CA text that holds no usable certificate) or the
    /// runtime could not be made.
    pub fn new(base: Uri, user: &str, password: &str, ca_pem: Option<&str>) -> Result<Self> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| CaldavError::Secret(format!("cannot start the runtime: {e}")))?;
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_connect_timeout(Some(Duration::from_secs(15)));
        let tls = kairos_tls::client_config(ca_pem).map_err(|e| CaldavError::BadCa(e.clone()))?;
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        let inner = {
            let _guard = rt.enter();
            Client::builder(TokioExecutor::new()).build(https)
        };
        let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        let auth =
            HeaderValue::from_str(&format!("Basic {token}")).map_err(|_| CaldavError::BadUrl {
                url: base.to_string(),
                reason: "the user name or password holds characters HTTP cannot carry".into(),
            })?;
        let sent = Arc::new(AtomicUsize::new(0));
        let authed = Authed {
            inner,
            auth,
            sent: sent.clone(),
        };
        let client = CalDavClient::new(WebDavClient::new(base, authed));
        Ok(Self {
            rt,
            sent,
            client,
            user: user.to_owned(),
        })
    }

    /// The base URL (the context path once discovery moved it).
    #[must_use]
    pub fn base(&self) -> &Uri {
        &self.client.base_url
    }

    /// HTTP requests sent so far.
    #[must_use]
    pub fn requests(&self) -> usize {
        self.sent.load(Ordering::Relaxed)
    }

    /// The user name.
    #[must_use]
    pub fn user(&self) -> &str {
        &self.user
    }

    /// Runs one network step to its end, bounded by [`REQUEST_TIMEOUT`].
    ///
    /// # Errors
    /// The step's own, or a timeout naming `what`.
    pub fn run<T, E>(
        &self,
        what: &'static str,
        url: &str,
        f: impl Future<Output = std::result::Result<T, E>>,
    ) -> Result<T>
    where
        E: Into<DavFailure>,
    {
        self.rt
            .block_on(async { tokio::time::timeout(REQUEST_TIMEOUT, f).await })
            .map_err(|_| CaldavError::Network {
                url: url.to_owned(),
                reason: format!("{what} timed out after {} s", REQUEST_TIMEOUT.as_secs()),
            })?
            .map_err(|e| self.explain(what, url, e.into()))
    }

    /// Runs one network step, bounded by [`REQUEST_TIMEOUT`], handing back
    /// its own result for the caller to read.
    ///
    /// # Errors
    /// A timeout.
    pub fn run_raw<T>(&self, f: impl Future<Output = T>) -> Result<T> {
        self.rt
            .block_on(async { tokio::time::timeout(REQUEST_TIMEOUT, f).await })
            .map_err(|_| CaldavError::Network {
                url: self.base().to_string(),
                reason: format!("no answer within {} s", REQUEST_TIMEOUT.as_secs()),
            })
    }

    /// Turns a failure into the error a person can act on.
    #[must_use]
    pub fn explain(&self, what: &'static str, url: &str, f: DavFailure) -> CaldavError {
        match f {
            DavFailure::Status(s)
                if s == StatusCode::UNAUTHORIZED || s == StatusCode::FORBIDDEN =>
            {
                CaldavError::Unauthorized {
                    url: url.to_owned(),
                    user: self.user.clone(),
                    status: s.as_u16(),
                }
            }
            DavFailure::Status(s) => CaldavError::Protocol {
                what,
                url: url.to_owned(),
                reason: format!("the server answered {s}"),
            },
            DavFailure::Certificate(problem) => CaldavError::Certificate {
                url: url.to_owned(),
                problem,
            },
            DavFailure::Network(reason) => CaldavError::Network {
                url: url.to_owned(),
                reason,
            },
            DavFailure::Precondition(name) => CaldavError::Protocol {
                what,
                url: url.to_owned(),
                reason: format!("the server refused it ({name})"),
            },
            DavFailure::Other(reason) => CaldavError::Protocol {
                what,
                url: url.to_owned(),
                reason,
            },
        }
    }

    /// The calendar data and ETags of `hrefs` in `collection`
    /// (`calendar-multiget`, in batches).
    ///
    /// # Errors
    /// As [`Dav::run`].
    pub fn fetch(&self, collection: &str, hrefs: &[String]) -> Result<Vec<FetchedResource>> {
        let mut out = Vec::with_capacity(hrefs.len());
        for chunk in hrefs.chunks(MULTIGET_BATCH) {
            let req = libdav::caldav::GetCalendarResources::new(collection).with_hrefs(chunk);
            let r = self.run("calendar-multiget", collection, self.client.request(req))?;
            out.extend(r.resources);
        }
        Ok(out)
    }
}

/// A failure of one request, before it is explained.
#[derive(Debug)]
pub enum DavFailure {
    /// An HTTP status that is not success.
    Status(StatusCode),
    /// The connection (refused, reset, TLS).
    Network(String),
    /// The server's certificate was refused: what is wrong with it.
    Certificate(String),
    /// A WebDAV precondition the server reported (RFC 4918 §16), by name.
    Precondition(String),
    /// Anything else (XML that does not parse, a missing property).
    Other(String),
}

impl DavFailure {
    /// The HTTP status, when the failure is one.
    #[must_use]
    pub fn status(&self) -> Option<StatusCode> {
        match self {
            DavFailure::Status(s) => Some(*s),
            _ => None,
        }
    }
}

/// The full chain of an error's sources, for a one-line message.
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let t = c.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        cur = c.source();
    }
    s
}

impl<E: std::error::Error + 'static> From<RequestError<E>> for DavFailure {
    fn from(e: RequestError<E>) -> Self {
        match e {
            RequestError::Client(c) => kairos_tls::refused_certificate(&c)
                .map_or_else(|| DavFailure::Network(chain(&c)), DavFailure::Certificate),
            RequestError::Http(h) => DavFailure::Network(chain(h.as_ref())),
        }
    }
}

impl<E: std::error::Error + 'static> From<WebDavError<E>> for DavFailure {
    fn from(e: WebDavError<E>) -> Self {
        match e {
            WebDavError::BadStatusCode(s) => DavFailure::Status(s),
            WebDavError::Request(r) => r.into(),
            WebDavError::PreconditionFailed(p) => {
                DavFailure::Precondition(libdav::PropertyName::from(p).name().to_owned())
            }
            other => DavFailure::Other(chain(&other)),
        }
    }
}

impl<E: std::error::Error + 'static> From<libdav::dav::FindCurrentUserPrincipalError<E>>
    for DavFailure
{
    fn from(e: libdav::dav::FindCurrentUserPrincipalError<E>) -> Self {
        match e {
            libdav::dav::FindCurrentUserPrincipalError::RequestError(w) => w.into(),
            other => DavFailure::Other(chain(&other)),
        }
    }
}

impl<E: std::error::Error + 'static> From<libdav::dav::ResolveContextPathError<E>> for DavFailure {
    fn from(e: libdav::dav::ResolveContextPathError<E>) -> Self {
        match e {
            libdav::dav::ResolveContextPathError::BadStatusCode(s) => DavFailure::Status(s),
            libdav::dav::ResolveContextPathError::Request(r) => r.into(),
            other => DavFailure::Other(chain(&other)),
        }
    }
}
