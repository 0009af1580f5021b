//! Acknowledgements as the server follows them (issue #21 §2): a dismissal
//! cancels a reminder's fallback, a snooze moves it. The person saw the
//! reminder and asked for it back at `until`; if no device acknowledges
//! the return N minutes after `until`, the fallback goes out then. (Before
//! this, a snooze counted as a dismissal: a pill snoozed on a laptop that
//! was then shut was never sent anywhere.)
//!
//! The merge is kairos-proto's [`AckState`], the devices' own rules: a
//! dismissal is absorbing, the snooze with the greatest stamp wins. This
//! module is pure; `ack_store` reads and writes the rows.

use chrono::DateTime;
use kairos_proto::{AckChange, AckState, Body, Hlc, Op};

/// One key's acknowledgements as the store keeps them (`remind_ack`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Acked {
    /// Dismissed on some device (rows from before snoozes were followed
    /// are all dismissed: that is what they meant then).
    pub dismissed: bool,
    /// The winning snooze: its stamp (as stored) and its end (ms).
    pub snooze: Option<(String, i64)>,
}

/// What an acknowledgement does to the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Effect {
    /// Cancel the pending fallbacks (all but "always").
    Dismissed,
    /// Move the pending fallbacks (all but "always") to N after this (ms).
    Snoozed(i64),
    /// Nothing to do (a replay, an older snooze, anything after a dismissal).
    Nothing,
}

/// The reminder key of an acknowledgement op; `None` for other ops.
pub(crate) fn key(op: &Op) -> Option<&str> {
    match &op.body {
        Body::ReminderDismiss { key } | Body::ReminderSnooze { key, .. } => Some(key),
        _ => None,
    }
}

/// Merges `op` into the stored `row` of its key: the new row and what it
/// does. A stored stamp that does not parse loses to any incoming snooze.
pub(crate) fn merge(row: Option<&Acked>, op: &Op) -> (Acked, Effect) {
    let row = row.cloned().unwrap_or_default();
    let mut state = AckState {
        // Only "dismissed or not" is kept: any stamp makes a dismissal
        // absorbing, and nothing else reads it.
        dismissed: row.dismissed.then(|| op.hlc.clone()),
        snooze: row.snooze.as_ref().and_then(|(hlc, until)| {
            Some((
                hlc.parse::<Hlc>().ok()?,
                DateTime::from_timestamp_millis(*until)?,
            ))
        }),
    };
    let effect = match state.apply(op) {
        AckChange::Dismissed => Effect::Dismissed,
        AckChange::Snoozed(until) => Effect::Snoozed(until.timestamp_millis()),
        AckChange::Recorded | AckChange::Unchanged => Effect::Nothing,
    };
    let new = Acked {
        dismissed: state.dismissed.is_some(),
        snooze: state
            .snooze
            .map(|(hlc, until)| (hlc.to_string(), until.timestamp_millis())),
    };
    (new, effect)
}

/// When a fallback `after_ms` of an instance triggered at `trigger_ms`
/// falls due: after the winning snooze's end when the instance is snoozed
/// and not dismissed (never for an "always" fallback, which does not wait
/// for anyone), else after the trigger.
pub(crate) fn due(trigger_ms: i64, acked: Option<&Acked>, after_ms: i64, always: bool) -> i64 {
    let from = match acked {
        Some(Acked {
            dismissed: false,
            snooze: Some((_, until)),
        }) if !always => *until,
        _ => trigger_ms,
    };
    from.saturating_add(after_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(ms: u64, device: &str, body: Body) -> Op {
        let hlc = Hlc {
            ms,
            counter: 0,
            device: device.into(),
        };
        Op::new(ms, hlc, body)
    }

    fn snooze(ms: u64, until_ms: i64) -> Op {
        let until = DateTime::from_timestamp_millis(until_ms).unwrap_or_default();
        op(
            ms,
            "d_00000000000000d1",
            Body::ReminderSnooze {
                key: "k".into(),
                until,
            },
        )
    }

    fn dismiss(ms: u64) -> Op {
        op(
            ms,
            "d_00000000000000d2",
            Body::ReminderDismiss { key: "k".into() },
        )
    }

    #[test]
    fn a_snooze_moves_the_later_snooze_wins_and_a_dismissal_is_absorbing() {
        let (row, e) = merge(None, &snooze(10, 5_000));
        assert_eq!(e, Effect::Snoozed(5_000));
        assert_eq!(due(1_000, Some(&row), 300, false), 5_300);
        assert_eq!(
            due(1_000, Some(&row), 300, true),
            1_300,
            "always: not moved"
        );

        let (row2, e) = merge(Some(&row), &snooze(5, 9_000));
        assert_eq!((e, &row2), (Effect::Nothing, &row), "an older stamp loses");
        let (row, e) = merge(Some(&row), &snooze(20, 9_000));
        assert_eq!(e, Effect::Snoozed(9_000));

        let (row, e) = merge(Some(&row), &dismiss(30));
        assert_eq!(e, Effect::Dismissed);
        assert_eq!(due(1_000, Some(&row), 300, false), 1_300);
        let (row, e) = merge(Some(&row), &snooze(40, 20_000));
        assert_eq!(
            e,
            Effect::Nothing,
            "after a dismissal a snooze changes nothing"
        );
        assert!(row.dismissed);
        assert_eq!(merge(Some(&row), &dismiss(50)).1, Effect::Nothing);
    }

    #[test]
    fn a_row_from_before_snoozes_were_followed_stays_dismissed() {
        let old = Acked {
            dismissed: true,
            snooze: None,
        };
        assert_eq!(merge(Some(&old), &snooze(10, 5_000)).1, Effect::Nothing);
        assert_eq!(due(1_000, Some(&old), 0, false), 1_000);
    }

    #[test]
    fn a_stored_stamp_that_does_not_parse_loses_to_an_incoming_snooze() {
        let bad = Acked {
            dismissed: false,
            snooze: Some(("garbage".into(), 5_000)),
        };
        assert_eq!(
            merge(Some(&bad), &snooze(1, 7_000)).1,
            Effect::Snoozed(7_000)
        );
    }
}
