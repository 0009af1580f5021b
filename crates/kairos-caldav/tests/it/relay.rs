//! A TCP relay in front of a real CalDAV server, owned by the test: it
//! passes every byte through, except that just before it forwards the
//! first `PUT` to a path it was given, it writes that path's new content to
//! the server itself with a plain `PUT` — another client's edit landing
//! between Kairos's read of the object and its conditional write, so the
//! server answers Kairos's `If-Match` with `412 Precondition Failed`.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use crate::server::request_at;

pub(crate) struct Relay {
    pub(crate) url: String,
    /// The paths whose edit was made, in order.
    pub(crate) fired: Arc<Mutex<Vec<String>>>,
}

/// A relay to the server on `upstream` that makes `edits` (path, object)
/// just before Kairos's first `PUT` to each path.
pub(crate) fn relay(upstream: u16, edits: &[(String, String)]) -> Relay {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    let edits: Arc<Mutex<BTreeMap<String, String>>> =
        Arc::new(Mutex::new(edits.iter().cloned().collect()));
    let fired = Arc::new(Mutex::new(Vec::new()));
    let f = fired.clone();
    std::thread::spawn(move || {
        for client in l.incoming() {
            let Ok(client) = client else { continue };
            let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                continue;
            };
            let (edits, fired) = (edits.clone(), f.clone());
            let (c2, s2) = (
                client.try_clone().expect("clone"),
                server.try_clone().expect("clone"),
            );
            std::thread::spawn(move || pump_back(s2, c2));
            std::thread::spawn(move || pump_up(client, server, upstream, &edits, &fired));
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

/// Client to server; a chunk that starts a `PUT` to a path in `edits`
/// first makes that edit (once).
fn pump_up(
    mut from: TcpStream,
    mut to: TcpStream,
    upstream: u16,
    edits: &Mutex<BTreeMap<String, String>>,
    fired: &Mutex<Vec<String>>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let chunk = &buf[..n];
        if let Some(rest) = chunk.strip_prefix(b"PUT ") {
            let path = String::from_utf8_lossy(rest)
                .split(' ')
                .next()
                .unwrap_or_default()
                .to_owned();
            let edit = edits.lock().unwrap().remove(&path);
            if let Some(ics) = edit {
                let r = request_at(
                    upstream,
                    "PUT",
                    &path,
                    &[("Content-Type", "text/calendar")],
                    ics.as_bytes(),
                );
                assert!(
                    r.status == 201 || r.status == 204,
                    "relay PUT {path}: {}",
                    r.status
                );
                fired.lock().unwrap().push(path);
            }
        }
        if to.write_all(chunk).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}
