//! Two engines on one file: the guarded transition lets exactly one of them
//! claim each instance.

use std::sync::{Arc, Barrier};

use kairos_store::{NewInstance, State, Store};

use crate::support::{inst, store_with_calendar, t, temp_db};

#[test]
fn two_stores_racing_for_the_same_instances_each_win_once() {
    let (_dir, path) = temp_db();
    let (mut store, cal) = store_with_calendar(&path);
    let n = 300;
    let batch: Vec<NewInstance> = (0..n)
        .map(|i| inst(cal, "e", &format!("o{i:03}"), t(1)))
        .collect();
    store.insert_instances(&batch, t(0)).unwrap();
    let keys: Arc<Vec<String>> = Arc::new(batch.into_iter().map(|i| i.key).collect());

    let barrier = Arc::new(Barrier::new(2));
    let racers: Vec<_> = ["engine-a", "engine-b"]
        .into_iter()
        .map(|name| {
            let (path, keys, barrier) = (path.clone(), Arc::clone(&keys), Arc::clone(&barrier));
            std::thread::spawn(move || {
                let mut store = Store::open(&path).unwrap();
                barrier.wait();
                let mut won = Vec::new();
                for key in keys.iter() {
                    let claimed = store
                        .transition(key, &[State::Pending], State::Firing, name, t(1))
                        .unwrap();
                    if claimed {
                        won.push(key.clone());
                    }
                }
                won
            })
        })
        .collect();
    let wins: Vec<Vec<String>> = racers.into_iter().map(|h| h.join().unwrap()).collect();

    assert_eq!(
        wins[0].len() + wins[1].len(),
        n,
        "every instance claimed exactly once"
    );
    assert!(
        wins[0].iter().all(|k| !wins[1].contains(k)),
        "no instance claimed twice"
    );
    assert_eq!(store.counters().unwrap()[&State::Firing], n as u64);
    for key in keys.iter() {
        let claims: Vec<_> = store
            .audit_of(key)
            .unwrap()
            .into_iter()
            .filter(|a| a.to == Some(State::Firing))
            .collect();
        assert_eq!(claims.len(), 1, "{key}: {claims:?}");
        let winner = if wins[0].contains(key) {
            "engine-a"
        } else {
            "engine-b"
        };
        assert_eq!(claims[0].reason, winner);
        assert_eq!(store.get(key).unwrap().unwrap().attempts, 1);
    }
}
