//! Kills: the server in the middle of thousands of pushes, a daemon with a
//! full outbox. Nothing acknowledged is lost, nothing arrives twice.

use super::{Device, Server, calendar, in_secs, lines, pair_of};

#[test]
fn a_server_killed_during_five_thousand_pushes_loses_nothing_and_repeats_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (server, a, b) = pair_of(dir.path());
    // Offline while importing, so 2 × 2,500 series wait in the outboxes.
    let addr = server.addr();
    server.kill9();
    let t = in_secs(3600);
    let names_a: Vec<String> = (0..2500).map(|i| format!("a{i}")).collect();
    let names_b: Vec<String> = (0..2500).map(|i| format!("b{i}")).collect();
    let evs = |n: &[String]| {
        calendar(
            &n.iter()
                .map(|u| (u.as_str(), t.as_str()))
                .collect::<Vec<_>>(),
        )
    };
    a.run_import_named(&evs(&names_a), "A");
    b.run_import_named(&evs(&names_b), "B");
    assert!(a.status()["outbox"].as_u64().expect("outbox") >= 2500);
    // Both push at once; the server dies under them.
    let server = Server::start(&dir.path().join("server"), &addr);
    let pa = a.spawn(&["sync", "now"]);
    let pb = b.spawn(&["sync", "now"]);
    // Kill once the server has confirmed some, but not all, of the ops
    // (a device drops an op from its outbox only once the server said it
    // is durable).
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while a.status()["outbox"].as_u64().expect("outbox") > 2000 {
        assert!(
            std::time::Instant::now() < until,
            "the server never took ops"
        );
        std::thread::yield_now();
    }
    server.kill9();
    let _ = (pa.wait_with_output(), pb.wait_with_output());
    let left: u64 = [&a, &b]
        .iter()
        .map(|d| d.status()["outbox"].as_u64().expect("outbox"))
        .sum();
    assert!(
        left > 0,
        "the kill came after every op was in: not the case under test"
    );
    let server = Server::start(&dir.path().join("server"), &addr);
    // Each pushes what is left, then each catches up past the other's (a
    // device's cursor passes its own ops at its next catch-up).
    for d in [&a, &b, &a, &b] {
        d.run(&["sync", "now"]);
    }
    for d in [&a, &b] {
        let s = d.status();
        assert_eq!(s["outbox"], 0, "{s}");
        // Every op on the server exactly once: 2 calendars + 5,000 series.
        assert_eq!(s["last_sequence"], 5002, "{s}");
        assert_eq!(d.events(), 5000, "{}", d.id);
    }
    drop(server);
}

#[test]
fn a_daemon_killed_with_a_full_outbox_sends_it_after_the_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (server, a, b) = pair_of(dir.path());
    let addr = server.addr();
    server.kill9();
    let mut ad = a.daemon();
    let names: Vec<String> = (0..1000).map(|i| format!("e{i}")).collect();
    let t = in_secs(3600);
    a.run_import_named(
        &calendar(
            &names
                .iter()
                .map(|u| (u.as_str(), t.as_str()))
                .collect::<Vec<_>>(),
        ),
        "Work",
    );
    let full = a.status()["outbox"].as_u64().expect("outbox");
    assert!(full >= 1000, "{full}");
    let _ = ad.child.kill();
    let _ = ad.child.wait();
    let _server = Server::start(&dir.path().join("server"), &addr);
    let _ad = a.daemon();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while a.status()["outbox"] != 0 {
        assert!(std::time::Instant::now() < until, "outbox never drained");
        std::thread::yield_now();
    }
    let out = b.run(&["sync", "now"]);
    // The calendar, its 1,000 series and the zone A's daemon told.
    assert_eq!(lines(&out)[0]["pulled"], 1002);
    assert_eq!(b.events(), 1000);
}

#[test]
fn a_large_import_over_the_servers_rate_limit_is_sent_whole_not_cut_off() {
    // The server takes 1,000 ops a second from one device here (the
    // protocol's 5,000 is more than a debug build can push): 3,000 ops in
    // one go go over it, the server closes with 4429, and `sync now` (run
    // by the import) waits and goes on until the outbox is empty.
    let dir = tempfile::tempdir().expect("tempdir");
    let flags = ["--rate-ops-per-sec", "1000"];
    let server = Server::start_with(&dir.path().join("server"), "127.0.0.1:0", &flags);
    let a = Device::join(dir.path(), "a", &server, &server.invite("alice"));
    let b = Device::join(dir.path(), "b", &server, &a.pair());
    let t = in_secs(3600);
    let names: Vec<String> = (0..3000).map(|i| format!("e{i}")).collect();
    a.run_import_named(
        &calendar(
            &names
                .iter()
                .map(|u| (u.as_str(), t.as_str()))
                .collect::<Vec<_>>(),
        ),
        "Work",
    );
    let s = a.status();
    assert_eq!(s["outbox"], 0, "{s}");
    assert!(s["last_error"].is_null(), "{s}");
    let out = b.run(&["sync", "now"]);
    assert_eq!(lines(&out)[0]["pulled"], 3001);
}
