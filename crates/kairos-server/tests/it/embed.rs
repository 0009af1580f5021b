//! The library's `run(listener, config, shutdown)`, as a benchmark would
//! embed it: serves on a listener the caller bound, stops when the shutdown
//! future completes.

use kairos_server::{Config, ServerError};
use tokio::net::TcpListener;

use crate::support::{Maker, Server};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_serves_a_listener_until_the_shutdown_future_completes() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let mut config = Config::new(data.clone());
    if crate::pg::postgres_suite() {
        config.postgres = Some(crate::pg::database().await);
    }
    let database = config.postgres.clone();
    let server = tokio::spawn(kairos_server::run(listener, config, async {
        let _ = stopped.await;
    }));
    let s = Server::attach(url, &data, database);
    let (id, token) = s.device("alice", "laptop").await;
    let mut a = s.connect(&token).await;
    a.hello(0).await;
    assert_eq!(a.push(&[Maker::new(&id).dismiss("k")]).await, [1]);
    stop.send(()).unwrap();
    assert_eq!(a.closed().await.0, 1001);
    tokio::time::timeout(crate::support::WAIT, server)
        .await
        .expect("run did not return")
        .unwrap()
        .unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn run_refuses_the_current_thread_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let got = kairos_server::run(listener, Config::new(dir.path().join("data")), async {}).await;
    assert!(matches!(got, Err(ServerError::Runtime)), "{got:?}");
}
