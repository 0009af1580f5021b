//! The e-mail channel: lettre over SMTP to the relay named by `--smtp`.
//! `smtp://` (port 25 by default) upgrades with STARTTLS when the relay
//! offers it, and insists on it when the relay is given credentials (a
//! password is never sent in the clear); `smtps://` (port 465 by default)
//! is TLS from the first byte. rustls with ring trusts the web's roots
//! and the CA certificates of `--smtp-ca`. 4xx replies and connection
//! failures are retryable; 5xx, a relay without the STARTTLS it needs and
//! a certificate the trust refuses are permanent.

use std::time::Duration;

use lettre::message::Mailbox;
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Certificate, Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use super::webhook::Outcome;

/// How long one SMTP conversation may take (below the claim's lease).
const TIMEOUT: Duration = Duration::from_secs(20);

/// An SMTP relay and the sender address.
pub struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

/// Where and how to reach the relay, beside its URL.
#[derive(Debug, Clone, Default)]
pub struct Relay {
    /// The password (`--smtp-password-file`), for a URL that names only
    /// the user: a password in the URL is in every `ps` listing.
    pub password: Option<String>,
    /// CA certificates (PEM) the relay's certificate may chain to, besides
    /// the web's roots (`--smtp-ca`).
    pub ca_pem: Option<String>,
}

impl Mailer {
    /// A relay from `smtp://[user[:pass]@]host[:port]` or
    /// `smtps://[user[:pass]@]host[:port]` sending as `from`.
    ///
    /// # Errors
    /// The URL or the address does not parse, or TLS cannot be set up.
    pub fn new(url: &str, from: &str) -> Result<Self, String> {
        Self::with(url, from, &Relay::default())
    }

    /// [`Mailer::new`] with a password and CA certificates from files.
    ///
    /// # Errors
    /// As [`Mailer::new`]; a password both in the URL and given, a CA text
    /// that holds no certificate.
    pub fn with(url: &str, from: &str, relay: &Relay) -> Result<Self, String> {
        let (implicit, rest) = if let Some(rest) = url.strip_prefix("smtps://") {
            (true, rest)
        } else if let Some(rest) = url.strip_prefix("smtp://") {
            (false, rest)
        } else {
            return Err(format!(
                "SMTP relay {url:?} must start with smtp:// or smtps://"
            ));
        };
        let (auth, hostport) = match rest.rsplit_once('@') {
            Some((auth, hp)) => (Some(auth), hp),
            None => (None, rest),
        };
        let hostport = hostport.trim_end_matches('/');
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) => (
                h,
                p.parse::<u16>()
                    .map_err(|_| format!("SMTP relay {url:?}: port {p:?} is not a number"))?,
            ),
            None => (hostport, if implicit { 465 } else { 25 }),
        };
        if host.is_empty() {
            return Err(format!("SMTP relay {url:?} names no host"));
        }
        let credentials = match (auth.map(|a| a.split_once(':')), auth, &relay.password) {
            (Some(Some(_)), _, Some(_)) => {
                return Err(format!(
                    "SMTP relay {url:?}: a password in the URL and a password file; give one"
                ));
            }
            (Some(Some((user, pass))), _, None) => Some(Credentials::new(user.into(), pass.into())),
            (_, Some(user), Some(pass)) => Some(Credentials::new(user.into(), pass.clone())),
            (_, Some(user), None) => Some(Credentials::new(user.into(), String::new())),
            (_, None, Some(_)) => {
                return Err(format!(
                    "SMTP relay {url:?}: a password file but no user (smtp://USER@host)"
                ));
            }
            (_, None, None) => None,
        };
        let mut params = TlsParameters::builder(host.to_owned());
        if let Some(pem) = &relay.ca_pem {
            for der in kairos_tls::ca_certificates(pem)? {
                let cert = Certificate::from_der(der.to_vec()).map_err(|e| e.to_string())?;
                params = params.add_root_certificate(cert);
            }
        }
        let params = params.build_rustls().map_err(|e| e.to_string())?;
        let tls = if implicit {
            Tls::Wrapper(params)
        } else if credentials.is_some() {
            Tls::Required(params)
        } else {
            Tls::Opportunistic(params)
        };
        let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(host)
            .port(port)
            .tls(tls)
            .timeout(Some(TIMEOUT));
        if let Some(c) = credentials {
            builder = builder.credentials(c);
        }
        let from = from
            .parse::<Mailbox>()
            .map_err(|e| format!("sender {from:?}: {e}"))?;
        Ok(Self {
            transport: builder.build(),
            from,
        })
    }

    /// Sends the reminder `body` (the webhook's JSON) to `to`.
    pub async fn send(&self, to: &str, body: &serde_json::Value) -> Outcome {
        let Ok(to) = to.parse::<Mailbox>() else {
            return Outcome::Permanent(format!("{to:?} is not an e-mail address"));
        };
        let r = &body["reminder"];
        let summary = r["summary"].as_str().unwrap_or("(no title)");
        let start = r["occurrence_start"].as_str().unwrap_or("");
        let mut text = format!("{summary}\nStarts: {start}\n");
        if let Some(loc) = r["location"].as_str() {
            text.push_str(&format!("Where: {loc}\n"));
        }
        let why = match body["after_snooze"].as_str() {
            Some(t) => {
                format!("It was snoozed on a device until {t}; no device acknowledged its return.")
            }
            None => "No device acknowledged this reminder.".to_owned(),
        };
        text.push_str(&format!(
            "Calendar: {}\n\n{why}\nKey: {}\n",
            r["calendar"].as_str().unwrap_or(""),
            body["key"].as_str().unwrap_or("")
        ));
        let msg = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(format!("Reminder: {summary}"))
            .header(lettre::message::header::ContentType::TEXT_PLAIN)
            .body(text);
        let msg = match msg {
            Ok(m) => m,
            Err(e) => return Outcome::Permanent(format!("message: {e}")),
        };
        match self.transport.send(msg).await {
            Ok(_) => Outcome::Sent,
            Err(e) if e.is_permanent() => Outcome::Permanent(format!("SMTP: {e}")),
            // The relay's certificate refused, or no STARTTLS where it is
            // required: a retry minutes later changes neither.
            Err(e) => match kairos_tls::refused_certificate(&e) {
                Some(problem) => Outcome::Permanent(format!("SMTP TLS: {problem}")),
                None if e.is_client() => Outcome::Permanent(format!("SMTP: {e}")),
                None => Outcome::Retryable(format!("SMTP: {e}")),
            },
        }
    }
}
