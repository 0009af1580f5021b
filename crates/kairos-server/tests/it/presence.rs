//! The devices connected to other instances, in a device list (issue #21
//! §1, PostgreSQL in either run of the suite: `presence.rs`): listed and
//! unlisted as sessions open and close, a killed instance's devices
//! dropped, and the tables written again after a crash empties them.

use std::time::{Duration, Instant};

use kairos_proto::{ClientMsg, ServerMsg};

use crate::instances::{device, two};
use crate::pg;
use crate::support::{Client, Server};

/// Whether `device` is connected, as a device list from `c` says.
async fn listed_connected(c: &mut Client, device: &str) -> bool {
    c.send(&ClientMsg::Devices).await;
    let ServerMsg::DeviceList { devices } = c.recv().await else {
        panic!("expected a device list")
    };
    devices
        .iter()
        .find(|d| d.device == device)
        .expect("the device is listed")
        .connected
}

/// Asks `c` for the device list until `device` is listed as `connected`,
/// for at most 8 s (a presence round is every 2 s); how long it took.
async fn until_listed(c: &mut Client, device: &str, connected: bool) -> Duration {
    let start = Instant::now();
    while listed_connected(c, device).await != connected {
        assert!(
            start.elapsed() < Duration::from_secs(8),
            "{device} not listed as connected: {connected} after 8 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    start.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_list_on_one_instance_shows_the_devices_connected_to_the_other() {
    let (_dir, s1, s2) = two(&[], &[]).await;
    let (_, mut a) = device(&s1, &s1, "laptop").await;
    let (b_id, b) = device(&s2, &s2, "desktop").await;
    let took = until_listed(&mut a, &b_id, true).await;
    assert!(took < Duration::from_secs(5), "listed after {took:?}");
    drop(b);
    let took = until_listed(&mut a, &b_id, false).await;
    assert!(took < Duration::from_secs(5), "unlisted after {took:?}");
}

// SIGKILL to the server process: Unix.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_instances_devices_stop_being_listed_as_connected() {
    let (_dir, s1, mut s2) = two(&[], &[]).await;
    let (_, mut a) = device(&s1, &s1, "laptop").await;
    let (b_id, _b) = device(&s2, &s2, "desktop").await;
    until_listed(&mut a, &b_id, true).await;
    s2.signal(nix::sys::signal::Signal::SIGKILL);
    let _ = s2.exit().await;
    // Its row is alive for 10 s after its last round; then it counts no more.
    let killed = Instant::now();
    while listed_connected(&mut a, &b_id).await {
        assert!(
            killed.elapsed() < Duration::from_secs(15),
            "still listed 15 s after the kill"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn presence_emptied_by_a_database_crash_is_written_again() {
    let dir = tempfile::tempdir().unwrap();
    let url = pg::database().await;
    let s1 = Server::start_pg(&dir.path().join("one"), &url, &[]).await;
    let s2 = Server::start_pg(&dir.path().join("two"), &url, &[]).await;
    let (_, mut a) = device(&s1, &s1, "laptop").await;
    let (b_id, _b) = device(&s2, &s2, "desktop").await;
    until_listed(&mut a, &b_id, true).await;
    // What a PostgreSQL crash does to unlogged tables.
    let db = pg::client(&url).await;
    db.batch_execute("TRUNCATE presence, instances")
        .await
        .unwrap();
    db.close().await;
    let took = until_listed(&mut a, &b_id, true).await;
    assert!(took < Duration::from_secs(5), "listed again after {took:?}");
}
