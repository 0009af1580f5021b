//! The merge rules: each rule on its own, then convergence under any order
//! with repeats, and compaction keeping exactly what decides the state.

use kairos_proto::{
    AckChange, AckState, Body, Effective, Op, Replica, Stored, Verdict, lww, survivors,
};
use proptest::prelude::*;

use crate::support::{A, B, at, dismiss, history, hlc, op, snooze};

#[test]
fn lww_applies_newer_ignores_older_and_replays_change_nothing() {
    let old = hlc(10, 0, A);
    let new = hlc(10, 0, B);
    assert_eq!(lww(None, &old), Verdict::Apply);
    assert_eq!(lww(Some(&old), &new), Verdict::Apply);
    assert_eq!(
        lww(Some(&new), &old),
        Verdict::Stale {
            winner: new.clone()
        }
    );
    assert_eq!(lww(Some(&new), &new), Verdict::Same);
}

fn put(n: u64, ms: u64, dev: &str, name: &str) -> Op {
    op(
        n,
        hlc(ms, 0, dev),
        Body::CalendarPut {
            calendar: "c".into(),
            name: name.into(),
            color: None,
        },
    )
}

fn delete(n: u64, ms: u64, dev: &str) -> Op {
    op(
        n,
        hlc(ms, 0, dev),
        Body::CalendarDelete {
            calendar: "c".into(),
        },
    )
}

#[test]
fn a_tombstone_beats_an_older_put_in_both_orders() {
    let (p, d) = (put(1, 10, A, "x"), delete(1, 20, B));
    for order in [[&p, &d], [&d, &p]] {
        let mut r = Replica::default();
        order.iter().for_each(|o| {
            r.apply(o);
        });
        assert_eq!(r.registers["calendar/c"], d);
    }
}

#[test]
fn a_newer_put_revives_after_a_tombstone_in_both_orders() {
    let (d, p) = (delete(1, 10, B), put(1, 20, A, "back"));
    for order in [[&d, &p], [&p, &d]] {
        let mut r = Replica::default();
        order.iter().for_each(|o| {
            r.apply(o);
        });
        assert_eq!(r.registers["calendar/c"], p);
    }
}

#[test]
fn dismissal_is_absorbing_even_against_a_newer_snooze() {
    let mut s = AckState::default();
    assert_eq!(
        s.apply(&op(1, hlc(10, 0, A), dismiss("k"))),
        AckChange::Dismissed
    );
    assert_eq!(
        s.apply(&op(1, hlc(99, 0, B), snooze("k", 60))),
        AckChange::Recorded
    );
    assert_eq!(s.effective(), Effective::Dismissed);
}

#[test]
fn the_snooze_with_the_greatest_stamp_wins_and_an_older_one_is_ignored() {
    let mut s = AckState::default();
    assert_eq!(
        s.apply(&op(1, hlc(20, 0, A), snooze("k", 600))),
        AckChange::Snoozed(at(600))
    );
    assert_eq!(
        s.apply(&op(1, hlc(10, 0, B), snooze("k", 900))),
        AckChange::Unchanged
    );
    assert_eq!(s.effective(), Effective::Snoozed(at(600)));
    assert_eq!(
        s.apply(&op(2, hlc(20, 1, B), snooze("k", 300))),
        AckChange::Snoozed(at(300))
    );
    assert_eq!(s.effective(), Effective::Snoozed(at(300)));
}

#[test]
fn replaying_an_ack_changes_nothing() {
    let d = op(1, hlc(10, 0, A), dismiss("k"));
    let z = op(2, hlc(11, 0, A), snooze("k", 60));
    let mut s = AckState::default();
    s.apply(&z);
    s.apply(&d);
    let before = s.clone();
    assert_eq!(s.apply(&d), AckChange::Unchanged);
    assert_eq!(s.apply(&z), AckChange::Unchanged);
    assert_eq!(s, before);
}

#[test]
fn an_earlier_dismissal_arriving_later_is_recorded_not_announced() {
    let mut s = AckState::default();
    assert_eq!(
        s.apply(&op(1, hlc(20, 0, A), dismiss("k"))),
        AckChange::Dismissed
    );
    assert_eq!(
        s.apply(&op(1, hlc(10, 0, B), dismiss("k"))),
        AckChange::Recorded
    );
    assert_eq!(s.dismissed, Some(hlc(10, 0, B)));
}

#[test]
fn an_open_reminder_is_open() {
    assert_eq!(AckState::default().effective(), Effective::Open);
}

fn replay(ops: &[Op], order: &[usize]) -> Replica {
    let mut r = Replica::default();
    for &i in order {
        r.apply(&ops[i]);
    }
    r
}

/// Every op at least once, some twice, in an order given by `keys`.
fn shuffled(len: usize, keys: &[u32], dups: &[usize]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).chain(dups.iter().map(|d| d % len)).collect();
    let mut keyed: Vec<(u32, usize)> = order
        .drain(..)
        .enumerate()
        .map(|(i, o)| (keys.get(i).copied().unwrap_or(0), o))
        .collect();
    keyed.sort();
    keyed.into_iter().map(|(_, o)| o).collect()
}

proptest! {
    #[test]
    fn three_replicas_in_different_orders_with_repeats_converge(
        ops in history(),
        orders in proptest::collection::vec(
            (proptest::collection::vec(any::<u32>(), 80), proptest::collection::vec(any::<usize>(), 0..20)),
            3,
        ),
    ) {
        let states: Vec<Replica> = orders
            .iter()
            .map(|(keys, dups)| replay(&ops, &shuffled(ops.len(), keys, dups)))
            .collect();
        prop_assert_eq!(&states[0], &states[1]);
        prop_assert_eq!(&states[1], &states[2]);
    }

    #[test]
    fn the_survivors_of_compaction_give_the_same_state(ops in history()) {
        let entities: Vec<String> = ops.iter().map(Op::entity).collect();
        let keep = survivors(ops.iter().zip(&entities).enumerate().map(|(i, (o, e))| Stored {
            seq: i as u64 + 1,
            entity: e,
            hlc: &o.hlc,
            effect: o.body.effect(),
        }));
        let all = replay(&ops, &(0..ops.len()).collect::<Vec<_>>());
        let kept: Vec<usize> = keep.iter().map(|s| *s as usize - 1).collect();
        prop_assert_eq!(replay(&ops, &kept), all);
    }
}
