//! The advisory single-writer lease, between two stores on one file.

use chrono::TimeDelta;
use kairos_store::{ErrorKind, Store, StoreError};

use crate::support::{t, temp_db};

#[test]
fn a_second_owner_is_refused_while_the_lease_is_valid_and_allowed_after() {
    let (_dir, path) = temp_db();
    let mut a = Store::open(&path).unwrap();
    let mut b = Store::open(&path).unwrap();
    let ttl = TimeDelta::minutes(1);

    let lease = a.try_acquire_lease("daemon-a", t(0), ttl).unwrap();
    assert_eq!((lease.owner.as_str(), lease.until), ("daemon-a", t(1)));
    assert_eq!(b.lease().unwrap(), Some(lease));

    let err = b.try_acquire_lease("daemon-b", t(0), ttl).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::LeaseHeld, "{err}");
    assert!(!err.is_retryable());
    assert!(matches!(&err, StoreError::LeaseHeld { owner, until, .. }
        if owner == "daemon-a" && *until == t(1)));
    assert!(err.to_string().contains("daemon-a"), "{err}");

    // Renewing (or re-acquiring) moves the expiry; b is still refused.
    assert_eq!(
        a.renew_lease("daemon-a", t(0) + TimeDelta::seconds(50), ttl)
            .unwrap()
            .until,
        t(0) + TimeDelta::seconds(110)
    );
    assert!(b.try_acquire_lease("daemon-b", t(1), ttl).is_err());
    assert!(
        !b.release_lease("daemon-b").unwrap(),
        "b cannot release a's lease"
    );

    // a stops renewing (crashed); once expired, b takes over.
    let lease = b.try_acquire_lease("daemon-b", t(2), ttl).unwrap();
    assert_eq!(lease.owner, "daemon-b");
    let err = a.renew_lease("daemon-a", t(2), ttl).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::LeaseHeld, "{err}");
    assert!(matches!(err, StoreError::LeaseLost { .. }), "{err}");
    assert!(a.try_acquire_lease("daemon-a", t(2), ttl).is_err());

    assert!(b.release_lease("daemon-b").unwrap());
    assert_eq!(a.lease().unwrap(), None);
    assert!(
        b.renew_lease("daemon-b", t(2), ttl).is_err(),
        "released means lost"
    );
    assert!(a.try_acquire_lease("daemon-a", t(2), ttl).is_ok());
}
