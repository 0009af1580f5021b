//! The editor's sync history: an edit made here that lost to another
//! device's concurrent, later edit is listed with both devices.

use chrono::Duration;
use kairos_engine::sync::apply::apply_remote;
use kairos_proto::{Body, Hlc, Op};

use super::{app, cal, create, draft, t};

const HERE: &str = "d_aaaaaaaaaaaaaaaa";
const OTHER: &str = "d_bbbbbbbbbbbbbbbb";

#[test]
fn an_edit_that_lost_to_another_devices_later_edit_is_in_the_events_history() {
    let now = "2026-03-09T08:00:00Z";
    let (mut a, _d, _p) = app("UTC", now);
    a.store()
        .meta_set(kairos_engine::sync::keys::DEVICE, HERE)
        .expect("pair");
    let c = cal(&a);
    let ev = create(
        &mut a,
        draft(c, "Dentist", "2026-03-10T09:00", "2026-03-10T10:00", "UTC"),
        now,
    );
    let quiet = create(
        &mut a,
        draft(c, "Gym", "2026-03-11T09:00", "2026-03-11T10:00", "UTC"),
        now,
    );
    assert!(a.get_event(&ev).expect("get").history.is_empty());

    // The other device edited the same event without having seen this
    // device's version (no base), a minute later.
    let cal_uid = a.store().calendars().expect("cals")[0].uid.clone();
    let later = t(now) + Duration::minutes(1);
    let hlc: Hlc = format!("{:016}.00000.{OTHER}", later.timestamp_millis())
        .parse()
        .expect("hlc");
    let ics = format!(
        "BEGIN:VEVENT\r\nUID:{}\r\nDTSTAMP:20260309T080100Z\r\nDTSTART:20260310T100000Z\r\n\
         DTEND:20260310T110000Z\r\nSUMMARY:Dentist (moved)\r\nEND:VEVENT\r\n",
        ev.uid
    );
    let op = Op::new(
        1,
        hlc,
        Body::SeriesPut {
            calendar: cal_uid,
            uid: ev.uid.clone(),
            ics,
        },
    );
    apply_remote(
        a.store(),
        &[op],
        Some(1),
        later,
        Duration::hours(48),
        chrono_tz::UTC,
    )
    .expect("apply");

    let d = a.get_event(&ev).expect("get");
    assert_eq!(d.draft.title, "Dentist (moved)", "the later edit won");
    assert_eq!(d.history.len(), 1, "{:?}", d.history);
    let h = &d.history[0];
    assert_eq!((h.lost.as_str(), h.won.as_str()), (HERE, OTHER));
    assert!(h.lost_here && !h.won_here);
    assert_eq!(h.at, "2026-03-09T08:01:00Z");
    assert!(
        a.get_event(&quiet).expect("get").history.is_empty(),
        "another event's history is its own"
    );
}
