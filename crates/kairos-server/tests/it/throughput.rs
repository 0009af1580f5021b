//! A quick measurement, not a pass/fail check of the machine: 1,000 small
//! pushes a second (ten devices at 100 a second each: one device may send
//! at most 200 messages a second) for three seconds, each timed from its
//! send until an eleventh device receives it live. Run it on a release
//! build: `cargo test --release -p kairos-server -- --ignored --nocapture push_to_delivery`.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use kairos_proto::{ClientMsg, ServerMsg};

use crate::support::{Client, Maker, Server};

const DEVICES: usize = 10;
const N: usize = 3_000;

async fn pusher(id: String, mut a: Client) -> HashMap<String, Instant> {
    let mut m = Maker::new(&id);
    let ops: Vec<_> = (0..N / DEVICES)
        .map(|i| m.dismiss(&format!("k{i}")))
        .collect();
    let mut tick = tokio::time::interval(Duration::from_millis(10));
    let mut sent = HashMap::new();
    for op in ops {
        tick.tick().await;
        sent.insert(op.id.clone(), Instant::now());
        a.send(&ClientMsg::Push { ops: vec![op] }).await;
    }
    let mut acked = 0;
    while acked < N / DEVICES {
        if let ServerMsg::Pushed { results } = a.recv().await {
            acked += results.len();
        }
    }
    sent
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement; run by hand"]
async fn push_to_delivery_at_1000_pushes_per_second() {
    let server = Server::start(&[]).await;
    let (_, b_token) = server.device("alice", "desktop").await;
    let mut b = server.connect(&b_token).await;
    b.hello(0).await;
    let mut devices = Vec::new();
    for d in 0..DEVICES {
        let (id, token) = server.device("alice", &format!("pusher {d}")).await;
        let mut a = server.connect(&token).await;
        a.hello(0).await;
        devices.push((id, a));
    }
    let receiver = tokio::spawn(async move {
        let mut at = HashMap::new();
        while at.len() < N {
            if let ServerMsg::Ops { ops, .. } = b.recv().await {
                for s in ops {
                    at.insert(s.op.id, Instant::now());
                }
            }
        }
        at
    });
    let pushers: Vec<_> = devices
        .into_iter()
        .map(|(id, a)| tokio::spawn(pusher(id, a)))
        .collect();
    let mut sent = HashMap::new();
    for p in pushers {
        match p.await {
            Ok(s) => sent.extend(s),
            Err(e) => {
                let log = server.log();
                let notes: Vec<&str> = log
                    .lines()
                    .filter(|l| l.contains("session end") || l.contains("ERROR"))
                    .collect();
                panic!("{e}\n{}", notes.join("\n"));
            }
        }
    }
    let got = receiver.await.unwrap();
    let mut lat: Vec<Duration> = sent
        .iter()
        .map(|(id, t)| got[id].duration_since(*t))
        .collect();
    lat.sort();
    let p = |q: f64| lat[((lat.len() as f64 * q) as usize).min(lat.len() - 1)];
    println!(
        "push→delivery over {N} pushes: p50 {:?}, p99 {:?}, max {:?}",
        p(0.5),
        p(0.99),
        p(1.0)
    );
}
