//! The reminder task of a serving instance: its settings and its start.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::Reminders;
use super::email::Mailer;
use super::webhook::Poster;
use super::worker::{Channels, Options};
use crate::store::Database;

/// The server's reminder settings.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Run the reminder task at all.
    pub enabled: bool,
    /// The SMTP relay, `smtp://[user:pass@]host[:port]`.
    pub smtp: Option<String>,
    /// The sender of reminder e-mails.
    pub mail_from: String,
    /// CA certificates (PEM) webhook receivers are trusted by, besides the
    /// web's roots.
    pub webhook_ca: Option<String>,
    /// The relay's password and CA certificates, beside its URL.
    pub relay: super::email::Relay,
    /// See [`Options::lease`].
    pub lease: Duration,
    /// See [`Options::poll`].
    pub poll: Duration,
    /// See [`Options::concurrency`].
    pub concurrency: usize,
    /// See [`Options::batch`].
    pub batch: usize,
    /// See [`Options::limits`].
    pub limits: super::gate::Limits,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            enabled: true,
            smtp: None,
            mail_from: "Kairos <kairos@localhost>".into(),
            webhook_ca: None,
            relay: super::email::Relay::default(),
            lease: Duration::from_secs(60),
            poll: Duration::from_secs(1),
            concurrency: 32,
            batch: 200,
            limits: super::gate::Limits::default(),
        }
    }
}

/// A running reminder task; [`Task::stop`] ends it.
pub struct Task {
    stop: watch::Sender<bool>,
    handle: JoinHandle<()>,
}

impl Task {
    /// Stops the task after its current round.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.handle.await;
    }
}

/// This instance's name: host, process and a random part.
fn owner() -> String {
    let mut r = [0u8; 4];
    let _ = getrandom::fill(&mut r);
    let host = std::fs::read_to_string("/etc/hostname").unwrap_or_default();
    format!(
        "{}-{}-{:08x}",
        host.trim(),
        std::process::id(),
        u32::from_le_bytes(r)
    )
}

/// Starts the task on `db`, reporting to `metrics`, or says why not.
///
/// The webhook client and the SMTP relay (if any) `settings` name.
///
/// # Errors
/// A relay URL, sender or CA text that does not parse.
pub fn channels(settings: &Settings) -> Result<Channels, String> {
    let mailer = match &settings.smtp {
        Some(url) => Some(Arc::new(Mailer::with(
            url,
            &settings.mail_from,
            &settings.relay,
        )?)),
        None => None,
    };
    Ok(Channels {
        poster: Poster::with_ca(settings.webhook_ca.as_deref())?,
        mailer,
    })
}

/// # Errors
/// The store cannot be opened, or the channels cannot be set up.
pub async fn start(
    settings: &Settings,
    db: &Database,
    metrics: Arc<crate::metrics::Metrics>,
) -> Result<Option<Task>, String> {
    if !settings.enabled {
        return Ok(None);
    }
    let reminders = Reminders::open(db)
        .await
        .map_err(|e| e.to_string())?
        .with_metrics(metrics);
    let channels = channels(settings)?;
    let mut opts = Options::new(owner());
    opts.lease = settings.lease;
    opts.poll = settings.poll;
    opts.concurrency = settings.concurrency.max(1);
    opts.batch = settings.batch.max(1);
    opts.limits = settings.limits;
    tracing::info!(owner = %opts.owner, "reminders: draining the queue");
    let (stop, rx) = watch::channel(false);
    let handle = tokio::spawn(reminders.run(opts, channels, rx));
    Ok(Some(Task { stop, handle }))
}
