//! The PostgreSQL writer's round trips (`store/pg/batch.rs`), in either run
//! of the suite: the store talks to PostgreSQL through a proxy of the
//! test's own that holds every answer back for a fixed delay, so that a
//! push's time counts the group's round trips.

use std::time::{Duration, Instant};

use kairos_server::Store;
use kairos_server::store::{Auth, Database};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, UnixStream};

use crate::pg;
use crate::pg_ingest::{auth, ops, seqs};

/// How long the proxy holds each answer back.
const DELAY: Duration = Duration::from_millis(100);

/// A TCP proxy to the test cluster's socket: what the client sends goes
/// through at once, what PostgreSQL answers `DELAY` later (each chunk
/// `DELAY` after it came, not after the one before: a latency, not a
/// throttle). Its URL names the same database as `url`.
async fn delaying_proxy(url: &str) -> String {
    let (rest, socket_dir) = url.split_once("?host=").unwrap();
    let name = rest.rsplit('/').next().unwrap().to_owned();
    let socket = format!("{socket_dir}/.s.PGSQL.5432");
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            // Else an answer in several chunks waits on the client's
            // delayed ACK (Nagle): 40 ms more than the delay.
            client.set_nodelay(true).unwrap();
            let server = UnixStream::connect(&socket).await.unwrap();
            let (mut client_rx, mut client_tx) = client.into_split();
            let (mut server_rx, mut server_tx) = server.into_split();
            tokio::spawn(async move {
                let _ = tokio::io::copy(&mut client_rx, &mut server_tx).await;
            });
            let (held_tx, mut held_rx) = tokio::sync::mpsc::unbounded_channel();
            tokio::spawn(async move {
                let mut buf = vec![0; 1 << 16];
                while let Ok(n @ 1..) = server_rx.read(&mut buf).await {
                    let due = tokio::time::Instant::now() + DELAY;
                    if held_tx.send((due, buf[..n].to_vec())).is_err() {
                        break;
                    }
                }
            });
            tokio::spawn(async move {
                while let Some((due, bytes)) = held_rx.recv().await {
                    tokio::time::sleep_until(due).await;
                    if client_tx.write_all(&bytes).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    format!("postgres://kairos@127.0.0.1:{port}/{name}")
}

/// The fastest of three pushes of one new op each, from `first`: its
/// time in round trips of `DELAY`.
async fn round_trips(store: &Store, a: &Auth, first: u64) -> f64 {
    let mut fastest = Duration::MAX;
    for n in first..first + 3 {
        let sent = Instant::now();
        let r = store.push(a, ops(a, n, n, "")).await.unwrap();
        fastest = fastest.min(sent.elapsed());
        assert_eq!(r.iter().map(|p| p.seq).collect::<Vec<_>>(), [n]);
    }
    fastest.as_secs_f64() / DELAY.as_secs_f64()
}

/// A group of one small push costs one round trip (`BEGIN`, the locks,
/// the write and `COMMIT` pipelined), and two while the groups look their
/// ids up (the locks and the lookup, then the writes and `COMMIT`); seven
/// before either.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_group_of_pushes_costs_one_round_trip_two_with_the_lookup() {
    let url = pg::database().await;
    let db = Database::Postgres(url.clone());
    Store::invite_in(&db, "alice", Duration::from_secs(60))
        .await
        .unwrap();
    let proxied = Database::Postgres(delaying_proxy(&url).await);
    let store = Store::connect(&proxied, 10_000, false, Box::new(|_| {}))
        .await
        .unwrap();
    let alice = auth("alice");
    // The first push prepares the statements on the writer's connection.
    store.push(&alice, ops(&alice, 1, 1, "")).await.unwrap();
    let plain = round_trips(&store, &alice, 2).await;
    // An id stored before: the group fails without the lookup, and the
    // next groups look their ids up first (`writer.rs`).
    let again = store.push(&alice, ops(&alice, 4, 4, "")).await.unwrap();
    assert_eq!(again[0].seq, 4);
    let looked_up = round_trips(&store, &alice, 5).await;
    // Seen with --nocapture: 7.1 and 7.1 before the pipelining.
    eprintln!("round trips a push: {plain:.2}, with the lookup {looked_up:.2}");
    assert!((1.0..1.7).contains(&plain), "{plain:.2} round trips");
    assert!(
        (2.0..2.7).contains(&looked_up),
        "{looked_up:.2} round trips"
    );
    let stored = store.ops_after("alice", 0, 100, 1 << 20).await.unwrap();
    assert_eq!(
        stored.iter().map(|o| o.seq).collect::<Vec<_>>(),
        (1..=7).collect::<Vec<_>>()
    );
    store.close().await;
    pg::drop_database(&url).await;
}

/// A push of more ops than one `INSERT` takes goes in by `COPY` in the
/// group's own transaction, and again with ids stored before: each id
/// once, with its first seq.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_push_goes_in_by_copy_and_again_with_its_ids_known() {
    let url = pg::database().await;
    let db = Database::Postgres(url.clone());
    Store::invite_in(&db, "alice", Duration::from_secs(60))
        .await
        .unwrap();
    let store = Store::connect(&db, 10_000, false, Box::new(|_| {}))
        .await
        .unwrap();
    let alice = auth("alice");
    let first = store.push(&alice, ops(&alice, 1, 200, "")).await.unwrap();
    assert_eq!(seqs(&first), (1..=200).collect::<Vec<_>>());
    let again = store.push(&alice, ops(&alice, 151, 300, "")).await.unwrap();
    assert_eq!(seqs(&again), (151..=300).collect::<Vec<_>>());
    let stored = store.ops_after("alice", 0, 1000, 1 << 24).await.unwrap();
    assert_eq!(
        stored.iter().map(|o| o.seq).collect::<Vec<_>>(),
        (1..=300).collect::<Vec<_>>()
    );
    assert!(
        stored
            .iter()
            .all(|o| o.op.id == format!("{}:{}", alice.device, o.seq))
    );
    store.close().await;
    pg::drop_database(&url).await;
}
