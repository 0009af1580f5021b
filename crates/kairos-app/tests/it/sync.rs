//! Settings → Sync through the app's API against the real server
//! (`kairos_server::run` on 127.0.0.1:0), and each kind of bad server:
//! a garbage URL, a port nobody listens on, a web server that is not
//! Kairos, a listener that never answers, a certificate nobody trusts, a
//! revoked device. Every failure leaves what is stored as it was.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kairos_app::api::{ErrorKind, JoinRequest, RangeQuery};
use kairos_app::sync_account::LIMIT;
use kairos_app::{App, SyncAccounts};

use crate::{app, cal, create, draft, t};

const NOW: &str = "2026-03-09T08:00:00Z";

/// The server on a thread and runtime of its own; stops when dropped.
struct Server {
    url: String,
    data: tempfile::TempDir,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    fn start(tls: Option<Arc<rustls::ServerConfig>>) -> Self {
        let data = tempfile::tempdir().expect("should work");
        let listener = TcpListener::bind("127.0.0.1:0").expect("should work");
        listener.set_nonblocking(true).expect("should work");
        let addr = listener.local_addr().expect("should work");
        let scheme = if tls.is_some() { "wss" } else { "ws" };
        let mut config = kairos_server::Config::new(data.path().join("data"));
        config.tls = tls;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("should work");
            rt.block_on(async {
                let listener = tokio::net::TcpListener::from_std(listener).expect("should work");
                let _ = kairos_server::run(listener, config, async {
                    let _ = stopped.await;
                })
                .await;
            });
        });
        Self {
            url: format!("{scheme}://{addr}"),
            data,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// A one-time code for account `alice`, valid `ttl`.
    fn invite_for(&self, ttl: Duration) -> String {
        kairos_server::Store::invite(&self.data.path().join("data"), "alice", ttl)
            .expect("should work")
            .code
    }

    fn invite(&self) -> String {
        self.invite_for(Duration::from_secs(900))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn join(server: &str, code: &str, name: &str) -> JoinRequest {
    JoinRequest {
        server: server.into(),
        code: code.into(),
        device_name: name.into(),
    }
}

/// An app on a fresh database holding one event, and its Settings → Sync.
fn device() -> (App, SyncAccounts, tempfile::TempDir) {
    let (mut a, dir, path) = app("Europe/Berlin", NOW);
    let c = cal(&a);
    create(
        &mut a,
        draft(
            c,
            "Dentist",
            "2026-03-10T09:00",
            "2026-03-10T10:00",
            "Europe/Berlin",
        ),
        NOW,
    );
    (a, SyncAccounts::new(&path), dir)
}

fn titles(a: &App) -> Vec<String> {
    let q = RangeQuery {
        from: "2026-03-09T00:00".into(),
        to: "2026-03-16T00:00".into(),
        per_day: None,
    };
    a.occurrences(&q)
        .expect("should work")
        .items
        .into_iter()
        .map(|o| o.title)
        .collect()
}

/// The join failed with `kind`, and nothing was stored: not paired, the
/// event still there.
fn refused(a: &App, acc: &SyncAccounts, req: &JoinRequest, kind: ErrorKind) -> String {
    let e = acc.join(req, t(NOW)).expect_err("should fail");
    assert_eq!(e.kind, kind, "{}: {}", req.server, e.message);
    assert!(!acc.account().expect("should work").paired);
    assert_eq!(titles(a), ["Dentist"]);
    e.message
}

#[test]
fn join_pair_devices_revoke_and_leave_through_the_app() {
    let server = Server::start(None);
    let (a, laptop, _d1) = device();
    assert!(!laptop.account().expect("should work").paired);
    let joined = laptop
        .join(&join(&server.url, &server.invite(), "Laptop"), t(NOW))
        .expect("should work");
    assert!(joined.paired);
    assert_eq!(joined.account.as_deref(), Some("alice"));
    assert_eq!(joined.device_name.as_deref(), Some("Laptop"));
    assert_eq!(joined.server.as_deref(), Some(server.url.as_str()));

    // "Add a device": a code, its expiry, and a QR of the link.
    let code = laptop.pair().expect("should work");
    assert!(t(&code.expires_at) > t(NOW), "{}", code.expires_at);
    assert!(
        code.link
            .starts_with("kairos://join?server=ws%3A%2F%2F127.0.0.1%3A")
    );
    assert!(code.link.ends_with(&format!("&code={}", code.code)));
    assert!(code.qr_svg.contains("<svg"), "{}", code.qr_svg);

    // A second device joins with it (a bare HOST:PORT is ws://).
    let (_b, desktop, _d2) = device();
    let bare = server.url.trim_start_matches("ws://");
    desktop
        .join(&join(bare, &code.code, "Desktop 书房"), t(NOW))
        .expect("should work");
    let list = desktop.devices().expect("should work");
    let names: Vec<(&str, bool)> = list
        .iter()
        .map(|d| (d.name.as_str(), d.this_device))
        .collect();
    assert_eq!(names, [("Desktop 书房", true), ("Laptop", false)]);
    assert!(list.iter().all(|d| !d.revoked && !d.created_at.is_empty()));

    // This device is not revoked from the list: Leave is for that.
    let me = list[0].device.clone();
    assert_eq!(
        desktop.revoke(&me).expect_err("should fail").kind,
        ErrorKind::Invalid
    );
    // The desktop revokes the laptop: the laptop is told so, in its words.
    desktop.revoke(&list[1].device).expect("should work");
    assert!(desktop.devices().expect("should work")[1].revoked);
    let e = laptop.devices().expect_err("should fail");
    assert_eq!(e.kind, ErrorKind::SyncRevoked, "{}", e.message);
    assert_eq!(
        laptop.pair().expect_err("should fail").kind,
        ErrorKind::SyncRevoked
    );
    // A revoked device can still leave (the server has nothing more to
    // hear), and keeps its events.
    let left = laptop.leave(false).expect("should work");
    assert!(!left.paired && left.device_name.is_none());
    assert_eq!(titles(&a), ["Dentist"]);
    assert_eq!(
        laptop.devices().expect_err("should fail").kind,
        ErrorKind::SyncNotPaired
    );
    // Joining twice is refused before any network.
    let again = desktop
        .join(&join(&server.url, "x", ""), t(NOW))
        .expect_err("should fail");
    assert_eq!(again.kind, ErrorKind::SyncAlreadyPaired);
}

#[test]
fn wrong_used_and_expired_codes_each_say_so_and_store_nothing() {
    let server = Server::start(None);
    let (_first, first_acc, _d) = device();
    let used = server.invite();
    first_acc
        .join(&join(&server.url, &used, "first"), t(NOW))
        .expect("should work");
    let expired = server.invite_for(Duration::ZERO);
    let (a, acc, _d2) = device();
    for (code, kind) in [
        ("0000-0000-0000", ErrorKind::SyncCodeWrong),
        (used.as_str(), ErrorKind::SyncCodeUsed),
        (expired.as_str(), ErrorKind::SyncCodeExpired),
    ] {
        refused(&a, &acc, &join(&server.url, code, "x"), kind);
    }
    let e = refused(&a, &acc, &join(&server.url, "  ", "x"), ErrorKind::Invalid);
    assert!(e.starts_with("code:"), "{e}");
    let e = refused(&a, &acc, &join("", "c", "x"), ErrorKind::Invalid);
    assert!(e.starts_with("server:"), "{e}");
}

#[test]
fn a_garbage_url_and_a_port_nobody_listens_on() {
    let (a, acc, _d) = device();
    for url in ["http://example.org", "ws://bad host name:1", "ws://"] {
        refused(&a, &acc, &join(url, "c", "x"), ErrorKind::SyncBadUrl);
    }
    let free = TcpListener::bind("127.0.0.1:0")
        .expect("should work")
        .local_addr()
        .expect("should work");
    let msg = refused(
        &a,
        &acc,
        &join(&format!("ws://{free}"), "c", "x"),
        ErrorKind::SyncUnreachable,
    );
    assert!(msg.contains(&free.to_string()), "{msg}");
}

/// A web server on 127.0.0.1 that answers every request with `reply`.
fn web_server(reply: &'static str) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").expect("should work");
    let addr = l.local_addr().expect("should work");
    std::thread::spawn(move || {
        for mut s in l.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let _ = s.write_all(reply.as_bytes());
        }
    });
    addr
}

#[test]
fn a_server_that_is_not_kairos_is_named_so() {
    let (a, acc, _d) = device();
    let page = web_server(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 26\r\nConnection: close\r\n\r\n<html><h1>Hello</h1></html>",
    );
    let msg = refused(
        &a,
        &acc,
        &join(&format!("ws://{page}"), "c", "x"),
        ErrorKind::SyncNotKairos,
    );
    assert!(!msg.contains("<html>"), "the page is not shown: {msg}");
    let not_http = web_server("SSH-2.0-OpenSSH_9.2\r\n");
    refused(
        &a,
        &acc,
        &join(&format!("ws://{not_http}"), "c", "x"),
        ErrorKind::SyncNotKairos,
    );
}

#[test]
fn a_server_that_accepts_and_never_answers_ends_within_the_limit() {
    let (a, acc, _d) = device();
    let silent = TcpListener::bind("127.0.0.1:0").expect("should work");
    let url = format!("ws://{}", silent.local_addr().expect("should work"));
    // Connections are accepted by the kernel (the backlog) and never read.
    let started = Instant::now();
    refused(&a, &acc, &join(&url, "c", "x"), ErrorKind::SyncTimeout);
    let took = started.elapsed();
    assert!(took <= LIMIT + Duration::from_secs(2), "took {took:?}");
    drop(silent);
}

fn tls_server() -> (Server, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("should work");
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()]).expect("should work");
    let (c, k) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&c, cert.cert.pem()).expect("should work");
    std::fs::write(&k, cert.signing_key.serialize_pem()).expect("should work");
    let config = kairos_server::load_tls(&c, &k).expect("should work");
    (Server::start(Some(config)), dir)
}

#[test]
fn a_certificate_nobody_trusts_is_named_so() {
    let (server, _certs) = tls_server();
    assert!(server.url.starts_with("wss://"));
    let (a, acc, _d) = device();
    let msg = refused(
        &a,
        &acc,
        &join(&server.url, &server.invite(), "x"),
        ErrorKind::SyncTls,
    );
    assert!(msg.to_lowercase().contains("certificate"), "{msg}");
}

#[test]
fn leave_with_the_server_gone_keeps_the_pairing_unless_forced() {
    let (a, acc, _d) = device();
    {
        let server = Server::start(None);
        acc.join(&join(&server.url, &server.invite(), "x"), t(NOW))
            .expect("should work");
    }
    let e = acc.leave(false).expect_err("should fail");
    assert_eq!(e.kind, ErrorKind::SyncUnreachable, "{}", e.message);
    assert!(
        acc.account().expect("should work").paired,
        "nothing changed"
    );
    assert!(!acc.leave(true).expect("should work").paired);
    assert_eq!(titles(&a), ["Dentist"]);
}
