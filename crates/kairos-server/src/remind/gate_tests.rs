use super::*;

const L: Limits = Limits {
    failures: 2,
    cooloff: Duration::from_secs(30),
    per_minute: 0,
};

#[test]
fn a_circuit_opens_after_k_failures_then_lets_one_probe_through() {
    let mut g = Gate::default();
    assert_eq!(g.admit("h:80", 0), Admit::Go);
    g.record(&L, "h:80", true, 0);
    assert_eq!(g.admit("h:80", 1), Admit::Go);
    g.record(&L, "h:80", true, 1);
    assert_eq!(g.open(), ["h:80"]);
    assert_eq!(g.admit("h:80", 2), Admit::CircuitOpen(30_001));
    assert_eq!(g.admit("other:80", 2), Admit::Go);
    assert_eq!(g.admit("h:80", 30_001), Admit::Probe);
    assert_eq!(
        g.admit("h:80", 30_002),
        Admit::CircuitOpen(30_002 + PROBE_WAIT_MS)
    );
    g.record(&L, "h:80", true, 30_010);
    assert_eq!(g.admit("h:80", 30_011), Admit::CircuitOpen(60_010));
    assert_eq!(g.admit("h:80", 60_010), Admit::Probe);
    // A probe that never reports stops holding the others back.
    assert_eq!(g.admit("h:80", 60_010 + PROBE_STALE_MS), Admit::Probe);
    g.record(&L, "h:80", false, 60_020 + PROBE_STALE_MS);
    assert!(g.open().is_empty());
    assert_eq!(g.admit("h:80", 60_021), Admit::Go);
}

#[test]
fn a_batch_starts_from_the_stored_row_and_another_instances_probe_holds_it_back() {
    let mut g = Gate::default();
    let open = Breaker {
        open_until: 1_000,
        ..Breaker::default()
    };
    g.seed("h:80", &open, false, 500);
    assert_eq!(g.admit("h:80", 500), Admit::CircuitOpen(1_000));
    // Half-open, the probe another instance's: wait.
    g.seed("h:80", &open, false, 1_000);
    assert_eq!(
        g.admit("h:80", 1_000),
        Admit::CircuitOpen(1_000 + PROBE_WAIT_MS)
    );
    // Half-open, the probe ours: the first delivery is it.
    g.seed("h:80", &open, true, 1_000);
    assert_eq!(g.admit("h:80", 1_000), Admit::Probe);
    assert_eq!(
        g.admit("h:80", 1_001),
        Admit::CircuitOpen(1_001 + PROBE_WAIT_MS)
    );
    // Stored failures count towards opening.
    let one = Breaker {
        failures: 1,
        ..Breaker::default()
    };
    g.seed("h:80", &one, false, 2_000);
    assert_eq!(g.admit("h:80", 2_000), Admit::Go);
    g.record(&L, "h:80", true, 2_000);
    assert_eq!(
        g.changes(),
        [(
            "h:80".to_owned(),
            Tally {
                opened: Some(32_000),
                ..Tally::default()
            }
        )]
    );
}

#[test]
fn a_batchs_tally_merges_into_the_row_as_stored_then() {
    let now = 10_000;
    let fails = |n| Tally {
        fails: n,
        ..Tally::default()
    };
    // Another instance's failure plus ours: K reached, opened.
    let one = Breaker {
        failures: 1,
        ..Breaker::default()
    };
    let b = merge(&one, &fails(1), &L, "me", now);
    assert_eq!((b.failures, b.open_until), (0, 40_000));
    // Below K: counted.
    assert_eq!(merge(&Breaker::default(), &fails(1), &L, "me", now), one);
    // An answer: the count starts again, the circuit closes, any probe ends.
    let probing = Breaker {
        open_until: 5_000,
        probe_owner: Some("other".into()),
        probe_until: 65_000,
        ..Breaker::default()
    };
    let answered = Tally {
        answered: true,
        ..Tally::default()
    };
    assert_eq!(
        merge(&probing, &answered, &L, "me", now),
        Breaker::default()
    );
    // Opened here while another instance opened it later: the later wins.
    let later = Breaker {
        open_until: 50_000,
        ..Breaker::default()
    };
    let opened = Tally {
        opened: Some(40_000),
        ..Tally::default()
    };
    assert_eq!(merge(&later, &opened, &L, "me", now).open_until, 50_000);
    // Our probe, nothing sent (every delivery over its rate): released;
    // another's is kept.
    let ours = Breaker {
        probe_owner: Some("me".into()),
        ..probing.clone()
    };
    let released = merge(&ours, &Tally::default(), &L, "me", now);
    assert_eq!((released.probe_owner, released.open_until), (None, 5_000));
    assert_eq!(merge(&probing, &Tally::default(), &L, "me", now), probing);
}

#[test]
fn destinations_are_hosts_and_the_relay() {
    assert_eq!(destination("webhook", "https://x.org/a?b"), "x.org:443");
    assert_eq!(
        destination("webhook", "http://127.0.0.1:81/h"),
        "127.0.0.1:81"
    );
    assert_eq!(destination("email", "a@b.c"), "smtp");
}
