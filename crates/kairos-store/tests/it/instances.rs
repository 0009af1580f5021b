//! Scheduling, the due queue, guarded transitions and re-computation.

use kairos_store::{ErrorKind, NewInstance, State, StoreError};

use crate::support::{inst, raw, store_with_calendar, t, temp_db};

const P: &[State] = &[State::Pending];

#[test]
fn insert_instances_is_idempotent() {
    let (_dir, path) = temp_db();
    let (mut store, cal) = store_with_calendar(&path);
    let batch: Vec<NewInstance> = (0..3)
        .map(|i| inst(cal, "e", &format!("o{i}"), t(10 * i)))
        .collect();
    assert_eq!(store.insert_instances(&batch, t(0)).unwrap(), 3);

    let mut again = batch.clone();
    again.push(inst(cal, "e", "o3", t(30)));
    // Even with a different trigger, a known key is left exactly as it is.
    again[0].trigger_at = t(99);
    assert_eq!(store.insert_instances(&again, t(1)).unwrap(), 1);
    assert_eq!(store.counters().unwrap()[&State::Pending], 4);
    assert_eq!(store.get(&batch[0].key).unwrap().unwrap().trigger_at, t(0));
    for i in &again {
        let trail = store.audit_of(&i.key).unwrap();
        assert_eq!(
            trail.len(),
            1,
            "one 'scheduled' row per instance: {trail:?}"
        );
        assert_eq!((trail[0].from, trail[0].to), (None, Some(State::Pending)));
    }
}

#[test]
fn a_bad_payload_is_an_error_not_a_silent_skip() {
    let (_dir, path) = temp_db();
    let (mut store, cal) = store_with_calendar(&path);
    let mut bad = inst(cal, "e", "o1", t(10));
    bad.payload = "not json".to_owned();
    let err = store.insert_instances(&[bad], t(0)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Other, "{err}");
    assert!(matches!(err, StoreError::Constraint { .. }), "{err}");
    assert!(err.to_string().contains("not JSON"), "{err}");
    assert_eq!(store.counters().unwrap()[&State::Pending], 0);
}

#[test]
fn due_and_earliest_pending_come_in_trigger_then_key_order() {
    let (_dir, path) = temp_db();
    let (mut store, cal) = store_with_calendar(&path);
    assert_eq!(store.earliest_pending().unwrap(), None);
    let batch = [
        inst(cal, "c", "o", t(30)),
        inst(cal, "b", "o", t(10)),
        inst(cal, "a", "o", t(10)),
        inst(cal, "d", "o", t(20)),
        inst(cal, "z", "o", t(5)),
    ];
    store.insert_instances(&batch, t(0)).unwrap();
    // z is not pending any more: it must not be due nor earliest.
    assert!(
        store
            .transition(&batch[4].key, P, State::Firing, "due", t(5))
            .unwrap()
    );

    assert_eq!(
        store.earliest_pending().unwrap(),
        Some(("work/a/o/#0".to_owned(), t(10)))
    );
    let due: Vec<String> = store
        .due(t(20), 10)
        .unwrap()
        .into_iter()
        .map(|i| i.key)
        .collect();
    assert_eq!(due, ["work/a/o/#0", "work/b/o/#0", "work/d/o/#0"]);
    assert_eq!(store.due(t(20), 1).unwrap().len(), 1, "limit honoured");
    let firing: Vec<_> = store.in_state(State::Firing, 10).unwrap();
    assert_eq!(firing.len(), 1);
    assert_eq!(firing[0].key, batch[4].key);
    assert_eq!(store.in_state(State::Pending, 10).unwrap().len(), 4);
    assert!(store.due(t(9), 10).unwrap().is_empty());
}

#[test]
fn due_and_earliest_pending_are_index_lookups() {
    let (_dir, path) = temp_db();
    drop(store_with_calendar(&path));
    let conn = raw(&path);
    for sql in [
        "SELECT key, trigger_at FROM instances WHERE state = 'pending' \
         ORDER BY trigger_at, key LIMIT 1",
        "SELECT * FROM instances WHERE state = 'pending' AND trigger_at <= 5 \
         ORDER BY trigger_at, key LIMIT 10",
        "SELECT * FROM instances WHERE state = 'firing' ORDER BY trigger_at, key LIMIT 10",
        // The store names the partial index of failed instances (0003).
        "SELECT * FROM instances INDEXED BY instances_retry \
         WHERE state = 'failed' AND next_attempt_at <= 5 \
         ORDER BY next_attempt_at, key LIMIT 10",
    ] {
        let plan: Vec<String> = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap()
            .query_map([], |r| r.get::<_, String>(3))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let plan = plan.join("; ");
        assert!(
            plan.contains("SEARCH instances USING")
                && (plan.contains("INDEX instances_by_state")
                    || plan.contains("INDEX instances_retry")),
            "{sql}: {plan}"
        );
        assert!(!plan.contains("TEMP B-TREE"), "{sql} sorts: {plan}");
    }
}

#[test]
fn a_transition_is_guarded_and_audited() {
    let (_dir, path) = temp_db();
    let (mut store, cal) = store_with_calendar(&path);
    let i = inst(cal, "e", "o1", t(10));
    store
        .insert_instances(std::slice::from_ref(&i), t(0))
        .unwrap();

    assert!(
        store
            .transition(&i.key, P, State::Firing, "due", t(10))
            .unwrap()
    );
    assert!(
        !store
            .transition(&i.key, P, State::Firing, "due again", t(10))
            .unwrap()
    );
    assert!(
        !store
            .transition(&i.key, &[], State::Firing, "no guard", t(10))
            .unwrap()
    );
    assert!(
        !store
            .transition("no/such/key", P, State::Firing, "?", t(10))
            .unwrap()
    );
    let shown = [State::Firing, State::Delivered];
    assert!(
        store
            .transition(&i.key, &shown, State::Delivered, "shown", t(11))
            .unwrap()
    );
    assert!(
        store
            .transition(&i.key, &shown, State::Acknowledged, "dismissed", t(12))
            .unwrap()
    );

    let got = store.get(&i.key).unwrap().unwrap();
    assert_eq!(
        (got.state, got.attempts, got.updated_at),
        (State::Acknowledged, 1, t(12))
    );
    let trail: Vec<_> = store
        .audit_of(&i.key)
        .unwrap()
        .into_iter()
        .map(|a| (a.from, a.to, a.reason, a.at))
        .collect();
    assert_eq!(
        trail,
        [
            (
                None,
                Some(State::Pending),
                "scheduled (rule version 1)".to_owned(),
                t(0)
            ),
            (
                Some(State::Pending),
                Some(State::Firing),
                "due".to_owned(),
                t(10)
            ),
            (
                Some(State::Firing),
                Some(State::Delivered),
                "shown".to_owned(),
                t(11)
            ),
            (
                Some(State::Delivered),
                Some(State::Acknowledged),
                "dismissed".to_owned(),
                t(12)
            ),
        ]
    );
    let since: Vec<_> = store
        .audit_since(t(11), 10)
        .unwrap()
        .into_iter()
        .map(|a| a.at)
        .collect();
    assert_eq!(since, [t(11), t(12)]);
}

#[test]
fn failed_instances_come_back_when_their_retry_is_due() {
    let (_dir, path) = temp_db();
    let (mut store, cal) = store_with_calendar(&path);
    let i = inst(cal, "e", "o1", t(10));
    store
        .insert_instances(std::slice::from_ref(&i), t(0))
        .unwrap();
    store
        .write(|tx| {
            tx.transition(&i.key, P, State::Firing, "due", t(10))?;
            tx.transition(&i.key, &[State::Firing], State::Failed, "timeout", t(10))?;
            tx.set_next_attempt(&i.key, Some(t(11)))
        })
        .unwrap();
    assert_eq!(
        store.earliest_retry().unwrap(),
        Some((i.key.clone(), t(11)))
    );
    assert!(store.retries_due(t(10), 10).unwrap().is_empty());
    assert_eq!(store.retries_due(t(11), 10).unwrap()[0].key, i.key);
    assert!(store.earliest_pending().unwrap().is_none());

    assert!(
        store
            .transition(&i.key, &[State::Failed], State::Firing, "retry", t(11))
            .unwrap()
    );
    let got = store.get(&i.key).unwrap().unwrap();
    assert_eq!(
        (got.attempts, got.next_attempt_at),
        (2, None),
        "retry counted, schedule cleared"
    );
    assert!(store.earliest_retry().unwrap().is_none());
}

#[test]
fn recomputation_removes_only_pending_instances() {
    let (_dir, path) = temp_db();
    let (mut store, cal) = store_with_calendar(&path);
    let v1 = [
        inst(cal, "e", "delivered", t(10)),
        inst(cal, "e", "pending", t(20)),
        inst(cal, "e", "failed", t(30)),
        inst(cal, "other", "pending", t(20)),
    ];
    store.insert_instances(&v1, t(0)).unwrap();
    let mut v2_pending = inst(cal, "e", "new", t(40));
    v2_pending.rule_version = 2;
    store
        .insert_instances(std::slice::from_ref(&v2_pending), t(0))
        .unwrap();
    store
        .write(|tx| {
            tx.transition(&v1[0].key, P, State::Firing, "due", t(10))?;
            tx.transition(
                &v1[0].key,
                &[State::Firing],
                State::Delivered,
                "shown",
                t(10),
            )?;
            tx.transition(&v1[2].key, P, State::Firing, "due", t(30))?;
            tx.transition(
                &v1[2].key,
                &[State::Firing],
                State::Failed,
                "timeout",
                t(30),
            )
        })
        .unwrap();

    // The event was edited: rule version 2. Only its v1 pending instance goes.
    let removed = store
        .delete_pending_for_event(cal, "e", Some(2), "event edited (rule version 2)", t(35))
        .unwrap();
    assert_eq!(removed, 1);
    let states: Vec<_> = store
        .instances_of_event(cal, "e")
        .unwrap()
        .into_iter()
        .map(|i| (i.key, i.state))
        .collect();
    assert_eq!(
        states,
        [
            (v1[0].key.clone(), State::Delivered),
            (v1[2].key.clone(), State::Failed),
            (v2_pending.key.clone(), State::Pending),
        ]
    );
    assert!(
        store.get(&v1[3].key).unwrap().is_some(),
        "other events untouched"
    );
    let last = store.audit_of(&v1[1].key).unwrap().pop().unwrap();
    assert_eq!((last.from, last.to), (Some(State::Pending), None));
    assert_eq!(last.reason, "event edited (rule version 2)");

    // Re-inserting the recomputed set: the delivered key is not new, so it
    // can never be sent again; the removed one comes back pending.
    let mut recomputed = vec![v1[0].clone(), v1[1].clone()];
    for i in &mut recomputed {
        i.rule_version = 2;
    }
    assert_eq!(store.insert_instances(&recomputed, t(36)).unwrap(), 1);
    assert_eq!(
        store.get(&v1[0].key).unwrap().unwrap().state,
        State::Delivered
    );

    // The event was deleted: every pending instance of it goes.
    assert_eq!(
        store
            .delete_pending_for_event(cal, "e", None, "event deleted", t(37))
            .unwrap(),
        2
    );
    let c = store.counters().unwrap();
    assert_eq!(
        (c[&State::Pending], c[&State::Delivered], c[&State::Failed]),
        (1, 1, 1)
    );
    assert_eq!(
        c.len(),
        State::ALL.len(),
        "every state is counted, zero or not"
    );
}
