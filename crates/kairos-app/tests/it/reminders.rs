//! The reminder window: what the engine fired shows up; snooze and dismiss
//! take it away; missed ones are marked; pause and quiet hours.

use std::sync::{Arc, Mutex};

use chrono::Duration;
use kairos_app::App;
use kairos_app::api::{DeleteEvent, ErrorKind, Pause, QuietHours, Scope, SnoozeRequest};
use kairos_engine::channel::StdoutChannel;
use kairos_engine::clock::{Clock, ManualClock};
use kairos_engine::engine::{Config, Engine};
use kairos_store::{State, Store};

use super::{app, cal, create, draft, t};

/// Runs a real engine over the same file at `now` and fires what is due.
fn fire(path: &std::path::Path, now: &str) -> usize {
    let clock = Arc::new(ManualClock::new(t(now)));
    let out = Arc::new(Mutex::new(Vec::<u8>::new()));
    struct W(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for W {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("lock").extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let ch = StdoutChannel::to(Box::new(W(Arc::clone(&out))));
    let mut e = Engine::new(
        Store::open(path).expect("store"),
        clock.clone() as Arc<dyn Clock>,
        vec![Box::new(ch)],
        Config::default(),
    );
    e.materialise().expect("materialise");
    // Timers on: the engine bounds each delivery by its channel's timeout.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("rt");
    rt.block_on(async {
        let mut n = 0;
        loop {
            let k = e.fire_due().await.expect("fire");
            if k == 0 {
                break n;
            }
            n += k;
        }
    })
}

fn with_event(now: &str) -> (App, tempfile::TempDir, std::path::PathBuf) {
    let (mut a, d, p) = app("Europe/Berlin", now);
    let c = cal(&a);
    create(
        &mut a,
        draft(
            c,
            "Dentist",
            "2026-03-10T09:00",
            "2026-03-10T10:00",
            "Europe/Berlin",
        ),
        now,
    );
    (a, d, p)
}

#[test]
fn a_fired_reminder_leaves_the_window_when_its_event_is_deleted() {
    let (mut a, _d, p) = with_event("2026-03-10T07:00:00Z");
    assert_eq!(fire(&p, "2026-03-10T07:45:00Z"), 1);
    let shown = a.shown_reminders(t("2026-03-10T07:45:01Z")).expect("shown");
    assert_eq!(shown.len(), 1);
    let req = DeleteEvent {
        event: shown[0].event.clone(),
        scope: Scope::All,
    };
    a.delete_event(&req, t("2026-03-10T07:46:00Z"))
        .expect("delete");
    assert!(
        a.shown_reminders(t("2026-03-10T07:46:01Z"))
            .expect("shown")
            .is_empty(),
        "a deleted event's reminder is not listed"
    );
}

#[test]
fn fired_reminder_is_listed_then_dismissed() {
    let (mut a, _d, p) = with_event("2026-03-10T07:00:00Z");
    assert!(
        a.shown_reminders(t("2026-03-10T07:40:00Z"))
            .expect("shown")
            .is_empty()
    );
    // 15 min before 09:00 Berlin (08:00Z) is 07:45Z.
    assert_eq!(fire(&p, "2026-03-10T07:45:00Z"), 1);
    let shown = a.shown_reminders(t("2026-03-10T07:45:01Z")).expect("shown");
    assert_eq!(shown.len(), 1);
    assert_eq!(
        (shown[0].title.as_str(), shown[0].missed),
        ("Dentist", false)
    );
    assert_eq!(shown[0].trigger, "2026-03-10T07:45:00Z");
    a.dismiss(&shown[0].key, t("2026-03-10T07:46:00Z"))
        .expect("dismiss");
    assert!(
        a.shown_reminders(t("2026-03-10T07:46:01Z"))
            .expect("shown")
            .is_empty()
    );
    // A second dismissal says why it did nothing.
    let e = a
        .dismiss(&shown[0].key, t("2026-03-10T07:47:00Z"))
        .expect_err("twice");
    assert!(e.message.contains("acknowledged"), "{}", e.message);
}

#[test]
fn dismiss_here_only_stays_on_this_device_no_outbox_op() {
    let (mut a, _d, p) = app("Europe/Berlin", "2026-03-10T07:00:00Z");
    // Paired: every synced change records an op (the device id is what
    // `sync::record` looks for).
    a.store()
        .meta_set(kairos_engine::sync::keys::DEVICE, "d_laptop")
        .expect("pair");
    let c = cal(&a);
    for (title, start) in [
        ("Dentist", "2026-03-10T09:00"),
        ("Call", "2026-03-10T09:30"),
    ] {
        create(
            &mut a,
            draft(c, title, start, "2026-03-10T10:00", "Europe/Berlin"),
            "2026-03-10T07:00:00Z",
        );
    }
    assert_eq!(fire(&p, "2026-03-10T08:15:00Z"), 2);
    let shown = a.shown_reminders(t("2026-03-10T08:15:01Z")).expect("shown");
    let key = |title: &str| {
        shown
            .iter()
            .find(|r| r.title == title)
            .map(|r| r.key.clone())
            .expect("row")
    };
    let (here, everywhere) = (key("Dentist"), key("Call"));
    let outbox = outbox_len(&mut a);

    a.dismiss_here(&here, t("2026-03-10T08:16:00Z"))
        .expect("dismiss here");
    assert_eq!(outbox_len(&mut a), outbox, "no op");
    assert_eq!(
        a.store().read(|r| r.ack(&here)).expect("ack"),
        None,
        "no ack record"
    );
    let i = a.store().get(&here).expect("get").expect("instance");
    assert_eq!(i.state, State::Acknowledged);
    let left = a.shown_reminders(t("2026-03-10T08:16:01Z")).expect("shown");
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].key, everywhere);
    // A second time says why it did nothing.
    let e = a
        .dismiss_here(&here, t("2026-03-10T08:17:00Z"))
        .expect_err("twice");
    assert!(e.message.contains("acknowledged"), "{}", e.message);
    assert_eq!(
        a.dismiss_here("nope", t("2026-03-10T08:17:00Z"))
            .expect_err("unknown")
            .kind,
        ErrorKind::NotFound
    );

    // The plain Dismiss of the other one does go to the other devices.
    a.dismiss(&everywhere, t("2026-03-10T08:18:00Z"))
        .expect("dismiss");
    assert_eq!(outbox_len(&mut a), outbox + 1);
}

#[test]
fn snooze_fires_again_after_its_length_and_not_before() {
    let (mut a, _d, p) = with_event("2026-03-10T07:00:00Z");
    fire(&p, "2026-03-10T07:45:00Z");
    let key = a.shown_reminders(t("2026-03-10T07:45:01Z")).expect("shown")[0]
        .key
        .clone();
    a.snooze(
        &SnoozeRequest { key, minutes: 10 },
        t("2026-03-10T07:46:00Z"),
    )
    .expect("snooze");
    assert!(
        a.shown_reminders(t("2026-03-10T07:46:01Z"))
            .expect("shown")
            .is_empty()
    );
    assert_eq!(fire(&p, "2026-03-10T07:55:59Z"), 0);
    assert_eq!(fire(&p, "2026-03-10T07:56:00Z"), 1);
    assert_eq!(
        a.shown_reminders(t("2026-03-10T07:56:01Z"))
            .expect("shown")
            .len(),
        1
    );
    let bad = a.snooze(
        &SnoozeRequest {
            key: "nope".into(),
            minutes: 0,
        },
        t("2026-03-10T07:57:00Z"),
    );
    assert_eq!(bad.expect_err("0 min").kind, ErrorKind::Invalid);
}

#[test]
fn reminder_fired_after_downtime_is_marked_missed_and_dismiss_all_clears() {
    let (mut a, _d, p) = with_event("2026-03-10T07:00:00Z");
    let c = cal(&a);
    create(
        &mut a,
        draft(
            c,
            "Call",
            "2026-03-10T09:30",
            "2026-03-10T10:00",
            "Europe/Berlin",
        ),
        "2026-03-10T07:00:00Z",
    );
    // Nobody ran the engine until 10:00 Berlin.
    assert_eq!(fire(&p, "2026-03-10T09:00:00Z"), 2);
    let shown = a.shown_reminders(t("2026-03-10T09:00:01Z")).expect("shown");
    assert!(shown.iter().all(|r| r.missed), "{shown:?}");
    assert_eq!(a.dismiss_all(t("2026-03-10T09:01:00Z")).expect("all"), 2);
    assert!(
        a.shown_reminders(t("2026-03-10T09:01:01Z"))
            .expect("shown")
            .is_empty()
    );
}

#[test]
fn pause_and_quiet_hours_make_pop_ups_quiet() {
    let (mut a, _d, _) = app("Europe/Berlin", "2026-03-10T07:00:00Z");
    let now = t("2026-03-10T12:00:00Z");
    assert!(!a.is_quiet(now).expect("q"));
    let st = a.pause_reminders(Pause::Hour, now).expect("pause");
    assert_eq!(st.paused_until.as_deref(), Some("2026-03-10T13:00:00Z"));
    assert!(a.is_quiet(now + Duration::minutes(59)).expect("q"));
    assert!(!a.is_quiet(now + Duration::minutes(61)).expect("q"));
    let st = a.pause_reminders(Pause::UntilTomorrow, now).expect("pause");
    // 08:00 Berlin the next day.
    assert_eq!(st.paused_until.as_deref(), Some("2026-03-11T07:00:00Z"));
    a.pause_reminders(Pause::Off, now).expect("off");
    let mut s = a.get_settings().expect("s");
    s.quiet_hours = Some(QuietHours {
        start: "22:00".into(),
        end: "07:00".into(),
    });
    a.save_settings(s, t("2026-03-01T00:00:00Z")).expect("save");
    assert!(a.is_quiet(t("2026-03-10T22:30:00Z")).expect("q")); // 23:30 Berlin
    assert!(!a.is_quiet(t("2026-03-10T06:30:00Z")).expect("q")); // 07:30 Berlin
}

#[test]
fn status_lists_the_next_reminders() {
    let (a, _d, p) = with_event("2026-03-10T07:00:00Z");
    fire(&p, "2026-03-10T07:00:00Z");
    let st = a.app_status(t("2026-03-10T07:00:00Z")).expect("status");
    assert_eq!(st.next.len(), 1);
    assert_eq!(st.next[0].title, "Dentist");
    assert_eq!(st.next[0].trigger, "2026-03-10T07:45:00Z");
    assert_eq!(st.time_zone, "Europe/Berlin");
}

#[test]
fn an_escalating_reminder_is_one_row_and_dismissing_it_stops_the_repetitions() {
    let (mut a, dir, p) = app("UTC", "2026-06-01T08:00:00Z");
    let file = dir.path().join("e.ics");
    std::fs::write(
        &file,
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\nBEGIN:VEVENT\r\nUID:pill\r\n\
         SUMMARY:Pill\r\nDTSTART:20260601T090000Z\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\n\
         DESCRIPTION:x\r\nTRIGGER:PT0S\r\nX-KAIROS-ESCALATE:v=1;every=PT5M;max=3\r\n\
         END:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
    )
    .expect("write");
    a.import_ics(
        &kairos_app::api::ImportIcs {
            path: file.to_string_lossy().into_owned(),
            calendar: "Home".into(),
        },
        t("2026-06-01T08:00:00Z"),
    )
    .expect("import");
    assert_eq!(fire(&p, "2026-06-01T09:00:00Z"), 1);
    assert_eq!(fire(&p, "2026-06-01T09:05:00Z"), 1, "first repetition");
    let shown = a.shown_reminders(t("2026-06-01T09:05:01Z")).expect("shown");
    assert_eq!(shown.len(), 1, "one row: {shown:?}");
    assert!(shown[0].key.ends_with("~again@1"), "{}", shown[0].key);
    a.dismiss(&shown[0].key, t("2026-06-01T09:06:00Z"))
        .expect("dismiss");
    assert!(
        a.shown_reminders(t("2026-06-01T09:06:01Z"))
            .expect("shown")
            .is_empty(),
        "the base is acknowledged too"
    );
    assert_eq!(fire(&p, "2026-06-01T09:30:00Z"), 0, "no more repetitions");
}

fn outbox_len(a: &mut App) -> u64 {
    a.store().read(|r| r.outbox_len()).expect("outbox")
}
