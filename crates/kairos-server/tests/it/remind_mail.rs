//! The e-mail channel against a real SMTP server (aiosmtpd, in the venv
//! `tests/smtp/setup.sh` makes under target/): a reminder no device
//! acknowledged arrives as a message; a 4xx is retried, a 5xx abandoned.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use kairos_server::remind::email::Mailer;
use kairos_server::remind::gate::Limits;
use kairos_server::remind::webhook::Poster;
use kairos_server::remind::{Channel, Channels, Fallback, Options, Reminders};
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout, Command};

use crate::remind::{NO_TASK, at, database, series};
use crate::support::{Maker, Server, WAIT};

pub struct Sink {
    _child: Child,
    pub port: u16,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Sink {
    async fn start() -> Self {
        Self::start_with(&[]).await
    }

    /// The sink with `tests/smtp/sink.py`'s options (`--starttls`,
    /// `--smtps`, `--auth`).
    pub async fn start_with(args: &[&str]) -> Self {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let python = format!("{root}/target/smtp-pyenv/bin/python");
        assert!(
            std::path::Path::new(&python).exists(),
            "{python} is missing: run tests/smtp/setup.sh (scripts/deps.sh does)"
        );
        let mut child = Command::new(python)
            .arg(format!("{root}/tests/smtp/sink.py"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let v = Self::json(&mut lines).await;
        let port = u16::try_from(v["port"].as_u64().unwrap()).unwrap();
        Self {
            _child: child,
            port,
            lines,
        }
    }

    async fn json(lines: &mut Lines<BufReader<ChildStdout>>) -> serde_json::Value {
        let line = tokio::time::timeout(WAIT, lines.next_line())
            .await
            .expect("the SMTP sink said nothing in time")
            .unwrap()
            .unwrap();
        serde_json::from_str(&line).unwrap()
    }

    pub async fn message(&mut self) -> serde_json::Value {
        Self::json(&mut self.lines).await
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unacknowledged_reminder_is_e_mailed_and_smtp_errors_are_classified() {
    let mut sink = Sink::start().await;
    let server = Server::start(NO_TASK).await;
    let rem = Reminders::open(&database(&server)).await.unwrap();
    for (account, to) in [
        ("alice", "alice@example.org"),
        ("bob", "nobody@example.org"),
        ("carol", "retry@example.org"),
    ] {
        let (id, token) = server.device(account, "laptop").await;
        let mut dev = server.connect(&token).await;
        dev.hello(0).await;
        let mut m = Maker::new(&id);
        dev.push(&[
            m.calendar("c1", "Work"),
            m.op(series("e1", "20261206T100000Z")),
        ])
        .await;
        rem.configure(Fallback {
            account: account.into(),
            calendar: "*".into(),
            channel: Channel::Email,
            target: to.into(),
            secret: None,
            after: Duration::from_secs(600),
            always: false,
        })
        .await
        .unwrap();
    }
    assert_eq!(
        rem.replicate(at("2026-12-06T08:00:00Z"))
            .await
            .unwrap()
            .deliveries,
        3
    );
    let mailer = Mailer::new(
        &format!("smtp://127.0.0.1:{}", sink.port),
        "Kairos <kairos@example.org>",
    )
    .unwrap();
    let ch = Channels {
        poster: Poster::new().unwrap(),
        mailer: Some(Arc::new(mailer)),
    };
    let o = Options::new("test".into());
    let d = rem
        .drain(at("2026-12-06T09:55:00Z"), &o, &ch)
        .await
        .unwrap();
    assert_eq!(
        (d.claimed, d.sent, d.retried, d.abandoned),
        (3, 1, 1, 1),
        "sent, 451 retried, 550 abandoned: {d:?}"
    );
    let msg = sink.message().await;
    assert_eq!(msg["to"][0], "alice@example.org");
    let data = msg["data"].as_str().unwrap();
    assert!(data.contains("Subject: Reminder: Talk e1"), "{data}");
    assert!(
        data.contains("No device acknowledged this reminder."),
        "{data}"
    );
    // The retry 10 s later goes through.
    let d = rem
        .drain(at("2026-12-06T09:55:11Z"), &o, &ch)
        .await
        .unwrap();
    assert_eq!((d.claimed, d.sent), (1, 1), "{d:?}");
    assert_eq!(sink.message().await["to"][0], "retry@example.org");
    let key = rem.instances("bob").await.unwrap()[0].key.clone();
    let why: Vec<_> = rem
        .why(&key)
        .await
        .unwrap()
        .into_iter()
        .filter(|t| t.0 == "bob")
        .map(|t| t.2)
        .collect();
    assert!(why.last().unwrap().contains("permanent: SMTP"), "{why:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_relay_that_fails_opens_the_smtp_circuit_and_its_mails_wait() {
    let mut sink = Sink::start().await;
    let server = Server::start(NO_TASK).await;
    let rem = Reminders::open(&database(&server)).await.unwrap();
    // The first message to retry@ gets a 451: with one failure allowed,
    // the relay's circuit opens and alice's mail, next in order, waits.
    for (account, to, uid) in [
        ("carol", "retry@example.org", "a"),
        ("alice", "alice@example.org", "b"),
    ] {
        let (id, token) = server.device(account, "laptop").await;
        let mut dev = server.connect(&token).await;
        dev.hello(0).await;
        let mut m = Maker::new(&id);
        dev.push(&[
            m.calendar("c1", "Work"),
            m.op(series(uid, "20300107T100000Z")),
        ])
        .await;
        rem.configure(Fallback {
            account: account.into(),
            calendar: "*".into(),
            channel: Channel::Email,
            target: to.into(),
            secret: None,
            after: Duration::ZERO,
            always: false,
        })
        .await
        .unwrap();
    }
    rem.replicate(at("2030-01-07T08:00:00Z")).await.unwrap();
    let mailer = Mailer::new(
        &format!("smtp://127.0.0.1:{}", sink.port),
        "Kairos <kairos@example.org>",
    )
    .unwrap();
    let ch = Channels {
        poster: Poster::new().unwrap(),
        mailer: Some(Arc::new(mailer)),
    };
    let mut o = Options::new("test".into());
    o.concurrency = 1;
    o.limits = Limits {
        failures: 1,
        cooloff: Duration::from_secs(60),
        per_minute: 0,
    };
    let d = rem
        .drain(at("2030-01-07T09:45:00Z"), &o, &ch)
        .await
        .unwrap();
    assert_eq!((d.retried, d.deferred, d.sent), (1, 1, 0), "{d:?}");
    assert_eq!(rem.open_circuits(), ["smtp"]);
    let key = rem.instances("alice").await.unwrap()[0].key.clone();
    let why = rem.why(&key).await.unwrap();
    let last = &why.last().unwrap().2;
    assert!(
        last.starts_with("email deferred: destination smtp circuit open until 2030-01-07T09:46:00"),
        "{why:?}"
    );
    // The carol retry at 10 s waits too; after the minute both go.
    let d = rem
        .drain(at("2030-01-07T09:45:11Z"), &o, &ch)
        .await
        .unwrap();
    assert_eq!((d.claimed, d.deferred), (1, 1), "{d:?}");
    let d = rem
        .drain(at("2030-01-07T09:46:01Z"), &o, &ch)
        .await
        .unwrap();
    assert_eq!((d.claimed, d.sent), (2, 2), "{d:?}");
    let mut to: Vec<String> = Vec::new();
    for _ in 0..2 {
        to.push(sink.message().await["to"][0].as_str().unwrap().to_owned());
    }
    to.sort();
    assert_eq!(to, ["alice@example.org", "retry@example.org"]);
    assert!(rem.open_circuits().is_empty());
}
