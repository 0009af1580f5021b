//! The e-mail channel: lettre over SMTP to the relay named by `--smtp`,
//! STARTTLS when the relay offers it (rustls with ring and the web's
//! roots), plain otherwise (a relay on the same host). 4xx replies and
//! connection failures are retryable, 5xx permanent.

use std::time::Duration;

use lettre::message::Mailbox;
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use super::webhook::Outcome;

/// How long one SMTP conversation may take (below the claim's lease).
const TIMEOUT: Duration = Duration::from_secs(20);

/// An SMTP relay and the sender address.
pub struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl Mailer {
    /// A relay from `smtp://[user:pass@]host[:port]` (port 25 by default)
    /// sending as `from`.
    ///
    /// # Errors
    /// The URL or the address does not parse, or TLS cannot be set up.
    pub fn new(url: &str, from: &str) -> Result<Self, String> {
        let rest = url
            .strip_prefix("smtp://")
            .ok_or_else(|| format!("SMTP relay {url:?} must start with smtp://"))?;
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
            None => (hostport, 25),
        };
        if host.is_empty() {
            return Err(format!("SMTP relay {url:?} names no host"));
        }
        let tls = TlsParameters::new_rustls(host.to_owned()).map_err(|e| e.to_string())?;
        let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(host)
            .port(port)
            .tls(Tls::Opportunistic(tls))
            .timeout(Some(TIMEOUT));
        if let Some(auth) = auth {
            let (user, pass) = auth.split_once(':').unwrap_or((auth, ""));
            builder = builder.credentials(Credentials::new(user.to_owned(), pass.to_owned()));
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
            Err(e) => Outcome::Retryable(format!("SMTP: {e}")),
        }
    }
}
