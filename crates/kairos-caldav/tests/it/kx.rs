//! The real `kairos-server` (embedded through `kairos_server::run` on
//! 127.0.0.1:0, a thread and runtime of its own) and devices on fresh
//! SQLite files that exchange ops with it and may link a CalDAV account.
//! Every wait is bounded and waits on an event, never a sleep.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration as StdDuration;

use chrono::{DateTime, Duration, Utc};
use kairos_caldav::account;
use kairos_caldav::secret::FileStore;
use kairos_caldav::sync::SyncReport;
use kairos_engine::clock::{Clock, ManualClock};
use kairos_store::{State, Store};
use kairos_sync::{Applier, Tls};

use crate::server::{PASSWORD, USER};
use crate::{t0, when};

/// How long the server may take to stop.
const WAIT: StdDuration = StdDuration::from_secs(15);

/// The sync server; dropping it stops it.
pub(crate) struct Kx {
    pub(crate) url: String,
    data: PathBuf,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    done: mpsc::Receiver<()>,
    thread: Option<std::thread::JoinHandle<()>>,
    _dir: tempfile::TempDir,
}

impl Kx {
    pub(crate) fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        // Bound here: the port is known and connections queue until the
        // server accepts them (nothing to wait for).
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("ws://{}", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (done_tx, done) = mpsc::channel();
        let config = kairos_server::Config::new(data.clone());
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                let _ = kairos_server::run(listener, config, async {
                    let _ = stopped.await;
                })
                .await;
            });
            let _ = done_tx.send(());
        });
        Self {
            url,
            data,
            stop: Some(stop),
            done,
            thread: Some(thread),
            _dir: dir,
        }
    }

    /// A one-time code for `alice`.
    pub(crate) fn invite(&self) -> String {
        kairos_server::Store::invite(&self.data, "alice", StdDuration::from_secs(900))
            .unwrap()
            .code
    }
}

impl Drop for Kx {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if self.done.recv_timeout(WAIT).is_ok()
            && let Some(t) = self.thread.take()
        {
            let _ = t.join();
        }
    }
}

/// One device of alice: its database, its secret store, its clock.
pub(crate) struct Dev {
    pub(crate) store: Store,
    secrets: FileStore,
    clock: Arc<ManualClock>,
    rt: tokio::runtime::Runtime,
    _dir: tempfile::TempDir,
}

impl Dev {
    pub(crate) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("k.db");
        Self {
            store: Store::open(&db).unwrap(),
            secrets: FileStore::beside(&db),
            clock: Arc::new(ManualClock::new(t0())),
            rt: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap(),
            _dir: dir,
        }
    }

    pub(crate) fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    pub(crate) fn set_now(&self, t: DateTime<Utc>) {
        self.clock.set(t);
    }

    fn applier(&self) -> Applier {
        Applier {
            clock: self.clock.clone(),
            floating: chrono_tz::UTC,
            horizon: Duration::hours(48),
        }
    }

    /// `kairos sync join URL CODE`.
    pub(crate) fn join(&mut self, kx: &Kx, code: &str, name: &str) {
        let t = self.now();
        self.rt
            .block_on(kairos_sync::join(
                &mut self.store,
                &kx.url,
                code,
                name,
                &Tls::default(),
                t,
            ))
            .unwrap();
    }

    /// `kairos sync pair`: a code for another device.
    pub(crate) fn pair(&self) -> String {
        self.rt
            .block_on(kairos_sync::pair(&self.store, &Tls::default()))
            .unwrap()
            .0
    }

    /// `kairos sync now`: catch up, then push the outbox.
    pub(crate) fn exchange(&mut self) {
        let applier = self.applier();
        self.rt
            .block_on(kairos_sync::now(&mut self.store, &applier, &Tls::default()))
            .unwrap();
    }

    /// `kairos caldav add` of the account at `url`.
    pub(crate) fn link(&mut self, url: &str) {
        let w = when(self.now());
        let login = account::Login {
            url,
            user: USER,
            password: PASSWORD,
            ca_pem: None,
        };
        account::add(&mut self.store, &self.secrets, &login, &[], w).unwrap();
    }

    /// A device of alice on a fresh database, joined to the account with
    /// `code` as `name`, caught up.
    pub(crate) fn joined(kx: &Kx, code: &str, name: &str) -> Self {
        let mut d = Self::new();
        d.join(kx, code, name);
        d.exchange();
        d
    }

    /// `kairos caldav sync` (the one calendar).
    pub(crate) fn caldav(&mut self) -> SyncReport {
        let mut r = self.try_caldav().unwrap();
        assert_eq!(r.len(), 1);
        r.remove(0)
    }

    /// `kairos caldav sync`, which may fail.
    pub(crate) fn try_caldav(&mut self) -> kairos_caldav::Result<Vec<SyncReport>> {
        let w = when(self.now());
        account::sync(&mut self.store, &self.secrets, None, w)
    }

    /// `kairos caldav remove` of the only account.
    pub(crate) fn remove(&mut self) {
        account::remove(&mut self.store, &self.secrets, None).unwrap();
    }

    /// The CalDAV account's password as this device's secret store keeps
    /// it (`kairos caldav edit --password-stdin` without the check).
    pub(crate) fn set_password(&self, password: &str) {
        use kairos_caldav::secret::SecretStore;
        let a = self.store.read(|r| r.caldav_accounts()).unwrap();
        self.secrets.set(&a[0].secret_ref, password).unwrap();
    }

    /// An edit of the series in `ics` made in Kairos on this device (the
    /// app's editor): "Work" series replaced.
    pub(crate) fn edit(&mut self, uid: &str, ics: &str) {
        let (cal, _) = kairos_core::ics::parse_calendar_lenient(
            ics.as_bytes(),
            &kairos_core::Limits::default(),
        )
        .unwrap();
        let now = self.now();
        kairos_engine::import::replace_series(
            &mut self.store,
            "Work",
            uid,
            &cal.events,
            now,
            Duration::hours(48),
            chrono_tz::UTC,
        )
        .unwrap();
    }

    pub(crate) fn work(&self) -> kairos_store::Calendar {
        self.store
            .read(|r| r.calendars())
            .unwrap()
            .into_iter()
            .find(|c| c.name == "Work")
            .expect("the Work calendar")
    }

    /// Pending reminders of series `uid`: (key, trigger).
    pub(crate) fn pending(&self, uid: &str) -> Vec<(String, DateTime<Utc>)> {
        let cal = self.work();
        let mut v: Vec<_> = self
            .store
            .read(|r| r.instances_of_event(cal.id, uid))
            .unwrap()
            .into_iter()
            .filter(|i| i.state == State::Pending)
            .map(|i| (i.key, i.trigger_at))
            .collect();
        v.sort();
        v
    }

    /// How many times series `uid` was written here: each write re-plans
    /// its pending reminder and logs `event changed: recomputed` for it.
    pub(crate) fn writes(&self, uid: &str) -> usize {
        self.audit()
            .iter()
            .filter(|(k, r)| k.contains(uid) && r.starts_with("event changed"))
            .count()
    }

    /// Everything `kairos log` shows: (key, reason).
    pub(crate) fn audit(&self) -> Vec<(String, String)> {
        self.store
            .read(|r| r.audit_since(DateTime::<Utc>::UNIX_EPOCH, 100_000))
            .unwrap()
            .into_iter()
            .map(|a| (a.key, a.reason))
            .collect()
    }

    /// Lost edits and CalDAV conflicts in `kairos log`.
    pub(crate) fn conflicts(&self) -> Vec<String> {
        self.audit()
            .into_iter()
            .filter(|(k, r)| r.contains(" lost to ") || k.starts_with("caldav/"))
            .map(|(k, r)| format!("{k} {r}"))
            .collect()
    }
}
