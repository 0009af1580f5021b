//! The real `kairos-server` binary in a fresh data directory, and a small
//! WebSocket client. Every wait is bounded by a timeout on an event (a line
//! on stdout, a frame, the process's exit): never a sleep.

// Elsewhere the signal tests (Unix only) are the only users of some helpers.
#![cfg_attr(not(unix), allow(dead_code, unused_imports))]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use kairos_proto::ServerMsg;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};
use tokio::time::timeout;
use tokio_tungstenite::tungstenite::Error as WsError;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

pub use crate::maker::Maker;
pub use client::{Client, Hello, Io};

mod client;

/// How long any one expected event may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(15);

pub const BIN: &str = env!("CARGO_BIN_EXE_kairos-server");

/// A running server (a child process, killed when dropped, or one run by
/// the test itself through the library).
pub struct Server {
    pub child: Option<Child>,
    pub url: String,
    pub data: PathBuf,
    /// The PostgreSQL URL, when the store is there (`--database`).
    pub database: Option<String>,
    pub tls: Option<Arc<rustls::ClientConfig>>,
    /// The rest of stdout, after the listening line.
    pub stdout: Option<tokio::io::Lines<BufReader<tokio::process::ChildStdout>>>,
    _dir: Option<tempfile::TempDir>,
}

impl Server {
    /// A server on a fresh data directory.
    pub async fn start(args: &[&str]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let mut s = Self::start_on(&data, args).await;
        s._dir = Some(dir);
        s
    }

    /// A server on a fresh data directory with the SQLite store, in either
    /// run of the suite (tests of the SQLite file itself).
    pub async fn start_sqlite(args: &[&str]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let mut s = Self::start_with(&data, None, args).await;
        s._dir = Some(dir);
        s
    }

    /// A server on `data` (which may hold a previous server's store). In
    /// the PostgreSQL run of the suite (`KAIROS_TEST_STORE=postgres`) its
    /// store is a database of the test cluster, made for `data` the first
    /// time and found again (its URL is kept beside `data`) by a restart.
    pub async fn start_on(data: &Path, args: &[&str]) -> Self {
        let database = if crate::pg::postgres_suite() {
            let file = data.with_extension("url");
            Some(match std::fs::read_to_string(&file) {
                Ok(url) => url,
                Err(_) => {
                    let url = crate::pg::database().await;
                    std::fs::create_dir_all(data.parent().unwrap()).unwrap();
                    std::fs::write(&file, &url).unwrap();
                    url
                }
            })
        } else {
            None
        };
        Self::start_with(data, database, args).await
    }

    /// A server on the PostgreSQL database `url` (another instance may
    /// share it); `data` only names its log.
    pub async fn start_pg(data: &Path, url: &str, args: &[&str]) -> Self {
        Self::start_with(data, Some(url.to_owned()), args).await
    }

    async fn start_with(data: &Path, database: Option<String>, args: &[&str]) -> Self {
        std::fs::create_dir_all(data.parent().unwrap()).unwrap();
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(data.with_extension("log"))
            .unwrap();
        let mut child = Command::new(BIN)
            .arg("--data")
            .arg(data)
            .args(database.iter().flat_map(|url| ["--database", url]))
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .env("RUST_LOG", "debug")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let line = match timeout(WAIT, lines.next_line()).await {
            Ok(Ok(Some(line))) => line,
            other => panic!(
                "no listening line ({other:?}); log:\n{}",
                std::fs::read_to_string(data.with_extension("log")).unwrap_or_default()
            ),
        };
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        let url = v["listening"].as_str().unwrap().to_owned();
        Self {
            child: Some(child),
            url,
            data: data.to_owned(),
            database,
            tls: None,
            stdout: Some(lines),
            _dir: None,
        }
    }

    /// A server this test runs itself, listening at `url` on `data` (or
    /// on the PostgreSQL `database`).
    pub fn attach(url: String, data: &Path, database: Option<String>) -> Self {
        Self {
            child: None,
            url,
            data: data.to_owned(),
            database,
            tls: None,
            stdout: None,
            _dir: None,
        }
    }

    /// `host:port` of the server.
    pub fn addr(&self) -> &str {
        self.url.split("://").nth(1).unwrap()
    }

    /// `kairos-server --data DIR invite ACCOUNT [args]` → the code.
    pub async fn invite(&self, account: &str, args: &[&str]) -> String {
        let out = Command::new(BIN)
            .arg("--data")
            .arg(&self.data)
            .args(self.database.iter().flat_map(|url| ["--database", url]))
            .args(["invite", account])
            .args(args)
            .output()
            .await
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["account"], account);
        assert!(v["expires_at"].as_str().unwrap().ends_with('Z'), "{v}");
        v["code"].as_str().unwrap().to_owned()
    }

    /// A new device of `account`: invite, then join. (device, token)
    pub async fn device(&self, account: &str, name: &str) -> (String, String) {
        let code = self.invite(account, &[]).await;
        let ServerMsg::Joined { device, token, .. } = self.join(&code, name).await.unwrap() else {
            unreachable!()
        };
        (device, token)
    }

    /// `/v1/join` with `code`: the `joined` message, or the refusal.
    pub async fn join(&self, code: &str, name: &str) -> Result<ServerMsg, (u16, String)> {
        let path = format!("/v1/join?name={}", name.replace(' ', "%20"));
        let mut ws = self.upgrade(&path, &format!("Pairing {code}")).await?;
        let msg = ws.recv().await;
        assert!(matches!(msg, ServerMsg::Joined { .. }), "{msg:?}");
        assert_eq!(ws.closed().await.0, 1000);
        Ok(msg)
    }

    /// A session with `token` (no hello sent yet).
    pub async fn connect(&self, token: &str) -> Client {
        self.upgrade("/v1/sync", &format!("Bearer {token}"))
            .await
            .unwrap()
    }

    /// The upgrade of `path` with this `Authorization` header.
    pub async fn upgrade(&self, path: &str, authorization: &str) -> Result<Client, (u16, String)> {
        let scheme = if self.tls.is_some() { "wss" } else { "ws" };
        let mut req = format!("{scheme}://{}{path}", self.addr())
            .into_client_request()
            .unwrap();
        req.headers_mut().insert(
            "authorization",
            HeaderValue::from_str(authorization).unwrap(),
        );
        let tcp = TcpStream::connect(self.addr()).await.unwrap();
        tcp.set_nodelay(true).unwrap();
        let io: Box<dyn Io> = match &self.tls {
            None => Box::new(tcp),
            Some(cfg) => {
                let name = rustls_pki_types::ServerName::try_from("localhost").unwrap();
                Box::new(
                    tokio_rustls::TlsConnector::from(cfg.clone())
                        .connect(name, tcp)
                        .await
                        .unwrap(),
                )
            }
        };
        let config = WebSocketConfig::default()
            .max_message_size(Some(64 << 20))
            .max_frame_size(Some(64 << 20));
        match timeout(
            WAIT,
            tokio_tungstenite::client_async_with_config(req, io, Some(config)),
        )
        .await
        {
            Ok(Ok((ws, _))) => Ok(Client { ws }),
            Ok(Err(WsError::Http(resp))) => {
                let body = resp
                    .body()
                    .as_ref()
                    .map(|b| String::from_utf8_lossy(b).into_owned());
                Err((resp.status().as_u16(), body.unwrap_or_default()))
            }
            Ok(Err(e)) => panic!("upgrade of {path}: {e}"),
            Err(_) => panic!("upgrade of {path}: timed out"),
        }
    }

    /// The HTTP status and body of a refused upgrade, read raw.
    pub async fn refused(&self, path: &str, authorization: Option<&str>) -> (u16, String) {
        let mut tcp = TcpStream::connect(self.addr()).await.unwrap();
        let auth = authorization
            .map(|a| format!("Authorization: {a}\r\n"))
            .unwrap_or_default();
        let req = format!(
            "GET {path} HTTP/1.1\r\nHost: {}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n{auth}\r\n",
            self.addr()
        );
        tcp.write_all(req.as_bytes()).await.unwrap();
        let mut out = String::new();
        timeout(WAIT, tcp.read_to_string(&mut out))
            .await
            .unwrap()
            .unwrap();
        let status = out.split(' ').nth(1).unwrap().parse().unwrap();
        let body = out.split("\r\n\r\n").nth(1).unwrap_or("").to_owned();
        (status, body)
    }

    /// Sends a signal to the server (Unix).
    #[cfg(unix)]
    pub fn signal(&self, sig: nix::sys::signal::Signal) {
        let pid = nix::unistd::Pid::from_raw(
            i32::try_from(self.child.as_ref().unwrap().id().unwrap()).unwrap(),
        );
        nix::sys::signal::kill(pid, sig).unwrap();
    }

    /// Waits for the server to exit.
    pub async fn exit(&mut self) -> std::process::ExitStatus {
        timeout(WAIT, self.child.as_mut().unwrap().wait())
            .await
            .expect("server did not exit")
            .unwrap()
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.data.with_extension("log")).unwrap_or_default()
    }
}
