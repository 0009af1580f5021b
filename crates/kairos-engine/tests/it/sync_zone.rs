//! A device tells the account the zone it reads floating times in
//! (`account.zone`, for the server's reminders): after joining, and again
//! only when that zone changes; another device's zone changes nothing here.

use std::sync::Arc;

use chrono::Duration;
use kairos_engine::clock::ManualClock;
use kairos_engine::engine::{Config, Engine, FLOATING_ZONE};
use kairos_engine::sync::apply::apply_remote;
use kairos_proto::{Body, Op};

use crate::support::now;
use crate::sync::{device, drain};

/// The zones among `ops`' `account.zone` ops.
fn zones(ops: &[Op]) -> Vec<&str> {
    ops.iter()
        .filter_map(|op| match &op.body {
            Body::AccountZone { zone } => Some(zone.as_str()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_device_tells_its_zone_after_joining_and_again_only_when_it_changes() {
    let dir = tempfile::tempdir().expect("tmp");
    let config = Config {
        floating: chrono_tz::Asia::Tokyo,
        horizon: Duration::hours(72),
        ..Config::default()
    };
    let clock = Arc::new(ManualClock::new(now()));
    let mut a = Engine::new(device(dir.path(), "a"), clock, Vec::new(), config);

    a.materialise().expect("materialise");
    assert_eq!(
        zones(&drain(a.store())),
        ["Asia/Tokyo"],
        "the engine's zone"
    );
    a.materialise().expect("materialise");
    assert!(drain(a.store()).is_empty(), "told once");

    // The desktop app moves floating times to its display zone.
    a.store()
        .meta_set(FLOATING_ZONE, "Europe/Berlin")
        .expect("meta");
    a.materialise().expect("materialise");
    let told = drain(a.store());
    assert_eq!(zones(&told), ["Europe/Berlin"]);

    // Another device takes it as a register and does not answer with its own.
    let mut b = device(dir.path(), "b");
    let r = apply_remote(
        &mut b,
        &told,
        None,
        now(),
        Duration::hours(72),
        chrono_tz::UTC,
    )
    .expect("apply");
    assert_eq!(r.applied, 1);
    assert!(drain(&mut b).is_empty());

    // Joining again (another account) tells the zone again.
    let id = kairos_engine::sync::identity(a.store())
        .expect("id")
        .expect("joined");
    kairos_engine::sync::join(a.store(), &id, now()).expect("join");
    drain(a.store());
    a.materialise().expect("materialise");
    assert_eq!(zones(&drain(a.store())), ["Europe/Berlin"]);
}
