//! The host follows the database's pairing while it runs: a join made in
//! the app (told through `Waker::account_changed`) or from the CLI (which
//! notifies the lock holder) starts the live connection against the real
//! server; a leave stops it. No restart.

use std::net::TcpListener;
use std::time::Duration;

use chrono::Utc;
use kairos_host::{LinkState, Phase, Waker};
use kairos_store::Store;
use kairos_sync::Tls;
use tokio::sync::watch;

use super::{WAIT, start};

/// The real server on 127.0.0.1:0 on a thread of its own; stopped when
/// dropped.
pub(crate) struct Server {
    pub(crate) url: String,
    data: tempfile::TempDir,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    pub(crate) fn start() -> Self {
        let data = tempfile::tempdir().expect("tmp");
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let url = format!("ws://{}", listener.local_addr().expect("addr"));
        let config = kairos_server::Config::new(data.path().join("data"));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                let _ = kairos_server::run(listener, config, async {
                    let _ = stopped.await;
                })
                .await;
            });
        });
        Self {
            url,
            data,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    pub(crate) fn invite(&self) -> String {
        kairos_server::Store::invite(
            &self.data.path().join("data"),
            "alice",
            Duration::from_secs(900),
        )
        .expect("invite")
        .code
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

fn wait_phase(
    rt: &tokio::runtime::Runtime,
    state: &mut watch::Receiver<LinkState>,
    what: &str,
    f: impl Fn(&Phase) -> bool,
) {
    let got = rt
        .block_on(async { tokio::time::timeout(WAIT, state.wait_for(|s| f(&s.phase))).await })
        .map(|r| r.is_ok());
    assert!(
        got == Ok(true),
        "no {what} within {WAIT:?}; last state {:?}",
        *state.borrow()
    );
}

#[test]
fn a_join_while_the_host_runs_starts_sync_and_a_leave_stops_it() {
    let server = Server::start();
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("k.db");
    let waker = Waker::default();
    let (host, _rx) = start(&db, &waker);
    let host = host.expect("host");
    assert!(!host.syncing());
    let mut state = host.sync_state();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut store = Store::open(&db).expect("open");
    let tls = Tls::default();

    // Joined in the app: the app tells the host.
    rt.block_on(kairos_sync::join(
        &mut store,
        &server.url,
        &server.invite(),
        "app",
        &tls,
        Utc::now(),
    ))
    .expect("join");
    waker.account_changed();
    wait_phase(&rt, &mut state, "connection after the app's join", |p| {
        *p == Phase::Connected
    });
    assert!(host.syncing());

    // Left from the CLI: `kairos sync leave` notifies the lock holder.
    rt.block_on(kairos_sync::leave(&mut store, &tls, false))
        .expect("leave");
    kairos_engine::daemon::notify_running(&db);
    wait_phase(&rt, &mut state, "not paired after the CLI's leave", |p| {
        *p == Phase::NotPaired
    });
    assert!(!host.syncing());

    // Joined again from the CLI: `kairos sync join` notifies it too.
    rt.block_on(kairos_sync::join(
        &mut store,
        &server.url,
        &server.invite(),
        "cli",
        &tls,
        Utc::now(),
    ))
    .expect("join again");
    kairos_engine::daemon::notify_running(&db);
    wait_phase(&rt, &mut state, "connection after the CLI's join", |p| {
        *p == Phase::Connected
    });
    assert!(host.syncing());
    host.stop().expect("stop");
}
