//! The real `kairos-server`, embedded through `kairos_server::run` on a
//! thread and runtime of its own, and devices on fresh SQLite files. Every
//! wait is bounded and waits on an event (a channel, a thread's end), never
//! a sleep.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use kairos_core::{Limits, ics};
use kairos_engine::clock::{Clock, ManualClock};
use kairos_engine::sync::Identity;
use kairos_store::{State, Store};
use kairos_sync::{Applier, SyncError, Tls};

/// How long any one expected event may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(15);

/// The tests' "now" on the devices: 2026-06-01 08:00 UTC.
pub fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-06-01T08:00:00Z")
        .unwrap()
        .with_timezone(&Utc)
}

/// An event at 10:00 with an alarm 15 minutes before (09:45): pending at
/// [`now`], inside the horizon.
pub const EVENT: &str = "BEGIN:VEVENT\nUID:standup\nSUMMARY:Standup\nDTSTART:20260601T100000Z\n\
                         BEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT15M\nEND:VALARM\nEND:VEVENT";

/// The server, running on `127.0.0.1`, on a data directory of its own.
/// Dropping it stops it (bounded).
pub struct Server {
    /// `ws://127.0.0.1:PORT`.
    pub url: String,
    addr: SocketAddr,
    data: PathBuf,
    /// For `wss://` (kept for a restart).
    tls: Option<Arc<rustls::ServerConfig>>,
    running: Option<Running>,
    _dir: tempfile::TempDir,
}

/// One run of the server: how to stop it and hear that it stopped.
struct Running {
    stop: tokio::sync::oneshot::Sender<()>,
    done: mpsc::Receiver<Result<(), String>>,
    thread: std::thread::JoinHandle<()>,
}

impl Server {
    /// A server on a fresh data directory and a free port.
    pub fn start() -> Self {
        Self::start_with(None)
    }

    /// A server speaking `wss://` with `tls`; its URL names `localhost`.
    pub fn start_tls(tls: Arc<rustls::ServerConfig>) -> Self {
        Self::start_with(Some(tls))
    }

    fn start_with(tls: Option<Arc<rustls::ServerConfig>>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let (addr, running) = launch(&data, "127.0.0.1:0".parse().unwrap(), tls.clone());
        Self {
            url: match tls {
                Some(_) => format!("wss://localhost:{}", addr.port()),
                None => format!("ws://{addr}"),
            },
            tls,
            addr,
            data,
            running: Some(running),
            _dir: dir,
        }
    }

    /// Stops the server (it closes its sessions with 1001) and waits for
    /// `run` to return.
    pub fn stop(&mut self) {
        if let Some(r) = self.running.take() {
            let _ = r.stop.send(());
            let ended = r.done.recv_timeout(WAIT);
            let _ = r.thread.join();
            ended
                .expect("the server did not stop in time")
                .expect("the server failed");
        }
    }

    /// Stops the server, then starts it again on the same port and data.
    pub fn restart(&mut self) {
        self.stop();
        self.resume();
    }

    /// Starts a stopped server again on the same port and data.
    pub fn resume(&mut self) {
        let (_, running) = launch(&self.data, self.addr, self.tls.clone());
        self.running = Some(running);
    }

    /// A one-time code for `account` (`kairos-server invite`), valid `ttl`.
    pub fn invite_for(&self, account: &str, ttl: Duration) -> String {
        kairos_server::Store::invite(&self.data, account, ttl)
            .unwrap()
            .code
    }

    /// A code for `alice`, valid 15 minutes.
    pub fn invite(&self) -> String {
        self.invite_for("alice", Duration::from_secs(900))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(r) = self.running.take() {
            let _ = r.stop.send(());
            let _ = r.done.recv_timeout(WAIT);
        }
    }
}

/// Binds `addr` here (so the port is known, and connections queue until
/// the server accepts them: no readiness to wait for), and runs the server
/// on it on a thread with a multi-thread runtime of its own.
fn launch(
    data: &Path,
    addr: SocketAddr,
    tls: Option<Arc<rustls::ServerConfig>>,
) -> (SocketAddr, Running) {
    let listener = std::net::TcpListener::bind(addr).unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let (done_tx, done) = mpsc::channel();
    let mut config = kairos_server::Config::new(data.to_owned());
    config.tls = tls;
    let thread = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let result = rt.block_on(async {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            kairos_server::run(listener, config, async {
                let _ = stopped.await;
            })
            .await
        });
        let _ = done_tx.send(result.map_err(|e| e.to_string()));
    });
    (addr, Running { stop, done, thread })
}

/// A device: a database on a fresh file, its clock standing at [`now`].
pub struct Device {
    pub db: PathBuf,
    pub store: Store,
    pub clock: Arc<ManualClock>,
    _dir: tempfile::TempDir,
}

impl Device {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("kairos.db");
        Self {
            store: Store::open(&db).unwrap(),
            db,
            clock: Arc::new(ManualClock::new(now())),
            _dir: dir,
        }
    }

    pub fn applier(&self) -> Applier {
        Applier {
            clock: self.clock.clone(),
            floating: chrono_tz::UTC,
            horizon: kairos_engine::engine::Config::default().horizon,
        }
    }

    /// `kairos sync join URL CODE --name NAME`.
    pub async fn join(&mut self, url: &str, code: &str, name: &str) -> Result<Identity, SyncError> {
        let t = self.clock.now();
        kairos_sync::join(&mut self.store, url, code, name, &Tls::default(), t).await
    }

    /// `kairos sync now`: (pushed, pulled).
    pub async fn sync_now(&mut self) -> Result<(usize, usize), SyncError> {
        let applier = self.applier();
        kairos_sync::now(&mut self.store, &applier, &Tls::default()).await
    }

    /// What a `dismiss` with no daemon running does after its change.
    pub async fn push(&mut self) -> Result<usize, SyncError> {
        let applier = self.applier();
        kairos_sync::push_outbox(&mut self.store, &applier, &Tls::default(), WAIT).await
    }

    /// `kairos import` of `body` (VEVENTs) into the calendar "work".
    pub fn import(&mut self, body: &str) {
        let text = format!(
            "BEGIN:VCALENDAR\r\n{}\r\nEND:VCALENDAR\r\n",
            body.trim().replace('\n', "\r\n")
        );
        let cal = ics::parse_calendar(text.as_bytes(), &Limits::default()).unwrap();
        let horizon = kairos_engine::engine::Config::default().horizon;
        kairos_engine::import::import(
            &mut self.store,
            "work",
            &cal,
            self.clock.now(),
            horizon,
            chrono_tz::UTC,
        )
        .unwrap();
    }

    /// `kairos dismiss KEY` (the acknowledgement API the CLI calls).
    pub fn dismiss(&mut self, key: &str) {
        kairos_engine::actions::dismiss(&mut self.store, key, self.clock.now()).unwrap();
    }

    /// The keys of the reminders still to fire.
    pub fn pending(&self) -> Vec<String> {
        let due = self.store.due(DateTime::<Utc>::MAX_UTC, 100).unwrap();
        due.into_iter().map(|i| i.key).collect()
    }

    pub fn state(&self, key: &str) -> State {
        self.store
            .get(key)
            .unwrap()
            .expect("no such reminder")
            .state
    }

    /// The reminder was shown here (what a channel's delivery records).
    pub fn shown(&mut self, key: &str) {
        let t = self.clock.now();
        let moved = self
            .store
            .transition(key, &[State::Pending], State::Delivered, "test: shown", t)
            .unwrap();
        assert!(moved, "{key} was not pending");
    }

    pub fn outbox_len(&self) -> u64 {
        self.store.read(|r| r.outbox_len()).unwrap()
    }

    pub fn identity(&self) -> Option<Identity> {
        kairos_engine::sync::identity(&self.store).unwrap()
    }

    pub fn status(&self) -> serde_json::Value {
        kairos_sync::status(&self.store, false).unwrap().json
    }
}

/// Two devices of `alice`: A joined with an invite, B with A's `pair`.
pub async fn pair_of(server: &Server) -> (Device, Device) {
    let (mut a, mut b) = (Device::new(), Device::new());
    a.join(&server.url, &server.invite(), "laptop")
        .await
        .unwrap();
    let (code, _) = kairos_sync::pair(&a.store, &Tls::default()).await.unwrap();
    b.join(&server.url, &code, "desktop").await.unwrap();
    (a, b)
}

/// A and B of one account, both holding [`EVENT`] (imported on A, pushed,
/// pulled by B). Returns the reminder's key.
pub async fn shared_event(server: &Server) -> (Device, Device, String) {
    let (mut a, mut b) = pair_of(server).await;
    a.import(EVENT);
    assert_eq!(a.push().await.unwrap(), 2, "calendar.put and series.put");
    assert_eq!(b.sync_now().await.unwrap(), (0, 2));
    let key = a.pending().pop().unwrap();
    assert_eq!(
        b.pending(),
        std::slice::from_ref(&key),
        "the same key on both"
    );
    (a, b, key)
}

mod live_client;
pub use live_client::LiveClient;
