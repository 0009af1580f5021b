//! Ops as a device makes them, for the tests to push.

use kairos_proto::Op;

/// A device's ops: numbered from 1, stamped by its own clock.
pub struct Maker {
    clock: kairos_proto::HlcClock,
    n: u64,
}

impl Maker {
    pub fn new(device: &str) -> Self {
        Self {
            clock: kairos_proto::HlcClock::new(device, None),
            n: 0,
        }
    }

    pub fn op(&mut self, body: kairos_proto::Body) -> Op {
        self.n += 1;
        Op::new(self.n, self.clock.issue(1_764_864_000_000 + self.n), body)
    }

    pub fn dismiss(&mut self, key: &str) -> Op {
        self.op(kairos_proto::Body::ReminderDismiss { key: key.into() })
    }

    /// Snoozes `key` until `until` (whole seconds, as devices do).
    pub fn snooze(&mut self, key: &str, until: chrono::DateTime<chrono::Utc>) -> Op {
        self.op(kairos_proto::Body::ReminderSnooze {
            key: key.into(),
            until,
        })
    }

    pub fn calendar(&mut self, uid: &str, name: &str) -> Op {
        self.op(kairos_proto::Body::CalendarPut {
            calendar: uid.into(),
            name: name.into(),
            color: None,
        })
    }
}
