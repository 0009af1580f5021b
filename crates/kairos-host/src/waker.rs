//! [`Waker`]: what tells the host's loops to look again.

use std::sync::Arc;

use kairos_engine::engine::{EngineEvent, Notice, NoticeSender};
use tokio::sync::Notify;

/// What wakes the engine (it re-plans) and the sync connection (it pushes
/// the outbox). Cheap to clone; made before the host starts.
#[derive(Clone, Default)]
pub struct Waker {
    pub(crate) changed: Arc<Notify>,
    pub(crate) outbox: Arc<Notify>,
    /// The subscriptions' loop looks again (a new subscription).
    pub(crate) feeds: Arc<Notify>,
    /// The database joined or left a sync account (the live connection
    /// starts or stops).
    pub(crate) account: Arc<Notify>,
    /// The CalDAV loop looks whether a change made here waits to be pushed.
    pub(crate) caldav: Arc<Notify>,
}

impl Waker {
    /// The database was changed by this process (an edit, an import, a
    /// dismissal): re-plan and push now.
    pub fn wake(&self) {
        self.changed.notify_one();
        self.outbox.notify_one();
        self.feeds.notify_one();
        self.caldav.notify_one();
    }

    /// This process joined or left a sync account on the database: the
    /// host starts or stops its live connection (no restart needed).
    pub fn account_changed(&self) {
        self.account.notify_one();
    }

    /// The database was changed by someone else: [`Waker::wake`], and tell
    /// subscribers ([`EngineEvent::Changed`]).
    pub(crate) fn changed_elsewhere(&self, notices: &NoticeSender) {
        let _ = notices.send(Notice::Announce(EngineEvent::Changed));
        self.wake();
    }
}
