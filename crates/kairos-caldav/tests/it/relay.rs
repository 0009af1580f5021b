//! A TCP relay in front of a real CalDAV server, owned by the test: it
//! passes every byte through, except that just before it forwards the
//! first `PUT` to a path it was given, it writes that path's new content to
//! the server itself with a plain `PUT` — another client's edit landing
//! between Kairos's read of the object and its conditional write, so the
//! server answers Kairos's `If-Match` with `412 Precondition Failed`.
//! Or ([`relay_between_multigets`]): just before it forwards the second
//! `calendar-multiget`, it edits an object the first one fetched — a change
//! landing during a sync, after Kairos read that object.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// Looks at each chunk the client sends, before it is forwarded.
type Hook = Arc<dyn Fn(&[u8]) + Send + Sync>;

use crate::server::request_at;

pub(crate) struct Relay {
    pub(crate) url: String,
    /// The paths whose edit was made, in order.
    pub(crate) fired: Arc<Mutex<Vec<String>>>,
}

/// A relay to the server on `upstream` that makes `edits` (path, object)
/// just before Kairos's first `PUT` to each path.
pub(crate) fn relay(upstream: u16, edits: &[(String, String)]) -> Relay {
    let edits: Mutex<BTreeMap<String, String>> = Mutex::new(edits.iter().cloned().collect());
    let fired = Arc::new(Mutex::new(Vec::new()));
    let f = fired.clone();
    let hook = move |chunk: &[u8]| {
        let Some(rest) = chunk.strip_prefix(b"PUT ") else {
            return;
        };
        let path = String::from_utf8_lossy(rest)
            .split(' ')
            .next()
            .unwrap_or_default()
            .to_owned();
        let edit = edits.lock().unwrap().remove(&path);
        if let Some(ics) = edit {
            put(upstream, &path, &ics);
            f.lock().unwrap().push(path);
        }
    };
    start(upstream, Arc::new(hook), fired)
}

/// A relay to the server on `upstream` that, just before the second
/// `calendar-multiget` reaches the server, writes `edit(href)` to the
/// first object the first one asked for (once).
pub(crate) fn relay_between_multigets(
    upstream: u16,
    edit: impl Fn(&str) -> String + Send + Sync + 'static,
) -> Relay {
    const OPEN: &str = "<C:calendar-multiget ";
    // Everything sent so far, over every connection (requests of one sync
    // are sequential).
    let sent = Mutex::new(String::new());
    let fired = Arc::new(Mutex::new(Vec::new()));
    let f = fired.clone();
    let hook = move |chunk: &[u8]| {
        let mut sent = sent.lock().unwrap();
        let before = sent.matches(OPEN).count();
        sent.push_str(&String::from_utf8_lossy(chunk));
        if before >= 2 || sent.matches(OPEN).count() < 2 {
            return;
        }
        let first = &sent[sent.find(OPEN).expect("a first multiget")..];
        let href = first
            .split_once("<D:href>")
            .and_then(|(_, r)| r.split_once("</D:href>"))
            .expect("the first multiget names an object")
            .0
            .to_owned();
        put(upstream, &href, &edit(&href));
        f.lock().unwrap().push(href);
    };
    start(upstream, Arc::new(hook), fired)
}

/// A plain `PUT` of `ics` to `path`, straight to the server.
fn put(upstream: u16, path: &str, ics: &str) {
    let r = request_at(
        upstream,
        "PUT",
        path,
        &[("Content-Type", "text/calendar")],
        ics.as_bytes(),
    );
    assert!(
        r.status == 201 || r.status == 204,
        "relay PUT {path}: {}",
        r.status
    );
}

fn start(upstream: u16, hook: Hook, fired: Arc<Mutex<Vec<String>>>) -> Relay {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for client in l.incoming() {
            let Ok(client) = client else { continue };
            let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                continue;
            };
            let hook = hook.clone();
            let (c2, s2) = (
                client.try_clone().expect("clone"),
                server.try_clone().expect("clone"),
            );
            std::thread::spawn(move || pump_back(s2, c2));
            std::thread::spawn(move || pump_up(client, server, &*hook));
        }
    });
    Relay {
        url: format!("http://127.0.0.1:{port}/"),
        fired,
    }
}

/// Server to client, as it comes.
fn pump_back(mut from: TcpStream, mut to: TcpStream) {
    let _ = std::io::copy(&mut from, &mut to);
    let _ = to.shutdown(Shutdown::Write);
}

/// Client to server, each chunk shown to `hook` before it is forwarded.
fn pump_up(mut from: TcpStream, mut to: TcpStream, hook: &(dyn Fn(&[u8]) + Send + Sync)) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let chunk = &buf[..n];
        hook(chunk);
        if to.write_all(chunk).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}
