//! Real CalDAV servers on 127.0.0.1, started per test from the venv
//! `tests/caldav/setup.sh` makes: Radicale (a free port, a temp storage
//! dir, plain htpasswd auth) and Xandikos (no auth of its own: it takes
//! any credentials), and a raw HTTP/1.1 client for what the test itself
//! writes.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use tempfile::TempDir;

pub(crate) const USER: &str = "alice";
pub(crate) const PASSWORD: &str = "s3cret-pw";

pub(crate) struct DavServer {
    /// Radicale or Xandikos.
    pub(crate) kind: &'static str,
    child: Child,
    pub(crate) port: u16,
    _dir: TempDir,
}

fn python() -> PathBuf {
    let venv = std::env::var("KAIROS_CALDAV_PYENV").map_or_else(
        |_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/caldav-pyenv"),
        PathBuf::from,
    );
    let p = venv.join("bin/python");
    assert!(
        p.exists(),
        "{} is missing: run tests/caldav/setup.sh (or `make caldav`) first",
        p.display()
    );
    p
}

fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

impl DavServer {
    /// Starts Radicale and returns once it listens (it says so on stderr;
    /// bounded by 60 s).
    pub(crate) fn radicale() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let port = free_port();
        let users = dir.path().join("users");
        std::fs::write(&users, format!("{USER}:{PASSWORD}\n")).expect("users");
        let config = dir.path().join("config");
        std::fs::write(
            &config,
            format!(
                "[server]\nhosts = 127.0.0.1:{port}\n[auth]\ntype = htpasswd\n\
                 htpasswd_filename = {}\nhtpasswd_encryption = plain\n[storage]\n\
                 filesystem_folder = {}\n[logging]\nlevel = info\n",
                users.display(),
                dir.path().join("collections").display()
            ),
        )
        .expect("config");
        let mut cmd = Command::new(python());
        cmd.args(["-m", "radicale", "--config"]).arg(&config);
        Self::spawn("radicale", cmd, port, dir)
    }

    /// Starts Radicale over HTTPS with a certificate for 127.0.0.1 that a
    /// CA of the test's own signed, with calendar "Work" (`/alice/work/`)
    /// holding `objects` (file name, iCalendar text), written to its
    /// storage before it starts (the test's plain HTTP client cannot speak
    /// TLS). Returns the server and the CA certificate (PEM).
    pub(crate) fn radicale_tls(objects: &[(&str, &str)]) -> (Self, String) {
        let ca_key = rcgen::KeyPair::generate().expect("CA key");
        let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA params");
        ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca.distinguished_name
            .push(rcgen::DnType::CommonName, "Kairos test private CA");
        let ca = rcgen::CertifiedIssuer::self_signed(ca, ca_key).expect("CA");
        let key = rcgen::KeyPair::generate().expect("key");
        let leaf = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()])
            .expect("params")
            .signed_by(&key, &ca)
            .expect("leaf");
        let server = Self::radicale_https(objects, &leaf.pem(), &key.serialize_pem());
        (server, ca.pem())
    }

    /// Starts Radicale over HTTPS with the certificate `cert_pem` (its key
    /// `key_pem`), with calendar "Work" (`/alice/work/`) holding `objects`
    /// as [`Self::radicale_tls`] does.
    pub(crate) fn radicale_https(objects: &[(&str, &str)], cert_pem: &str, key_pem: &str) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let port = free_port();
        let (cert, keyf) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
        std::fs::write(&cert, cert_pem).expect("cert");
        std::fs::write(&keyf, key_pem).expect("key");
        let work = dir.path().join("collections/collection-root/alice/work");
        std::fs::create_dir_all(&work).expect("storage");
        std::fs::write(
            work.join(".Radicale.props"),
            r#"{"C:supported-calendar-component-set": "VEVENT,VTODO", "D:displayname": "Work", "tag": "VCALENDAR"}"#,
        )
        .expect("props");
        for (name, ics) in objects {
            std::fs::write(work.join(name), ics).expect("object");
        }
        let users = dir.path().join("users");
        std::fs::write(&users, format!("{USER}:{PASSWORD}\n")).expect("users");
        let config = dir.path().join("config");
        std::fs::write(
            &config,
            format!(
                "[server]\nhosts = 127.0.0.1:{port}\nssl = True\ncertificate = {}\nkey = {}\n\
                 [auth]\ntype = htpasswd\nhtpasswd_filename = {}\nhtpasswd_encryption = plain\n\
                 [storage]\nfilesystem_folder = {}\n[logging]\nlevel = info\n",
                cert.display(),
                keyf.display(),
                users.display(),
                dir.path().join("collections").display()
            ),
        )
        .expect("config");
        let mut cmd = Command::new(python());
        cmd.args(["-m", "radicale", "--config"]).arg(&config);
        Self::spawn("radicale", cmd, port, dir)
    }

    /// Changes Radicale's password for [`USER`] (it reads its users file
    /// at each sign-in). The test's own requests still send [`PASSWORD`].
    pub(crate) fn change_password(&self, password: &str) {
        std::fs::write(
            self._dir.path().join("users"),
            format!("{USER}:{password}\n"),
        )
        .expect("users");
    }

    /// Where Radicale keeps collection `/alice/NAME/` (an object written
    /// there is on the server).
    pub(crate) fn storage(&self, name: &str) -> PathBuf {
        self._dir
            .path()
            .join("collections/collection-root/alice")
            .join(name)
    }

    /// The HTTPS URL of a server started by [`Self::radicale_tls`].
    pub(crate) fn https_url(&self) -> String {
        format!("https://127.0.0.1:{}/", self.port)
    }

    /// Starts Xandikos with its default calendar
    /// (`/user/calendars/calendar/`, principal `/user/`).
    pub(crate) fn xandikos() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let port = free_port();
        let mut cmd = Command::new(python());
        cmd.args([
            "-m",
            "xandikos",
            "serve",
            "--defaults",
            "-l",
            "127.0.0.1",
            "-p",
        ])
        .arg(port.to_string())
        .arg("-d")
        .arg(dir.path().join("data"))
        .arg("--state-dir")
        .arg(dir.path().join("state"));
        Self::spawn("xandikos", cmd, port, dir)
    }

    /// Runs `cmd` and returns once the server says it listens (on stdout
    /// or stderr; bounded by 60 s), both pipes drained for good.
    fn spawn(kind: &'static str, mut cmd: Command, port: u16, dir: TempDir) -> Self {
        let mut child = cmd
            // Python buffers a piped stdout: the "Listening" line must come at once.
            .env("PYTHONUNBUFFERED", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("start {kind}: {e}"));
        let (tx, rx) = mpsc::channel();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let out: Box<dyn Read + Send> = Box::new(child.stdout.take().expect("stdout"));
        let err: Box<dyn Read + Send> = Box::new(child.stderr.take().expect("stderr"));
        for pipe in [out, err] {
            let (tx, seen) = (tx.clone(), seen.clone());
            std::thread::spawn(move || {
                // Keeps draining, so the server never blocks on a full pipe.
                for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                    if let Ok(mut s) = seen.lock()
                        && s.len() < 10_000
                    {
                        s.push_str(&line);
                        s.push('\n');
                    }
                    if line.contains("Listening on") {
                        let _ = tx.send(true);
                    }
                }
                let _ = tx.send(false); // The pipe closed: the server ended.
            });
        }
        // Owned from here: a panic below kills the server (Drop), never leaks it.
        let server = Self {
            kind,
            child,
            port,
            _dir: dir,
        };
        let mut closed = 0;
        let listening = loop {
            match rx.recv_timeout(Duration::from_secs(60)) {
                Ok(true) => break true,
                Ok(false) if closed == 0 => closed += 1,
                _ => break false,
            }
        };
        if !listening {
            let said = seen.lock().map(|s| s.clone()).unwrap_or_default();
            panic!("{kind} did not start listening within 60 s; it said:\n{said}");
        }
        // Xandikos says "Listening" just before it binds: poll the port, on a
        // bound (a refused connect returns at once; 20 ms between tries).
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "{kind} said it listens but port {port} refuses connections after 30 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }

    /// Makes calendar `/alice/NAME/` with a display name, colour and
    /// components.
    pub(crate) fn mkcalendar(&self, name: &str, display: &str, color: &str, comps: &[&str]) {
        let comps: String = comps
            .iter()
            .map(|c| format!("<C:comp name=\"{c}\"/>"))
            .collect();
        let body = format!(
            "<?xml version=\"1.0\"?><C:mkcalendar xmlns:D=\"DAV:\" \
             xmlns:C=\"urn:ietf:params:xml:ns:caldav\" xmlns:I=\"http://apple.com/ns/ical/\">\
             <D:set><D:prop><D:displayname>{display}</D:displayname>\
             <I:calendar-color>{color}</I:calendar-color>\
             <C:supported-calendar-component-set>{comps}</C:supported-calendar-component-set>\
             </D:prop></D:set></C:mkcalendar>"
        );
        let r = self.request(
            "MKCALENDAR",
            &format!("/{USER}/{name}/"),
            &[],
            body.as_bytes(),
        );
        assert_eq!(r.status, 201, "MKCALENDAR: {}", r.body);
    }

    /// A plain PUT (no conditions), as another client would.
    pub(crate) fn put(&self, path: &str, ics: &str) -> Reply {
        let r = self.request(
            "PUT",
            path,
            &[("Content-Type", "text/calendar")],
            ics.as_bytes(),
        );
        assert!(
            r.status == 201 || r.status == 204,
            "{}: PUT {path}: {} {}",
            self.kind,
            r.status,
            r.body
        );
        r
    }

    pub(crate) fn get(&self, path: &str) -> Reply {
        self.request("GET", path, &[], b"")
    }

    pub(crate) fn delete(&self, path: &str) {
        let r = self.request("DELETE", path, &[], b"");
        assert!(
            r.status == 200 || r.status == 204,
            "DELETE {path}: {}",
            r.status
        );
    }

    /// One request with Basic auth; the connection closes after it.
    pub(crate) fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Reply {
        request_at(self.port, method, path, headers, body)
    }
}

/// One request with Basic auth to the server on `port`; the connection
/// closes after it.
pub(crate) fn request_at(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Reply {
    use base64::Engine as _;
    let auth = base64::engine::general_purpose::STANDARD.encode(format!("{USER}:{PASSWORD}"));
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Basic {auth}\r\n\
         Connection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).expect("write");
    s.write_all(body).expect("write");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read");
    Reply::parse(&raw)
}

impl Drop for DavServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: String,
}

impl Reply {
    fn parse(raw: &[u8]) -> Self {
        let text = String::from_utf8_lossy(raw);
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let mut lines = head.lines();
        let status = lines
            .next()
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let headers = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        Self {
            status,
            headers,
            body: body.to_owned(),
        }
    }

    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// An HTTP server on 127.0.0.1 that is not CalDAV: every request gets a
/// small HTML page with `status`. Returns its URL.
pub(crate) fn not_caldav(status: u16) -> String {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            let mut buf = [0u8; 8192];
            let _ = s.read(&mut buf);
            let body = "<html><body>Welcome to my blog</body></html>";
            let _ = write!(
                s,
                "HTTP/1.1 {status} X\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    format!("http://127.0.0.1:{port}/")
}
